// muxado frames (the agent's stream multiplexer): an 8-byte big-endian header, `len24 << 8 |
// type << 4 | flags` then a 31-bit stream id, and a body whose layout the type fixes. The facts
// come from ngrok's Rust crate (muxado/src/frame.rs, codec.rs, errors.rs); the checks are
// stricter than the crate's, because here the peer is not trusted: a frame that breaks a rule
// is refused whole, before its body is buffered when the header alone shows it.

export const HEADER_LENGTH = 8;
export const MAX_STREAM_ID = 0x7fffffff;
export const MAX_LENGTH = 0x00ffffff;
export const MAX_WINDOW_INCREMENT = 0x7fffffff;

export const FrameType = { rst: 0, data: 1, wndinc: 2, goaway: 3 } as const;
// The code's values (PROTOCOL.md's SYN 0x10 is wrong: it does not fit the 4-bit flags).
export const FLAG_FIN = 0x1;
export const FLAG_SYN = 0x2;

/** The error codes of RST and GOAWAY (errors.rs); other values are read as they come. */
export const ErrorCode = {
  none: 0x00,
  protocol: 0x01,
  internal: 0x02,
  flowControl: 0x03,
  streamClosed: 0x04,
  streamRefused: 0x05,
  streamCancelled: 0x06,
  streamReset: 0x07,
  frameSize: 0x08,
  acceptQueueFull: 0x09,
  enhanceYourCalm: 0x0a,
  remoteGoneAway: 0x0b,
  streamsExhausted: 0x0c,
  writeTimeout: 0x0d,
  sessionClosed: 0x0e,
  peerEof: 0x0f,
} as const;

export type Frame =
  | { type: 'data'; streamId: number; syn: boolean; fin: boolean; data: Buffer }
  | { type: 'rst'; streamId: number; errorCode: number }
  | { type: 'wndinc'; streamId: number; increment: number }
  | { type: 'goaway'; lastStreamId: number; errorCode: number; debugData: Buffer };

/** A rule of the protocol broken; `code` is the muxado error code a GOAWAY or RST would carry. */
export class MuxadoError extends Error {
  constructor(
    message: string,
    readonly code: number = ErrorCode.protocol,
  ) {
    super(message);
    this.name = 'MuxadoError';
  }
}

/** Whether `err` is a stream refused by the peer (RST with StreamRefused): what it was asked for is not there. */
export function isRefusal(err: unknown): boolean {
  return err instanceof MuxadoError && err.code === ErrorCode.streamRefused;
}

function header(length: number, type: number, flags: number, streamId: number): Buffer {
  const b = Buffer.alloc(HEADER_LENGTH);
  b.writeUInt32BE(((length << 8) | (type << 4) | flags) >>> 0, 0);
  b.writeUInt32BE(streamId, 4);
  return b;
}

function checkStreamId(streamId: number): void {
  if (!Number.isInteger(streamId) || streamId < 1 || streamId > MAX_STREAM_ID) {
    throw new RangeError(`muxado stream id must be 1..${MAX_STREAM_ID}, got ${streamId}`);
  }
}

function checkU32(name: string, value: number, max = 0xffffffff): void {
  if (!Number.isInteger(value) || value < 0 || value > max) throw new RangeError(`muxado ${name} must be 0..${max}`);
}

/**
 * The header of a DATA frame; the payload follows it on the wire unchanged (kept apart so that
 * stream data is never copied).
 */
export function encodeDataHeader(streamId: number, length: number, flags: { syn?: boolean; fin?: boolean }): Buffer {
  checkStreamId(streamId);
  checkU32('DATA length', length, MAX_LENGTH);
  return header(length, FrameType.data, (flags.syn ? FLAG_SYN : 0) | (flags.fin ? FLAG_FIN : 0), streamId);
}

export function encodeFrame(frame: Frame): Buffer {
  switch (frame.type) {
    case 'data':
      return Buffer.concat([encodeDataHeader(frame.streamId, frame.data.length, frame), frame.data]);
    case 'rst':
    case 'wndinc': {
      checkStreamId(frame.streamId);
      const value = frame.type === 'rst' ? frame.errorCode : frame.increment;
      checkU32(frame.type === 'rst' ? 'error code' : 'window increment', value, frame.type === 'rst' ? 0xffffffff : MAX_WINDOW_INCREMENT);
      const b = Buffer.alloc(HEADER_LENGTH + 4);
      header(4, FrameType[frame.type], 0, frame.streamId).copy(b);
      b.writeUInt32BE(value, HEADER_LENGTH);
      return b;
    }
    case 'goaway': {
      checkU32('last stream id', frame.lastStreamId, MAX_STREAM_ID);
      checkU32('error code', frame.errorCode);
      checkU32('GOAWAY length', 8 + frame.debugData.length, MAX_LENGTH);
      const body = Buffer.alloc(8);
      body.writeUInt32BE(frame.lastStreamId, 0);
      body.writeUInt32BE(frame.errorCode, 4);
      return Buffer.concat([header(8 + frame.debugData.length, FrameType.goaway, 0, 0), body, frame.debugData]);
    }
  }
}

export interface FrameDecoderOptions {
  /** The longest body accepted (DATA and GOAWAY); bounds what one frame can make us buffer. */
  maxFrameLength: number;
}

interface Header {
  length: number;
  type: number;
  flags: number;
  streamId: number;
}

/**
 * A streaming decoder: feed it the bytes as they arrive, in chunks of any size, and it returns
 * the whole frames they complete. It throws a MuxadoError on the first broken rule, and is
 * unusable afterwards (the session it serves ends).
 */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private pending: Header | undefined;

  constructor(private readonly options: FrameDecoderOptions) {}

  /** Bytes held for a frame not yet complete (at most a header plus maxFrameLength). */
  get bufferedBytes(): number {
    return this.buffered;
  }

  push(chunk: Buffer): Frame[] {
    if (chunk.length > 0) {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
    }
    const frames: Frame[] = [];
    for (;;) {
      if (!this.pending) {
        if (this.buffered < HEADER_LENGTH) break;
        this.pending = this.checkHeader(this.take(HEADER_LENGTH));
      }
      if (this.buffered < this.pending.length) break;
      const h = this.pending;
      this.pending = undefined;
      frames.push(bodyFrame(h, this.take(h.length)));
    }
    return frames;
  }

  private take(n: number): Buffer {
    if (n === 0) return Buffer.alloc(0);
    const first = this.chunks[0]!;
    let out: Buffer;
    if (first.length >= n) {
      out = first.subarray(0, n);
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
    } else {
      out = Buffer.allocUnsafe(n);
      let filled = 0;
      while (filled < n) {
        const c = this.chunks[0]!;
        const used = Math.min(c.length, n - filled);
        c.copy(out, filled, 0, used);
        filled += used;
        if (used === c.length) this.chunks.shift();
        else this.chunks[0] = c.subarray(used);
      }
    }
    this.buffered -= n;
    return out;
  }

  private checkHeader(b: Buffer): Header {
    const word = b.readUInt32BE(0);
    const length = word >>> 8;
    const type = (word >>> 4) & 0xf;
    const flags = word & 0xf;
    // The top bit of the stream id is reserved and ignored, as in the crate (StreamID::mask).
    const streamId = b.readUInt32BE(4) & MAX_STREAM_ID;
    const fail = (why: string, code: number = ErrorCode.protocol): never => {
      throw new MuxadoError(`malformed frame (type ${type}, stream ${streamId}, length ${length}): ${why}`, code);
    };
    switch (type) {
      case FrameType.data:
        if (streamId === 0) fail('DATA needs a non-zero stream id');
        if ((flags & ~(FLAG_FIN | FLAG_SYN)) !== 0) fail(`unknown flags 0x${flags.toString(16)}`);
        if (length > this.options.maxFrameLength) fail(`longer than ${this.options.maxFrameLength}`, ErrorCode.frameSize);
        break;
      case FrameType.rst:
      case FrameType.wndinc:
        if (streamId === 0) fail(`${type === FrameType.rst ? 'RST' : 'WNDINC'} needs a non-zero stream id`);
        if (flags !== 0) fail(`flags 0x${flags.toString(16)} on a frame that takes none`);
        if (length !== 4) fail('the body must be 4 bytes', ErrorCode.frameSize);
        break;
      case FrameType.goaway:
        if (streamId !== 0) fail('GOAWAY needs stream id 0');
        if (flags !== 0) fail(`flags 0x${flags.toString(16)} on a frame that takes none`);
        if (length < 8) fail('the body must be at least 8 bytes', ErrorCode.frameSize);
        if (length > this.options.maxFrameLength) fail(`longer than ${this.options.maxFrameLength}`, ErrorCode.frameSize);
        break;
      default:
        fail('unknown frame type');
    }
    return { length, type, flags, streamId };
  }
}

function bodyFrame(h: Header, body: Buffer): Frame {
  switch (h.type) {
    case FrameType.data:
      return {
        type: 'data',
        streamId: h.streamId,
        syn: (h.flags & FLAG_SYN) !== 0,
        fin: (h.flags & FLAG_FIN) !== 0,
        data: body,
      };
    case FrameType.rst:
      return { type: 'rst', streamId: h.streamId, errorCode: body.readUInt32BE(0) };
    case FrameType.wndinc:
      // Reserved top bit ignored, as in the crate (WndInc::mask).
      return { type: 'wndinc', streamId: h.streamId, increment: body.readUInt32BE(0) & MAX_WINDOW_INCREMENT };
    default:
      return {
        type: 'goaway',
        lastStreamId: body.readUInt32BE(0) & MAX_STREAM_ID,
        errorCode: body.readUInt32BE(4),
        debugData: body.subarray(8),
      };
  }
}
