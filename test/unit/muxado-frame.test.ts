// The muxado frame codec (src/lib/muxado/frame.ts): byte-exact frames (the Rust crate's codec
// round trip, and the frames the agent sends first), every header rule, and a decoder fed one
// byte at a time.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeFrame, ErrorCode, FrameDecoder, MuxadoError, type Frame } from '../../src/lib/muxado/frame.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const decodeAll = (bytes: Buffer, max = 256 * 1024): Frame[] => new FrameDecoder({ maxFrameLength: max }).push(bytes);

// Frame → its bytes. The first is the crate's codec.rs round trip ("Hello, world!" on stream 5).
const EXACT: [string, Frame, string][] = [
  [
    'DATA (codec.rs round_trip)',
    { type: 'data', streamId: 5, syn: false, fin: false, data: Buffer.from('Hello, world!') },
    '00000d10 00000005' + Buffer.from('Hello, world!').toString('hex'),
  ],
  [
    "DATA with SYN: the agent's heartbeat stream 3 opening with its type",
    { type: 'data', streamId: 3, syn: true, fin: false, data: hex('ffffffff') },
    '00000412 00000003 ffffffff',
  ],
  [
    'DATA with SYN: the server opening a Proxy stream (type 3)',
    { type: 'data', streamId: 2, syn: true, fin: false, data: hex('00000003') },
    '00000412 00000002 00000003',
  ],
  ['empty DATA with FIN (a half-close)', { type: 'data', streamId: 3, syn: false, fin: true, data: Buffer.alloc(0) }, '00000011 00000003'],
  ['DATA with SYN and FIN', { type: 'data', streamId: 7, syn: true, fin: true, data: hex('aa') }, '00000113 00000007 aa'],
  ['WNDINC', { type: 'wndinc', streamId: 2, increment: 13 }, '00000420 00000002 0000000d'],
  ['RST (flow control)', { type: 'rst', streamId: 7, errorCode: ErrorCode.flowControl }, '00000400 00000007 00000003'],
  [
    'GOAWAY with a message (as the crate sends on an invalid frame)',
    { type: 'goaway', lastStreamId: 5, errorCode: ErrorCode.protocol, debugData: Buffer.from('invalid frame') },
    '00001530 00000000 00000005 00000001' + Buffer.from('invalid frame').toString('hex'),
  ],
  ['GOAWAY with no message', { type: 'goaway', lastStreamId: 0, errorCode: ErrorCode.none, debugData: Buffer.alloc(0) }, '00000830 00000000 00000000 00000000'],
];

function refusal(bytes: Buffer, pattern: RegExp, max = 256 * 1024): MuxadoError {
  let caught: unknown;
  try {
    decodeAll(bytes, max);
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof MuxadoError, `expected a MuxadoError for ${bytes.toString('hex')}`);
  assert.match(caught.message, pattern);
  return caught;
}

describe('muxado frames', () => {
  for (const [name, frame, bytes] of EXACT) {
    it(`encodes and decodes byte for byte: ${name}`, () => {
      assert.equal(encodeFrame(frame).toString('hex'), hex(bytes).toString('hex'));
      assert.deepEqual(decodeAll(hex(bytes)), [frame]);
    });
  }

  it('decodes a run of frames fed one byte at a time, and in every split of two', () => {
    const all = Buffer.concat(EXACT.map(([, , b]) => hex(b)));
    const expected = EXACT.map(([, f]) => f);
    const decoder = new FrameDecoder({ maxFrameLength: 1024 });
    const oneByOne: Frame[] = [];
    for (const byte of all) oneByOne.push(...decoder.push(Buffer.from([byte])));
    assert.deepEqual(oneByOne, expected);
    assert.equal(decoder.bufferedBytes, 0);
    for (let cut = 0; cut <= all.length; cut++) {
      const d = new FrameDecoder({ maxFrameLength: 1024 });
      assert.deepEqual([...d.push(all.subarray(0, cut)), ...d.push(all.subarray(cut))], expected, `cut at ${cut}`);
    }
  });

  it('ignores the reserved top bit of stream ids and increments, as the crate does', () => {
    assert.deepEqual(decodeAll(hex('00000420 80000002 80000010')), [{ type: 'wndinc', streamId: 2, increment: 16 }]);
  });

  it('refuses every header that breaks a rule, with the code a GOAWAY would carry', () => {
    refusal(hex('00000040 00000001 00000000'), /unknown frame type/);
    refusal(hex('000000f0 00000001'), /unknown frame type/);
    refusal(hex('00000010 00000000'), /DATA needs a non-zero stream id/);
    refusal(hex('00000014 00000001'), /unknown flags 0x4/);
    refusal(hex('00000018 00000001'), /unknown flags 0x8/);
    refusal(hex('00000400 00000000 00000000'), /RST needs a non-zero stream id/);
    assert.equal(refusal(hex('00000500 00000001 0000000000'), /must be 4 bytes/).code, ErrorCode.frameSize);
    refusal(hex('00000300 00000001 000000'), /must be 4 bytes/);
    refusal(hex('00000401 00000001 00000000'), /flags 0x1 on a frame that takes none/);
    refusal(hex('00000420 00000000 00000001'), /WNDINC needs a non-zero stream id/);
    refusal(hex('00000522 00000001 0000000001'), /flags 0x2/);
    refusal(hex('00000830 00000001 00000000 00000000'), /GOAWAY needs stream id 0/);
    refusal(hex('00000730 00000000 00000000 000000'), /at least 8 bytes/);
    refusal(hex('00000831 00000000 00000000 00000000'), /flags 0x1/);
  });

  it('refuses an oversized frame from its header alone, before buffering the body', () => {
    const d = new FrameDecoder({ maxFrameLength: 1024 });
    assert.throws(() => d.push(hex('00040110 00000003')), /longer than 1024/);
    assert.throws(() => new FrameDecoder({ maxFrameLength: 1024 }).push(hex('ffffff30 00000000')), /longer than 1024/);
    assert.equal(refusal(hex('00040110 00000003'), /longer/, 1024).code, ErrorCode.frameSize);
  });

  it('refuses to encode what the wire cannot carry', () => {
    assert.throws(() => encodeFrame({ type: 'data', streamId: 0, syn: false, fin: false, data: Buffer.alloc(0) }), RangeError);
    assert.throws(() => encodeFrame({ type: 'wndinc', streamId: 0x80000000, increment: 1 }), RangeError);
    assert.throws(() => encodeFrame({ type: 'wndinc', streamId: 1, increment: 0x80000000 }), RangeError);
    assert.throws(() => encodeFrame({ type: 'rst', streamId: 1, errorCode: -1 }), RangeError);
    assert.throws(() => encodeFrame({ type: 'data', streamId: 1, syn: false, fin: false, data: Buffer.alloc(0x1000000) }), RangeError);
  });
});
