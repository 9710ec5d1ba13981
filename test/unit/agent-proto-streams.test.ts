// The start of the agent protocol's typed streams (src/lib/agent-proto/json.ts, streams.ts): the
// big-endian u32 type, a request's JSON that ends where its object closes (the Node SDK sends no
// FIN before reading the reply; the Go agent adds a newline), the proxied connection's header
// (u32 3, i64 little-endian length, JSON), the bounds, and that nothing but AgentProtoError is
// ever thrown, whatever the bytes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AgentProtoError, DEFAULT_LIMITS, JsonObjectReader, parseJsonObject } from '../../src/lib/agent-proto/json.js';
import { StreamType } from '../../src/lib/agent-proto/messages.js';
import {
  decodeProxyStreamHeader,
  encodeProxyStreamHeader,
  encodeStreamType,
  RequestStreamReader,
  type RequestStreamStart,
} from '../../src/lib/agent-proto/streams.js';

const refused = (problem: string, pattern?: RegExp) => (error: unknown) => {
  assert.ok(error instanceof AgentProtoError, `not an AgentProtoError: ${String(error)}`);
  assert.equal(error.problem, problem, error.message);
  if (pattern) assert.match(error.message, pattern);
  return true;
};

/** Pushes each chunk; the result of the one that completed, and how many chunks that took. */
function feed(reader: RequestStreamReader, chunks: Buffer[]): { start: RequestStreamStart | undefined; at: number } {
  for (let i = 0; i < chunks.length; i++) {
    const start = reader.push(chunks[i]!);
    if (start !== undefined) return { start, at: i };
  }
  return { start: undefined, at: -1 };
}

const bytesOf = (buffer: Buffer) => [...buffer].map((b) => Buffer.from([b]));

const UNBIND = Buffer.concat([Buffer.from('00000002', 'hex'), Buffer.from('{"Id":"tun_1"}')]);

describe('agent protocol: a request stream', () => {
  it('ends the request where its object closes, read byte by byte, with no FIN', () => {
    const reader = new RequestStreamReader();
    const { start, at } = feed(reader, bytesOf(UNBIND));
    assert.equal(at, UNBIND.length - 1);
    assert.deepEqual(start, { kind: 'request', request: { type: StreamType.unbind, message: { id: 'tun_1' } } });
    // FIN after the request, and the Go agent's newline, are fine.
    assert.equal(reader.push(Buffer.from('\n')), undefined);
    reader.end();
  });

  it('reads the type big-endian, as muxado writes it (put_u32)', () => {
    assert.deepEqual(encodeStreamType(StreamType.stopTunnel), Buffer.from('00000009', 'hex'));
    assert.deepEqual(encodeStreamType(StreamType.heartbeat), Buffer.from('ffffffff', 'hex'));
    const reader = new RequestStreamReader();
    const auth = Buffer.from('{"Version":["3","2"],"ClientId":"","Extra":{"AuthToken":"t"}}');
    const { start } = feed(reader, [Buffer.from('0000', 'hex'), Buffer.concat([Buffer.from('0000', 'hex'), auth.subarray(0, 10)]), auth.subarray(10)]);
    assert.equal(start?.kind === 'request' && start.request.type, StreamType.auth);
  });

  it('is not fooled by braces and escaped quotes inside strings', () => {
    const text = '{"Labels":{"a":"}\\"}{[","b\\\\":"]"},"Metadata":"\\u007d"}';
    const reader = new RequestStreamReader();
    const { start } = feed(reader, [encodeStreamType(StreamType.startTunnelWithLabel), ...bytesOf(Buffer.from(text))]);
    assert.ok(start?.kind === 'request' && start.request.type === StreamType.startTunnelWithLabel);
    assert.deepEqual({ ...start.request.message.labels }, { a: '}"}{[', 'b\\': ']' });
    assert.equal(start.request.message.metadata, '}');
  });

  it('hands a heartbeat stream back with the bytes after its type', () => {
    const reader = new RequestStreamReader();
    assert.deepEqual(reader.push(Buffer.from('ffffffff0000002a', 'hex')), { kind: 'heartbeat', rest: Buffer.from('0000002a', 'hex') });
    assert.throws(() => reader.push(Buffer.from('00', 'hex')), refused('trailing_data'));
  });

  it('refuses the types an agent may not open, at once', () => {
    for (const type of [3, 4, 5, 6, 8, 9, 10, 0x7fffffff]) {
      assert.throws(() => new RequestStreamReader().push(encodeStreamType(type)), refused('unknown_stream_type', new RegExp(`type ${type}`)));
    }
  });

  it('refuses a FIN before the request is complete, and a second message after it', () => {
    const early = new RequestStreamReader();
    early.push(Buffer.from('0000', 'hex'));
    assert.throws(() => early.end(), refused('truncated', /before its type/));
    const cut = new RequestStreamReader();
    cut.push(UNBIND.subarray(0, UNBIND.length - 1));
    assert.throws(() => cut.end(), refused('truncated', /Unbind: the stream ended inside the message/));
    assert.throws(() => new RequestStreamReader().push(Buffer.concat([UNBIND, Buffer.from('{"Id":"tun_2"}')])), refused('trailing_data'));
    const after = new RequestStreamReader();
    after.push(UNBIND);
    assert.throws(() => after.push(Buffer.from(' x')), refused('trailing_data'));
  });

  it('refuses what is not one JSON object: another value, a stray bracket, invalid JSON or UTF-8', () => {
    const request = (body: string | Buffer) => new RequestStreamReader().push(Buffer.concat([encodeStreamType(StreamType.unbind), Buffer.from(body)]));
    assert.throws(() => request('["Id"]'), refused('not_object'));
    assert.throws(() => request('"Id"'), refused('not_object'));
    assert.throws(() => request('{"Id":"a"]'), refused('invalid_json', /closes nothing/));
    assert.throws(() => request('{"Id":"a",}'), refused('invalid_json'));
    assert.throws(() => request('{"Id" "a"}'), refused('invalid_json'));
    assert.throws(() => request(Buffer.from('7b224964223a22ff227d', 'hex')), refused('not_utf8'));
    // A valid request with a field of the wrong type gets the message's own refusal.
    assert.throws(() => request('{"Id":1}'), refused('wrong_type', /Unbind: 'Id' must be a string/));
  });
});

describe('agent protocol: bounds', () => {
  it('refuses a message past its size before buffering more of it', () => {
    const limits = { ...DEFAULT_LIMITS, maxBytes: 64 };
    const reader = new JsonObjectReader('Bind', limits);
    assert.equal(reader.push(Buffer.from('{"Metadata":"')), undefined);
    assert.throws(() => reader.push(Buffer.alloc(100, 0x61)), refused('too_large', /Bind: more than 64 bytes/));
    // A message of exactly the limit is read.
    const exact = `{"Metadata":"${'a'.repeat(64 - 15)}"}`;
    assert.equal(exact.length, 64);
    assert.ok(new JsonObjectReader('Bind', limits).push(Buffer.from(exact)));
    // The default: 1 MiB, room for a traffic policy of 256 KiB escaped.
    const big = new JsonObjectReader('Bind');
    assert.throws(() => big.push(Buffer.concat([Buffer.from('{"a":"'), Buffer.alloc(1024 * 1024, 0x61)])), refused('too_large'));
  });

  it('refuses nesting past the depth while reading, so a megabyte of brackets costs one scan', () => {
    const started = performance.now();
    assert.throws(() => new JsonObjectReader('Bind').push(Buffer.alloc(1024 * 1024, '[').fill('{', 0, 1)), refused('too_deep', /deeper than 16 levels/));
    assert.ok(performance.now() - started < 1000);
    assert.ok(new JsonObjectReader('Bind').push(Buffer.from(`{"a":${'['.repeat(15)}${']'.repeat(15)}}`)));
    assert.throws(() => parseJsonObject(Buffer.from(`{"a":${'['.repeat(16)}${']'.repeat(16)}}`), 'Bind'), refused('too_deep'));
  });

  it('refuses objects of too many members and arrays of too many items, known fields or not', () => {
    const members = Object.fromEntries(Array.from({ length: 129 }, (_, i) => [`k${i}`, i]));
    assert.throws(() => parseJsonObject(Buffer.from(JSON.stringify({ Extra: members })), 'Auth'), refused('too_many_items', /129 members; at most 128/));
    assert.ok(parseJsonObject(Buffer.from(JSON.stringify({ Extra: { ...members, k128: undefined } })), 'Auth'));
    assert.throws(
      () => parseJsonObject(Buffer.from(JSON.stringify({ Bindings: Array(1025).fill('x') })), 'Bind'),
      refused('too_many_items', /1025 items; at most 1024/),
    );
  });
});

describe('agent protocol: the header of a proxied connection', () => {
  const header = { id: 'tun_1', clientAddr: '203.0.113.7:51234', proto: 'https', edgeType: '3' as const, passthroughTls: false };
  const json = '{"Id":"tun_1","ClientAddr":"203.0.113.7:51234","Proto":"https","EdgeType":"3","PassthroughTLS":false}';

  it('is u32 3 (big-endian), the i64 length little-endian, then the JSON, as ngrok-rust reads it', () => {
    const bytes = encodeProxyStreamHeader(header);
    assert.deepEqual(bytes.subarray(0, 12), Buffer.from('00000003' + '6500000000000000', 'hex'));
    assert.equal(bytes.subarray(12).toString(), json);
    assert.equal(json.length, 0x65);
    const payload = Buffer.from('GET / HTTP/1.1\r\n');
    assert.deepEqual(decodeProxyStreamHeader(Buffer.concat([bytes, payload])), { header, rest: payload });
  });

  it('the decoder refuses a wrong type, a bad length, a short or malformed header', () => {
    const bytes = encodeProxyStreamHeader(header);
    assert.throws(() => decodeProxyStreamHeader(Buffer.concat([Buffer.from('00000004', 'hex'), bytes.subarray(4)])), refused('unknown_stream_type'));
    const negative = Buffer.from(bytes);
    negative.writeBigInt64LE(-1n, 4);
    assert.throws(() => decodeProxyStreamHeader(negative), refused('bad_length'));
    assert.throws(() => decodeProxyStreamHeader(bytes.subarray(0, 40)), refused('truncated'));
    assert.throws(() => decodeProxyStreamHeader(bytes.subarray(0, 8)), refused('truncated'));
    const noAddr = Buffer.from('{"Id":"t","Proto":"tcp","EdgeType":"1","PassthroughTLS":false}');
    const head = Buffer.alloc(12);
    head.writeUInt32BE(3, 0);
    head.writeBigInt64LE(BigInt(noAddr.length), 4);
    assert.throws(() => decodeProxyStreamHeader(Buffer.concat([head, noAddr])), refused('missing_field', /'ClientAddr'/));
  });
});

describe('agent protocol: any bytes at all', () => {
  it('give a request or an AgentProtoError: never another exception', () => {
    // A small deterministic generator, so a failure can be replayed.
    let seed = 26;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const samples = [
      '{"Version":["3","2"],"ClientId":"","Extra":{"AuthToken":"t","HeartbeatInterval":1}}',
      '{"Id":"","Proto":"tcp","Opts":{"Addr":"","ProxyProto":0},"Extra":{"Bindings":["a"]}}',
      '{"Labels":{"a":"b"},"Metadata":"\\u0000"}',
    ];
    const alphabet = '{}[]":,\\ 0123456789.-eE+tfnulrsa\u00e9';
    const outcomes = { requests: 0, refusals: 0 };
    for (let i = 0; i < 3000; i++) {
      const type = [0, 1, 7, 2][i % 4]!;
      const text = [...samples[i % samples.length]!];
      for (let k = Math.floor(random() * 4); k >= 0; k--) {
        const at = Math.floor(random() * text.length);
        const what = random();
        if (what < 0.4) text.splice(at, 1);
        else if (what < 0.8) text.splice(at, 0, alphabet[Math.floor(random() * alphabet.length)]!);
        else text[at] = alphabet[Math.floor(random() * alphabet.length)]!;
      }
      const bytes = Buffer.concat([encodeStreamType(type), Buffer.from(text.join(''))]);
      const reader = new RequestStreamReader();
      try {
        const { start } = feed(reader, [bytes.subarray(0, 5), bytes.subarray(5)]);
        reader.end();
        assert.ok(start);
        outcomes.requests++;
      } catch (error) {
        assert.ok(error instanceof AgentProtoError, `${JSON.stringify(text.join(''))}: ${String(error)}`);
        outcomes.refusals++;
      }
    }
    // Both outcomes were exercised.
    assert.ok(outcomes.requests > 100 && outcomes.refusals > 100, JSON.stringify(outcomes));
  });
});
