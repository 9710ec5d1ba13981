// Typed streams and the heartbeat, over a muxado Session. A typed stream starts with its type
// as a big-endian u32 (the crate's typed.rs); the agent's messages (Auth, Bind, Proxy…) are
// told apart this way. The heartbeat (heartbeat.rs) is a stream of type 0xFFFFFFFF on which
// the side that opened it writes 4 random bytes every interval and the other side echoes them;
// the agent opens one first thing (its stream 3) and echoes ours, but it does not notice a
// dead session itself, so the server runs its own and ends a session whose echoes stop.
import { randomBytes } from 'node:crypto';
import { ErrorCode, MuxadoError } from './frame.js';
import type { MuxadoStream, Session } from './session.js';

export const HEARTBEAT_TYPE = 0xffffffff;

export function encodeStreamType(type: number): Buffer {
  if (!Number.isInteger(type) || type < 0 || type > 0xffffffff) throw new RangeError('a stream type is a u32');
  const b = Buffer.alloc(4);
  b.writeUInt32BE(type);
  return b;
}

/** Opens a stream and writes its type first (it goes out with the SYN). */
export function openTyped(session: Session, type: number): MuxadoStream {
  const stream = session.open();
  stream.write(encodeStreamType(type));
  return stream;
}

/**
 * Reads the 4-byte type of a stream the peer opened; what follows the type stays readable.
 * Rejects when the stream ends first or the type takes longer than `timeoutMs`.
 */
export function readStreamType(stream: MuxadoStream, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const done = (error: Error | null, type?: number): void => {
      clearTimeout(timer);
      stream.off('readable', onReadable);
      stream.off('end', onEnd);
      stream.off('error', onError);
      if (error) reject(error);
      else resolve(type!);
    };
    const onReadable = (): void => {
      // At the end read() hands over what is left, even under 4 bytes: the 'end' handler says so.
      const head = stream.read(4) as Buffer | null;
      if (head?.length === 4) done(null, head.readUInt32BE(0));
    };
    const onEnd = (): void => done(new MuxadoError(`stream ${stream.id} ended before its type`, ErrorCode.streamClosed));
    const onError = (err: Error): void => done(err);
    const timer = setTimeout(() => done(new MuxadoError(`stream ${stream.id} sent no type within ${timeoutMs} ms`, ErrorCode.writeTimeout)), timeoutMs);
    stream.on('readable', onReadable);
    stream.once('end', onEnd);
    stream.once('error', onError);
    onReadable();
  });
}

export interface TypedAcceptOptions {
  /** A stream whose type has not arrived by then is reset. */
  typeTimeoutMs?: number;
  onStream: (type: number, stream: MuxadoStream) => void;
}

/**
 * Accepts the peer's streams by type: heartbeat streams are echoed here, every other one is
 * handed to `onStream` once its type is read.
 */
export function acceptTyped(session: Session, options: TypedAcceptOptions): void {
  const typeTimeoutMs = options.typeTimeoutMs ?? 10_000;
  session.on('stream', (stream) => {
    stream.on('error', () => {}); // the session's own error event says why, once
    readStreamType(stream, typeTimeoutMs).then(
      (type) => {
        if (type === HEARTBEAT_TYPE) {
          stream.trickle();
          stream.pipe(stream); // echo, with backpressure
        } else options.onStream(type, stream);
      },
      () => stream.reset(ErrorCode.streamCancelled),
    );
  });
}

export interface HeartbeatOptions {
  /** How often a beat is sent (the crate's default: 10 s). */
  intervalMs: number;
  /** How long an echo may take before the peer is declared dead. */
  timeoutMs: number;
  /** Each echo's round trip, for metrics. */
  onBeat?: (latencyMs: number) => void;
  /**
   * Beat only when nothing has come from the peer for an interval: a peer heard from (its own
   * heartbeat, any frame) is alive, and one beat less is one write and one read less per session.
   */
  onlyWhenQuiet?: boolean;
}

export interface Heartbeat {
  stop(): void;
}

/**
 * Sends heartbeats on a stream of its own and destroys the session with a MuxadoError
 * (WriteTimeout) when an echo is late or wrong.
 */
export function startHeartbeat(session: Session, options: HeartbeatOptions): Heartbeat {
  const stream = openTyped(session, HEARTBEAT_TYPE);
  stream.trickle();
  stream.on('error', () => {}); // the session reports its end
  let expected: Buffer | undefined;
  let sentAt = 0;
  let deadline: NodeJS.Timeout | undefined;
  let stopped = false;
  const dead = (why: string): void => {
    stop();
    session.destroy(new MuxadoError(`heartbeat: ${why}`, ErrorCode.writeTimeout));
  };
  const beat = (): void => {
    if (stopped || expected) return;
    if (options.onlyWhenQuiet && session.quietForMs < options.intervalMs) return;
    expected = randomBytes(4);
    sentAt = performance.now();
    stream.write(expected);
    deadline = setTimeout(() => dead(`no echo within ${options.timeoutMs} ms`), options.timeoutMs);
  };
  stream.on('readable', () => {
    let echo: Buffer | null;
    while ((echo = stream.read(4) as Buffer | null) !== null) {
      if (!expected || !echo.equals(expected)) return dead('an echo that does not match the beat');
      clearTimeout(deadline);
      expected = undefined;
      options.onBeat?.(performance.now() - sentAt);
    }
  });
  stream.on('end', () => dead('the peer ended the heartbeat stream'));
  const ticker = setInterval(beat, options.intervalMs);
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    clearInterval(ticker);
    clearTimeout(deadline);
  };
  session.once('close', stop);
  beat();
  return { stop };
}
