// A muxado session over any Duplex (a TLS socket in production): streams opened by either side,
// each a Node Duplex with half-close (FIN), reset (RST) and flow control both ways. The agent
// enforces a 256 KiB window per stream and direction and resets a stream that overruns it, so
// writes wait for WNDINC; and what the agent sends is only acknowledged (WNDINC) as the
// application reads it, so a stalled reader stops its own stream and nothing else.
//
// A broken rule (malformed frame, DATA for a stream that never existed, a window overrun) ends
// this session only: a GOAWAY is sent, every stream is destroyed, and `error` is emitted (only
// when someone listens: a session never throws into the process) then `close`.
import { EventEmitter } from 'node:events';
import { Duplex } from 'node:stream';
import { encodeDataHeader, encodeFrame, ErrorCode, FrameDecoder, MAX_STREAM_ID, MuxadoError, type Frame } from './frame.js';

export const DEFAULT_WINDOW = 256 * 1024;

export interface SessionOptions {
  /** The server opens even stream ids, the client (the agent) odd ones from 3. */
  role: 'server' | 'client';
  /** The receive window of each stream and the send window assumed of the peer's. */
  windowSize?: number;
  /** The largest DATA payload sent in one frame. */
  maxDataFrame?: number;
  /** Streams open at once; a SYN beyond it is refused with RST. */
  maxStreams?: number;
  /**
   * Bytes queued on the transport past which we stop reading it until it drains: bounds what a
   * peer that does not read can make us buffer in replies (WNDINC, RST, heartbeat echoes).
   */
  maxPendingWrite?: number;
  /**
   * Answer a read that brought the peer's WNDINC and made us write nothing with a WNDINC of 0
   * for that stream (a no-op frame): see onTransportData. For peers that do not set
   * TCP_NODELAY, as ngrok's agent SDK does not.
   */
  acknowledgeWindowUpdates?: boolean;
}

export interface GoAway {
  errorCode: number;
  lastStreamId: number;
  message: string;
}

export interface SessionEvents {
  stream: [stream: MuxadoStream];
  goaway: [goaway: GoAway];
  error: [error: MuxadoError];
  close: [error: MuxadoError | undefined];
}

export class Session extends EventEmitter<SessionEvents> {
  readonly role: 'server' | 'client';
  readonly windowSize: number;
  readonly maxDataFrame: number;
  private readonly maxStreams: number;
  private readonly maxPendingWrite: number;
  private readonly acknowledgeWindowUpdates: boolean;
  /** Frames written so far: tells whether handling a read wrote anything. */
  private framesWritten = 0;
  private readonly decoder: FrameDecoder;
  private readonly streams = new Map<number, MuxadoStream>();
  private lastLocalId: number;
  private lastRemoteId: number;
  private drainWaiters: (() => void)[] = [];
  private closedWith: MuxadoError | null | undefined = undefined; // undefined: open
  /** When the peer's bytes last arrived (performance.now()). */
  private heardAt = performance.now();

  constructor(
    private readonly transport: Duplex,
    options: SessionOptions,
  ) {
    super();
    this.role = options.role;
    this.windowSize = options.windowSize ?? DEFAULT_WINDOW;
    this.maxDataFrame = Math.min(options.maxDataFrame ?? 16 * 1024, this.windowSize);
    this.maxStreams = options.maxStreams ?? 512;
    this.maxPendingWrite = options.maxPendingWrite ?? 1024 * 1024;
    this.acknowledgeWindowUpdates = options.acknowledgeWindowUpdates ?? false;
    this.decoder = new FrameDecoder({ maxFrameLength: this.windowSize });
    // As in the crate: the client's first stream is 3 (1 is never used), the server's 2.
    this.lastLocalId = this.role === 'client' ? 1 : 0;
    this.lastRemoteId = this.role === 'client' ? 0 : 1;

    transport.on('data', (chunk: Buffer) => this.onTransportData(chunk));
    transport.on('drain', () => this.onDrain());
    // An agent that hangs up is an ordinary end (`close` says so), not an `error`.
    const hungUp = (why: string) => () => this.terminate(new MuxadoError(why, ErrorCode.peerEof), false);
    transport.on('end', hungUp('the peer closed the connection'));
    transport.on('close', hungUp('the connection closed'));
    transport.on('error', (err: Error) => this.terminate(new MuxadoError(`transport error: ${err.message}`, ErrorCode.sessionClosed), true));
  }

  get closed(): boolean {
    return this.closedWith !== undefined;
  }

  /** How long nothing has come from the peer, in milliseconds. */
  get quietForMs(): number {
    return performance.now() - this.heardAt;
  }

  /** Streams currently open. */
  get streamCount(): number {
    return this.streams.size;
  }

  /** Opens a stream; the peer learns of it (SYN) with its first frame, as with the crate. */
  open(): MuxadoStream {
    if (this.closed) throw new MuxadoError('the session is closed', ErrorCode.sessionClosed);
    if (this.streams.size >= this.maxStreams) throw new MuxadoError('too many open streams', ErrorCode.streamsExhausted);
    const id = this.lastLocalId + 2;
    if (id > MAX_STREAM_ID) throw new MuxadoError('stream ids exhausted', ErrorCode.streamsExhausted);
    this.lastLocalId = id;
    const stream = new MuxadoStream(this, id, true);
    this.streams.set(id, stream);
    return stream;
  }

  /**
   * Says goodbye: a GOAWAY with the code and message, then the connection ends and every open
   * stream with it. The default code says nothing went wrong.
   */
  goAway(errorCode: number = ErrorCode.none, message = ''): void {
    if (this.closed) return;
    this.writeFrame({
      type: 'goaway',
      lastStreamId: this.lastProcessedId,
      errorCode,
      debugData: Buffer.from(message, 'utf8').subarray(0, 1024),
    });
    const reason = new MuxadoError(`went away: ${message || 'error ' + errorCode}`, errorCode);
    this.terminate(errorCode === ErrorCode.none ? null : reason, false);
    this.endTransport();
  }

  /** Ends the session at once, without a GOAWAY (the connection is dropped). */
  destroy(error?: MuxadoError): void {
    this.terminate(error ?? null, error !== undefined);
    this.transport.destroy();
  }

  // ---- used by MuxadoStream

  /** Writes a frame; false when the transport is full (DATA writers then wait for drain). */
  writeFrame(frame: Frame): boolean {
    if (this.closed) return true;
    this.framesWritten++;
    return this.transport.write(encodeFrame(frame));
  }

  writeData(streamId: number, data: Buffer, syn: boolean, fin: boolean): boolean {
    if (this.closed) return true;
    this.framesWritten++;
    const head = encodeDataHeader(streamId, data.length, { syn, fin });
    if (data.length === 0) return this.transport.write(head);
    // One write of both: over TLS, two writes are two records (and two system calls).
    this.transport.cork();
    this.transport.write(head);
    const flowing = this.transport.write(data);
    this.transport.uncork();
    return flowing;
  }

  whenDrained(callback: () => void): void {
    this.drainWaiters.push(callback);
  }

  forget(stream: MuxadoStream): void {
    if (this.streams.get(stream.id) === stream) this.streams.delete(stream.id);
  }

  // ---- inbound

  private onTransportData(chunk: Buffer): void {
    if (this.closed) return;
    this.heardAt = performance.now();
    let frames: Frame[];
    try {
      frames = this.decoder.push(chunk);
    } catch (err) {
      this.fail(err as MuxadoError);
      return;
    }
    const written = this.framesWritten;
    let windowUpdated = -1;
    for (const frame of frames) {
      if (this.closed) return;
      if (frame.type === 'wndinc') windowUpdated = frame.streamId;
      try {
        this.handleFrame(frame);
      } catch (err) {
        this.fail(err instanceof MuxadoError ? err : new MuxadoError(String(err), ErrorCode.internal));
        return;
      }
    }
    // The agent SDK writes a stream's WNDINC, then its answer, without TCP_NODELAY: Nagle holds
    // the answer until the WNDINC is acknowledged, and our kernel delays that ACK by 40 ms when
    // we have nothing to send (measured: 44 ms added to every request). A no-op frame sent now
    // carries the ACK at once. Not when this read made us write anything: that carried it.
    if (this.acknowledgeWindowUpdates && windowUpdated >= 0 && this.framesWritten === written && this.streams.get(windowUpdated)?.answersWindowUpdates) {
      this.writeFrame({ type: 'wndinc', streamId: windowUpdated, increment: 0 });
    }
    if (this.transport.writableLength > this.maxPendingWrite) {
      this.transport.pause();
      this.whenDrained(() => {
        if (!this.closed) this.transport.resume();
      });
    }
  }

  private handleFrame(frame: Frame): void {
    if (frame.type === 'goaway') {
      const goaway: GoAway = {
        errorCode: frame.errorCode,
        lastStreamId: frame.lastStreamId,
        message: frame.debugData.toString('utf8'),
      };
      this.emit('goaway', goaway);
      // A goodbye with no error closes cleanly; streams still open are cut off all the same.
      const gone = new MuxadoError(`the peer went away (error ${frame.errorCode}${goaway.message ? ': ' + goaway.message : ''})`, ErrorCode.remoteGoneAway);
      this.terminate(frame.errorCode === ErrorCode.none ? null : gone, false, gone);
      this.endTransport();
      return;
    }
    const id = frame.streamId;
    let stream = this.streams.get(id);
    if (frame.type === 'data' && frame.syn) {
      const remoteParity = this.role === 'server' ? 1 : 0;
      if ((id & 1) !== remoteParity || id <= this.lastRemoteId) {
        throw new MuxadoError(`SYN for stream ${id}, which the peer may not open`);
      }
      this.lastRemoteId = id;
      if (this.streams.size >= this.maxStreams || this.listenerCount('stream') === 0) {
        const errorCode = this.streams.size >= this.maxStreams ? ErrorCode.streamsExhausted : ErrorCode.streamRefused;
        this.writeFrame({ type: 'rst', streamId: id, errorCode });
        return;
      }
      stream = new MuxadoStream(this, id, false);
      this.streams.set(id, stream);
      this.emit('stream', stream);
    }
    if (!stream) {
      if (!this.existedOnce(id)) throw new MuxadoError(`${frame.type.toUpperCase()} for stream ${id}, which was never opened`);
      // A stream we closed: frames the peer sent before it knew. Data is refused so that the
      // peer stops sending; a FIN, WNDINC or RST needs nothing.
      if (frame.type === 'data' && frame.data.length > 0) {
        this.writeFrame({ type: 'rst', streamId: id, errorCode: ErrorCode.streamClosed });
      }
      return;
    }
    switch (frame.type) {
      case 'data':
        stream.onData(frame.data, frame.fin);
        break;
      case 'wndinc':
        stream.onWindowIncrement(frame.increment);
        break;
      case 'rst':
        stream.onReset(frame.errorCode);
        break;
    }
  }

  /** The last stream the peer opened, 0 for none (GOAWAY's last stream id). */
  private get lastProcessedId(): number {
    return this.lastRemoteId <= 1 ? 0 : this.lastRemoteId;
  }

  private existedOnce(id: number): boolean {
    const localParity = this.role === 'server' ? 0 : 1;
    return (id & 1) === localParity ? id <= this.lastLocalId : id <= this.lastRemoteId;
  }

  private onDrain(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of waiters) w();
  }

  /** A broken rule: tell the peer (GOAWAY with the code) and end the session. */
  private fail(error: MuxadoError): void {
    if (this.closed) return;
    this.writeFrame({
      type: 'goaway',
      lastStreamId: this.lastProcessedId,
      errorCode: error.code,
      debugData: Buffer.from(error.message, 'utf8').subarray(0, 1024),
    });
    this.terminate(error, true);
    this.endTransport();
  }

  /** Ends the connection once what we wrote is flushed; a peer that keeps it open is not waited for. */
  private endTransport(): void {
    this.transport.end();
    setTimeout(() => this.transport.destroy(), 5_000).unref();
  }

  /**
   * Ends the session once. `reason` goes with `close`; a `fault` (a broken rule, a dead peer,
   * a transport error) is also emitted as `error`, for the caller to log.
   */
  private terminate(reason: MuxadoError | null, fault: boolean, streamReason = reason ?? new MuxadoError('the session closed', ErrorCode.sessionClosed)): void {
    if (this.closed) return;
    this.closedWith = reason;
    for (const stream of [...this.streams.values()]) stream.onSessionClosed(streamReason);
    this.streams.clear();
    this.onDrain();
    if (reason && fault && this.listenerCount('error') > 0) this.emit('error', reason);
    this.emit('close', reason ?? undefined);
  }
}

interface ParkedWrite {
  chunk: Buffer;
  offset: number;
  callback: (error?: Error | null) => void;
}

/**
 * One muxado stream. Readable: what the peer sent, acknowledged with WNDINC as it is read.
 * Writable: DATA frames within the peer's window; `end()` sends FIN (half-close); `reset()`
 * sends RST. `destroy()` before both sides finished resets the stream (StreamCancelled).
 */
export class MuxadoStream extends Duplex {
  private sendWindow: number;
  /** Bytes received and not yet acknowledged: never more than the window. */
  private unacknowledged = 0;
  /** Bytes handed to Node's readable buffer, and how many of them were acknowledged. */
  private delivered = 0;
  private deliveredAcknowledged = 0;
  private readonly queue: Buffer[] = [];
  private queuedBytes = 0;
  private wantsData = false;
  private synPending: boolean;
  private finSent = false;
  private finReceived = false;
  private resetSeen = false;
  private parked: ParkedWrite | undefined;
  /** Why the session ended, when it ended with this stream open. */
  sessionEndedWith: MuxadoError | undefined;
  /** Set by trickle(). */
  private trickling = false;

  constructor(
    private readonly session: Session,
    readonly id: number,
    local: boolean,
  ) {
    super({ allowHalfOpen: true, readableHighWaterMark: 16 * 1024, writableHighWaterMark: 64 * 1024 });
    this.sendWindow = session.windowSize;
    this.synPending = local;
  }

  /**
   * For a stream that carries a trickle and waits for no answer (the heartbeat): the peer's
   * window is given back half a window at a time instead of read by read, and its window updates
   * are not answered, since no answer of the peer's waits behind them. Each beat then costs one
   * frame each way instead of three.
   */
  trickle(): void {
    this.trickling = true;
  }

  /** Whether a read that brought only this stream's WNDINCs is answered (Session's acknowledgeWindowUpdates). */
  get answersWindowUpdates(): boolean {
    return !this.trickling;
  }

  /** Bytes the peer sent that the application has not read yet (our queue and the readable's). */
  get bufferedIn(): number {
    return this.queuedBytes + this.readableLength;
  }

  /** What the peer's window still allows us to send. */
  get sendWindowRemaining(): number {
    return this.sendWindow;
  }

  /** Aborts the stream both ways and tells the peer with RST and the code. */
  reset(errorCode: number = ErrorCode.streamCancelled): void {
    if (!this.resetSeen && !this.destroyed) {
      this.resetSeen = true;
      this.session.writeFrame({ type: 'rst', streamId: this.id, errorCode });
    }
    this.destroy();
  }

  // ---- from the session

  onData(data: Buffer, fin: boolean): void {
    if (this.finReceived) throw new MuxadoError(`DATA on stream ${this.id} after its FIN`, ErrorCode.streamClosed);
    this.unacknowledged += data.length;
    if (this.unacknowledged > this.session.windowSize) {
      throw new MuxadoError(`stream ${this.id} overran its window of ${this.session.windowSize}`, ErrorCode.flowControl);
    }
    if (fin) this.finReceived = true;
    if (data.length > 0) {
      if (this.wantsData && this.queue.length === 0) {
        this.delivered += data.length;
        this.wantsData = this.push(data);
      } else {
        this.queue.push(data);
        this.queuedBytes += data.length;
      }
    }
    if (fin && this.queue.length === 0) this.push(null);
  }

  onWindowIncrement(increment: number): void {
    // Capped at the window, as the crate does (window.rs): an increment never grows it.
    this.sendWindow = Math.min(this.sendWindow + increment, this.session.windowSize);
    const parked = this.parked;
    if (parked && this.sendWindow > 0) {
      this.parked = undefined;
      this.sendFrom(parked.chunk, parked.offset, parked.callback);
    }
  }

  onReset(errorCode: number): void {
    this.resetSeen = true;
    this.session.forget(this);
    this.destroy(new MuxadoError(`stream ${this.id} reset by the peer (error ${errorCode})`, errorCode));
  }

  /**
   * The session ended: the stream is destroyed without an error of its own (the session
   * reports why, once), so a stream nobody listens to cannot throw into the process; readers
   * and pipelines still see a premature close.
   */
  onSessionClosed(reason: MuxadoError): void {
    this.resetSeen = true; // nothing more goes on the wire
    this.sessionEndedWith = reason;
    const parked = this.parked;
    this.parked = undefined;
    this.destroy();
    parked?.callback(reason);
  }

  // ---- Duplex

  // Node calls this when its readable buffer runs low, that is when the application has read:
  // what left that buffer since last time is given back to the peer's window (WNDINC). Bytes
  // still in the buffer stay counted, so unread bytes never exceed one window.
  override _read(): void {
    this.wantsData = true;
    const consumed = this.delivered - this.readableLength - this.deliveredAcknowledged;
    if (consumed > (this.trickling ? this.session.windowSize / 2 : 0)) {
      this.deliveredAcknowledged += consumed;
      this.acknowledge(consumed);
    }
    while (this.queue.length > 0 && this.wantsData) {
      const chunk = this.queue.shift()!;
      this.queuedBytes -= chunk.length;
      this.delivered += chunk.length;
      this.wantsData = this.push(chunk);
    }
    if (this.queue.length === 0 && this.finReceived) this.push(null);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.sendFrom(chunk, 0, callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (this.session.closed || this.resetSeen) return callback();
    this.finSent = true;
    this.session.writeData(this.id, Buffer.alloc(0), this.synPending, true);
    this.synPending = false;
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    const parked = this.parked;
    this.parked = undefined;
    if (!this.resetSeen && !this.session.closed && !(this.finSent && this.finReceived)) {
      this.resetSeen = true;
      // Never announced to the peer: nothing to reset.
      if (!this.synPending) {
        this.session.writeFrame({ type: 'rst', streamId: this.id, errorCode: ErrorCode.streamCancelled });
      }
    }
    this.session.forget(this);
    parked?.callback(error ?? new MuxadoError('stream destroyed', ErrorCode.streamCancelled));
    callback(error);
  }

  private sendFrom(chunk: Buffer, offset: number, callback: (error?: Error | null) => void): void {
    let roomLeft = true;
    while (offset < chunk.length) {
      if (this.session.closed || this.resetSeen) {
        return callback(new MuxadoError(`stream ${this.id} is closed`, ErrorCode.streamClosed));
      }
      if (this.sendWindow === 0) {
        // Waits for the peer's WNDINC; Node's writable buffer (bounded by its high-water mark)
        // holds the rest and write() returns false meanwhile.
        this.parked = { chunk, offset, callback };
        return;
      }
      const n = Math.min(this.sendWindow, this.session.maxDataFrame, chunk.length - offset);
      roomLeft = this.session.writeData(this.id, chunk.subarray(offset, offset + n), this.synPending, false);
      this.synPending = false;
      this.sendWindow -= n;
      offset += n;
    }
    if (roomLeft) callback();
    else this.session.whenDrained(() => callback());
  }

  private acknowledge(n: number): void {
    this.unacknowledged -= n;
    // After the peer's FIN nothing more comes: no window to give back.
    if (this.finReceived || this.resetSeen || this.session.closed) return;
    this.session.writeFrame({ type: 'wndinc', streamId: this.id, increment: n });
  }
}
