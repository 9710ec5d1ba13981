// muxado sessions (src/lib/muxado/session.ts, typed.ts) over real sockets on 127.0.0.1: many
// streams at once both ways, flow control measured in buffered bytes, half-close, reset,
// GOAWAY, protocol errors that end one session only, and the heartbeat. A "raw peer" is a bare
// socket the test drives frame by frame, to see exactly what the session puts on the wire.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import net from 'node:net';
import { Duplex, Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { encodeFrame, ErrorCode, FrameDecoder, MuxadoError, type Frame } from '../../src/lib/muxado/frame.js';
import { DEFAULT_WINDOW, MuxadoStream, Session } from '../../src/lib/muxado/session.js';
import { acceptTyped, HEARTBEAT_TYPE, openTyped, readStreamType, startHeartbeat } from '../../src/lib/muxado/typed.js';

let listener: net.Server;
const waiting: ((s: net.Socket) => void)[] = [];

before(async () => {
  listener = net.createServer((s) => waiting.shift()!(s));
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
});
const sockets: net.Socket[] = [];
// Whatever a failed test left open must not keep the process alive.
after(() => {
  for (const s of sockets) s.destroy();
  listener.close();
});

/** Two ends of a real TCP connection: [server side, client side]. */
async function socketPair(): Promise<[net.Socket, net.Socket]> {
  const accepted = new Promise<net.Socket>((resolve) => waiting.push(resolve));
  const client = net.connect((listener.address() as net.AddressInfo).port, '127.0.0.1');
  await once(client, 'connect');
  const pair: [net.Socket, net.Socket] = [await accepted, client];
  sockets.push(...pair);
  return pair;
}

async function sessionPair(): Promise<[Session, Session]> {
  const [s, c] = await socketPair();
  return [new Session(s, { role: 'server' }), new Session(c, { role: 'client' })];
}

/**
 * Two Duplexes joined in memory with backpressure and no kernel buffers: a side that is not
 * read holds the other's write callbacks, so the writer's writableLength shows what waits.
 */
class PipeEnd extends Duplex {
  other!: PipeEnd;
  private held: (() => void) | undefined;
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    if (this.other.push(chunk)) callback();
    else this.other.held = callback;
  }
  override _read(): void {
    const held = this.held;
    this.held = undefined;
    held?.();
  }
  override _final(callback: () => void): void {
    this.other.push(null);
    callback();
  }
}

function pipePair(): [PipeEnd, PipeEnd] {
  const a = new PipeEnd();
  const b = new PipeEnd();
  a.other = b;
  b.other = a;
  return [a, b];
}

/** A peer the test drives by hand: frames written, frames read as they come. */
class RawPeer {
  readonly frames: Frame[] = [];
  private readonly decoder = new FrameDecoder({ maxFrameLength: 16 * 1024 * 1024 });
  private waiters: (() => void)[] = [];
  ended = false;
  constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.frames.push(...this.decoder.push(chunk));
      this.wake();
    });
    socket.on('close', () => {
      this.ended = true;
      this.wake();
    });
    socket.on('error', () => {});
  }
  send(...frames: Frame[]): void {
    for (const f of frames) this.socket.write(encodeFrame(f));
  }
  /** Waits until a condition over the frames received holds (re-checked on every arrival). */
  async until<T>(check: (frames: Frame[]) => T | undefined | false, what: string): Promise<T> {
    for (;;) {
      const found = check(this.frames);
      if (found) return found;
      if (this.ended) throw new Error(`connection closed while waiting for ${what}`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }
  dataBytes(streamId: number): number {
    return this.frames.reduce((n, f) => n + (f.type === 'data' && f.streamId === streamId ? f.data.length : 0), 0);
  }
  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }
}

async function sessionWithRawPeer(role: 'server' | 'client' = 'server', more: { acknowledgeWindowUpdates?: boolean } = {}): Promise<[Session, RawPeer]> {
  const [s, c] = await socketPair();
  return role === 'server' ? [new Session(s, { role, ...more }), new RawPeer(c)] : [new Session(c, { role, ...more }), new RawPeer(s)];
}

async function readAll(stream: MuxadoStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  // Not `for await (… of stream)`: that destroys the Duplex at the end, writable side included.
  for await (const c of stream.iterator({ destroyOnReturn: false })) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** A deterministic payload that shows misordered or mixed-up bytes. */
function pattern(seed: number, length: number): Buffer {
  const b = Buffer.alloc(length);
  for (let i = 0; i < length; i++) b[i] = (seed * 31 + i * 7 + (i >> 9)) & 0xff;
  return b;
}

/** Writes with backpressure: waits for drain whenever write() says so. */
async function writeAll(stream: MuxadoStream, data: Buffer, chunk = 50_000): Promise<void> {
  for (let o = 0; o < data.length; o += chunk) {
    if (!stream.write(data.subarray(o, o + chunk))) await once(stream, 'drain');
  }
  stream.end();
}

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/**
 * Waits until the writer has acted on everything the reader said so far: a stream the reader
 * opens and the writer ends goes behind the reader's WNDINCs, and the writer's answer behind
 * the DATA those WNDINCs released.
 */
async function settle(reader: Session, writer: Session): Promise<void> {
  writer.once('stream', (s) => {
    s.resume();
    s.end();
  });
  const probe = reader.open();
  probe.end();
  await readAll(probe);
}

/** Resolves at the first turn where the condition holds (checked after each I/O turn). */
async function until(check: () => boolean, what = 'a condition'): Promise<void> {
  const giveUp = performance.now() + 10_000;
  while (!check()) {
    if (performance.now() > giveUp) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

describe('muxado sessions', { timeout: 15_000 }, () => {
  it('carries many streams at once, opened by either side, 3 MB each way, intact', async () => {
    const [server, client] = await sessionPair();
    const perStream = (3 * 1024 * 1024) / 16;
    // Each side answers a stream it accepts with the hash of what it read, then its own bytes.
    const answer = (side: Session): void => {
      side.on('stream', (stream) => {
        void (async () => {
          const got = await readAll(stream);
          const reply = pattern(stream.id + 1000, perStream);
          stream.write(sha(got));
          await writeAll(stream, reply);
        })();
      });
    };
    answer(server);
    answer(client);
    const exchange = async (side: Session): Promise<number> => {
      const stream = side.open();
      const sent = pattern(stream.id, perStream);
      const [, got] = await Promise.all([writeAll(stream, sent), readAll(stream)]);
      assert.equal(got.subarray(0, 64).toString(), sha(sent), `stream ${stream.id}: what the peer read`);
      assert.ok(got.subarray(64).equals(pattern(stream.id + 1000, perStream)), `stream ${stream.id}: the reply`);
      return stream.id;
    };
    const ids = await Promise.all([...Array(8).keys()].flatMap(() => [exchange(client), exchange(server)]));
    assert.deepEqual(
      ids.filter((id) => id % 2 === 1).sort((a, b) => a - b),
      [3, 5, 7, 9, 11, 13, 15, 17],
    );
    assert.deepEqual(
      ids.filter((id) => id % 2 === 0).sort((a, b) => a - b),
      [2, 4, 6, 8, 10, 12, 14, 16],
    );
    await until(() => server.streamCount === 0 && client.streamCount === 0);
    client.goAway();
    await once(server, 'close');
  });

  it('stops a writer at the window when the reader does not read, and resumes it as it reads', async () => {
    const [server, client] = await sessionPair();
    const accepted = once(server, 'stream') as Promise<[MuxadoStream]>;
    const stream = client.open();
    const total = 2 * 1024 * 1024;
    const sent = pattern(1, total);
    let offered = 0;
    // Writes honouring backpressure, as a proxy would.
    const writer = (async () => {
      for (; offered < total; offered += 16 * 1024) {
        if (!stream.write(sent.subarray(offered, offered + 16 * 1024))) await once(stream, 'drain');
      }
      stream.end();
    })();
    const [incoming] = await accepted;
    await until(() => stream.sendWindowRemaining === 0);
    await settle(server, client);
    assert.equal(incoming.bufferedIn, DEFAULT_WINDOW, 'the reader holds exactly one window');
    assert.equal(stream.sendWindowRemaining, 0);
    assert.ok(stream.writableLength <= stream.writableHighWaterMark + 16 * 1024, `the writer buffers ${stream.writableLength} bytes`);
    assert.ok(offered < DEFAULT_WINDOW + stream.writableHighWaterMark + 32 * 1024, `offered ${offered}`);
    const got = await readAll(incoming);
    await writer;
    assert.ok(got.equals(sent));
    client.destroy();
  });

  it('counts what sits in Node buffers against the window: a stalled pipe stops the sender', async () => {
    const [server, client] = await sessionPair();
    const accepted = once(server, 'stream') as Promise<[MuxadoStream]>;
    const stream = client.open();
    stream.on('error', () => {});
    stream.write(Buffer.alloc(4 * DEFAULT_WINDOW, 2));
    const [incoming] = await accepted;
    // The destination takes one chunk and never finishes writing it.
    let taken = 0;
    const stuck = new Writable({
      highWaterMark: 1024,
      write(chunk: Buffer, _encoding, _callback) {
        taken += chunk.length;
      },
    });
    incoming.pipe(stuck);
    await until(() => stream.sendWindowRemaining === 0);
    await settle(server, client);
    assert.ok(taken > 0 && incoming.isPaused(), 'the pipe took a chunk, then paused');
    // Unread bytes stay within the window; the destination holds what it took (its own bound).
    assert.ok(incoming.bufferedIn <= DEFAULT_WINDOW, `unread: ${incoming.bufferedIn}`);
    const held = incoming.bufferedIn + stuck.writableLength;
    assert.equal(held, DEFAULT_WINDOW, 'what the destination took is not given back until it is written');
    assert.equal(stream.sendWindowRemaining, 0, 'the sender is stopped');
    client.destroy();
  });

  it('survives its end with nobody listening for errors anywhere', async () => {
    const [session, peer] = await sessionWithRawPeer('server');
    const streams: MuxadoStream[] = [];
    session.on('stream', (s) => streams.push(s)); // no 'error' listener on the streams either
    peer.send({ type: 'data', streamId: 3, syn: true, fin: false, data: Buffer.from('a') });
    await until(() => streams.length === 1);
    const local = session.open();
    local.write('x');
    const closed = new Promise<MuxadoError | undefined>((resolve) => session.once('close', resolve));
    peer.socket.write(Buffer.from('0000004000000000', 'hex'));
    assert.equal((await closed)?.code, ErrorCode.protocol);
    assert.ok(streams[0]!.destroyed && local.destroyed);
    assert.equal(streams[0]!.sessionEndedWith?.code, ErrorCode.protocol);
  });

  it("answers a read that brought only a peer's WNDINC with a WNDINC of 0, when asked to", async () => {
    const [session, peer] = await sessionWithRawPeer('server', { acknowledgeWindowUpdates: true });
    const stream = session.open();
    stream.write('request');
    await peer.until(() => peer.dataBytes(2) === 7, 'the request');
    const before = peer.frames.length;
    peer.send({ type: 'wndinc', streamId: 2, increment: 7 });
    const ack = await peer.until((frames) => frames.slice(before).find((f) => f.type === 'wndinc'), 'the acknowledgement');
    assert.deepEqual(ack, { type: 'wndinc', streamId: 2, increment: 0 });
    // The no-op changed nothing: the stream still sends a whole window.
    assert.equal(stream.sendWindowRemaining, DEFAULT_WINDOW);
    // A WNDINC for a stream that is gone is not answered; nor is any without the option.
    const [plain, plainPeer] = await sessionWithRawPeer('server');
    const other = plain.open();
    other.write('x');
    await plainPeer.until(() => plainPeer.dataBytes(2) === 1, 'the byte');
    plainPeer.send({ type: 'wndinc', streamId: 2, increment: 1 });
    await until(() => other.sendWindowRemaining === DEFAULT_WINDOW, 'the increment');
    // Bytes written after the increment was read arrive after anything it made the session write.
    other.write('y');
    await plainPeer.until(() => plainPeer.dataBytes(2) === 2, 'the second byte');
    assert.equal(plainPeer.frames.filter((f) => f.type === 'wndinc').length, 0, 'nothing answered without the option');
    for (const s of [stream, other]) s.destroy();
    session.destroy();
    plain.destroy();
  });

  it('a heartbeat stream gives the window back half a window at a time, and its WNDINCs are not answered', async () => {
    const [session, peer] = await sessionWithRawPeer('server', { acknowledgeWindowUpdates: true });
    // Any other stream is a probe: ended at once, so that its FIN shows the frames before it were read.
    acceptTyped(session, { onStream: (_type, stream) => stream.end() });
    const typed = (t: number) => {
      const b = Buffer.alloc(4);
      b.writeUInt32BE(t, 0);
      return b;
    };
    peer.send({ type: 'data', streamId: 3, syn: true, fin: false, data: typed(HEARTBEAT_TYPE) });
    peer.send({ type: 'data', streamId: 3, syn: false, fin: false, data: Buffer.from('beat') });
    await peer.until(() => peer.dataBytes(3) === 4, 'the echo');
    // As the agent does after an echo: a WNDINC for it, alone in its read; then the probe.
    peer.send({ type: 'wndinc', streamId: 3, increment: 4 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    peer.send({ type: 'data', streamId: 5, syn: true, fin: true, data: typed(1) });
    await peer.until((fs) => fs.find((f) => f.type === 'data' && f.streamId === 5 && f.fin), 'the probe ended');
    const onBeats = peer.frames.filter((f) => f.type === 'wndinc' && f.streamId === 3);
    assert.deepEqual(onBeats, [], 'no window given back for a beat, and the WNDINC not answered');
    // Past half a window read, the window is given back at once.
    const half = DEFAULT_WINDOW / 2;
    peer.send({ type: 'data', streamId: 3, syn: false, fin: false, data: Buffer.alloc(half, 1) });
    const back = await peer.until((fs) => fs.find((f) => f.type === 'wndinc' && f.streamId === 3), 'the window given back');
    assert.deepEqual(back, { type: 'wndinc', streamId: 3, increment: half + 8 });
    session.destroy();
  });

  it('ends quietly when the peer hangs up: close with PeerEOF, no error event', async () => {
    const [session, peer] = await sessionWithRawPeer('server');
    let errors = 0;
    session.on('error', () => errors++);
    const closed = new Promise<MuxadoError | undefined>((resolve) => session.once('close', resolve));
    peer.socket.end();
    assert.equal((await closed)?.code, ErrorCode.peerEof);
    assert.equal(errors, 0);
  });

  it('sends exactly one window of DATA without WNDINC, then exactly what each WNDINC allows', async () => {
    const [session, peer] = await sessionWithRawPeer('server');
    const stream = session.open();
    stream.write(Buffer.alloc(DEFAULT_WINDOW + 100_000, 1));
    await peer.until(() => peer.dataBytes(2) >= DEFAULT_WINDOW, 'one window');
    assert.equal(peer.dataBytes(2), DEFAULT_WINDOW);
    const first = peer.frames[0]!;
    assert.ok(first.type === 'data' && first.syn && first.streamId === 2, 'the first frame opens the stream');
    assert.ok(peer.frames.every((f) => f.type !== 'data' || f.data.length <= session.maxDataFrame));
    peer.send({ type: 'wndinc', streamId: 2, increment: 1000 });
    await peer.until(() => peer.dataBytes(2) >= DEFAULT_WINDOW + 1000, 'the increment');
    assert.equal(peer.dataBytes(2), DEFAULT_WINDOW + 1000);
    session.destroy();
  });

  it('acknowledges what the application reads with WNDINC, and only that', async () => {
    const [session, peer] = await sessionWithRawPeer('server');
    const accepted = once(session, 'stream') as Promise<[MuxadoStream]>;
    peer.send({ type: 'data', streamId: 3, syn: true, fin: false, data: Buffer.alloc(1000, 7) });
    const [stream] = await accepted;
    stream.pause();
    await until(() => stream.bufferedIn === 1000);
    assert.equal(peer.frames.length, 0, 'nothing acknowledged before the application reads');
    const read = stream.read(1000) as Buffer;
    assert.equal(read.length, 1000);
    const inc = await peer.until((fs) => fs.find((f) => f.type === 'wndinc'), 'a WNDINC');
    assert.deepEqual(inc, { type: 'wndinc', streamId: 3, increment: 1000 });
    session.destroy();
  });

  it('half-closes: each side ends its writing and still reads the other', async () => {
    const [server, client] = await sessionPair();
    server.on('stream', (stream) => {
      void readAll(stream).then((got) => stream.end(`pong after ${got.toString()}`));
    });
    const stream = client.open();
    stream.end('ping');
    assert.equal((await readAll(stream)).toString(), 'pong after ping');
    await until(() => server.streamCount === 0 && client.streamCount === 0);
    assert.ok(!server.closed && !client.closed);
    client.goAway();
  });

  it('resets one stream (RST) and leaves the session and its other streams working', async () => {
    const [server, client] = await sessionPair();
    const streams: MuxadoStream[] = [];
    server.on('stream', (s) => streams.push(s));
    const doomed = client.open();
    doomed.write('hello');
    await until(() => streams.length === 1);
    const errored = once(streams[0]!, 'error') as Promise<[MuxadoError]>;
    doomed.reset(ErrorCode.streamCancelled);
    const [err] = await errored;
    assert.equal(err.code, ErrorCode.streamCancelled);
    assert.match(err.message, /reset by the peer/);
    server.removeAllListeners('stream');
    server.on('stream', (s) => void readAll(s).then((b) => s.end(b)));
    const other = client.open();
    other.end('still here');
    assert.equal((await readAll(other)).toString(), 'still here');
    // And the RST went the other way too: the server resets, the client stream errors.
    const back = client.open();
    back.write('x');
    server.removeAllListeners('stream');
    server.once('stream', (s) => s.reset(ErrorCode.streamRefused));
    const [backErr] = (await once(back, 'error')) as [MuxadoError];
    assert.equal(backErr.code, ErrorCode.streamRefused);
    client.goAway();
  });

  it('goes away both ways: GOAWAY carries the code and message, and every stream ends', async () => {
    for (const leaver of ['server', 'client'] as const) {
      const [server, client] = await sessionPair();
      const [leaving, staying] = leaver === 'server' ? [server, client] : [client, server];
      const cutOff = new Promise<MuxadoStream>((resolve) => staying.on('stream', (s) => s.on('close', () => resolve(s))));
      const open = leaving.open();
      open.on('error', () => {});
      open.write('x');
      const goaway = once(staying, 'goaway');
      const closed = once(staying, 'close');
      leaving.goAway(ErrorCode.none, 'shutting down');
      const [ga] = await goaway;
      assert.deepEqual(ga, { errorCode: ErrorCode.none, lastStreamId: 0, message: 'shutting down' });
      assert.deepEqual(await closed, [undefined], 'a goodbye with no error is a clean close');
      const cut = await cutOff;
      assert.ok(cut.readableAborted, 'a stream still open is cut off');
      assert.equal(cut.sessionEndedWith?.code, ErrorCode.remoteGoneAway);
      assert.ok(leaving.closed && open.destroyed);
      assert.throws(() => leaving.open(), /session is closed/);
    }
  });

  it('ends a session on a malformed frame, an unknown stream or a window overrun, and only that one', async () => {
    const cases: [string, Frame[] | Buffer, number, RegExp][] = [
      ['malformed', Buffer.from('0000004000000000', 'hex'), ErrorCode.protocol, /unknown frame type/],
      ['unknown stream', [{ type: 'data', streamId: 9, syn: false, fin: false, data: Buffer.from('?') }], ErrorCode.protocol, /never opened/],
      ['SYN with a server id', [{ type: 'data', streamId: 4, syn: true, fin: false, data: Buffer.from('?') }], ErrorCode.protocol, /may not open/],
      [
        'window overrun',
        [
          { type: 'data', streamId: 3, syn: true, fin: false, data: Buffer.alloc(DEFAULT_WINDOW - 10) },
          { type: 'data', streamId: 3, syn: false, fin: false, data: Buffer.alloc(11) },
        ],
        ErrorCode.flowControl,
        /overran its window/,
      ],
    ];
    const [bystanderServer, bystanderClient] = await sessionPair();
    bystanderServer.on('stream', (s) => void readAll(s).then((b) => s.end(b)));
    for (const [name, input, code, message] of cases) {
      const [session, peer] = await sessionWithRawPeer('server');
      session.on('stream', (s) => {
        s.on('error', () => {});
        s.pause();
      });
      const errored = once(session, 'error') as Promise<[MuxadoError]>;
      if (Buffer.isBuffer(input)) peer.socket.write(input);
      else peer.send(...input);
      const [err] = await errored;
      assert.equal(err.code, code, name);
      assert.match(err.message, message, name);
      const goaway = await peer.until((fs) => fs.find((f) => f.type === 'goaway'), 'GOAWAY');
      assert.equal(goaway.type === 'goaway' && goaway.errorCode, code, name);
      assert.ok(session.closed);
      peer.socket.destroy();
      const s = bystanderClient.open();
      s.end(name);
      assert.equal((await readAll(s)).toString(), name, 'the other session still works');
    }
    bystanderClient.goAway();
  });

  it('takes frames of a stream it already closed without ending the session', async () => {
    const [session, peer] = await sessionWithRawPeer('server');
    session.on('stream', (s) => s.reset());
    peer.send({ type: 'data', streamId: 3, syn: true, fin: false, data: Buffer.from('a') });
    await peer.until((fs) => fs.find((f) => f.type === 'rst'), 'RST');
    // In flight when the RST went out: more data, a WNDINC, a FIN.
    peer.send(
      { type: 'data', streamId: 3, syn: false, fin: false, data: Buffer.from('b') },
      { type: 'wndinc', streamId: 3, increment: 5 },
      { type: 'data', streamId: 3, syn: false, fin: true, data: Buffer.alloc(0) },
      { type: 'data', streamId: 5, syn: true, fin: false, data: Buffer.from('c') },
    );
    await peer.until((fs) => fs.filter((f) => f.type === 'rst' && f.streamId === 5).length === 1, 'RST of 5');
    assert.deepEqual(
      peer.frames.map((f) => (f.type === 'rst' ? `${f.type} ${f.streamId} ${f.errorCode}` : f.type)),
      [`rst 3 ${ErrorCode.streamCancelled}`, `rst 3 ${ErrorCode.streamClosed}`, `rst 5 ${ErrorCode.streamCancelled}`],
    );
    assert.ok(!session.closed);
    session.destroy();
  });

  it('refuses streams beyond its limit, and all of them when nobody accepts, keeping the session', async () => {
    const [s1, c1] = await socketPair();
    const session = new Session(s1, { role: 'server', maxStreams: 2 });
    const peer = new RawPeer(c1);
    const syn = (streamId: number): Frame => ({ type: 'data', streamId, syn: true, fin: false, data: Buffer.from('a') });
    peer.send(syn(3)); // nobody accepts yet
    const rst = (id: number) => (fs: Frame[]) => fs.find((f) => f.type === 'rst' && f.streamId === id);
    assert.deepEqual(await peer.until(rst(3), 'RST 3'), { type: 'rst', streamId: 3, errorCode: ErrorCode.streamRefused });
    session.on('stream', (s) => s.pause());
    peer.send(syn(5), syn(7), syn(9));
    assert.deepEqual(await peer.until(rst(9), 'RST 9'), {
      type: 'rst',
      streamId: 9,
      errorCode: ErrorCode.streamsExhausted,
    });
    assert.equal(session.streamCount, 2);
    assert.ok(!session.closed);
    assert.throws(() => session.open(), /too many open streams/);
    session.destroy();
  });

  it('stops reading a peer that sends but does not read, once its replies pile up', async () => {
    const [ours, theirs] = pipePair();
    const session = new Session(ours, { role: 'server', maxPendingWrite: 64 * 1024 });
    session.on('stream', (s) => s.reset());
    theirs.write(encodeFrame({ type: 'data', streamId: 3, syn: true, fin: false, data: Buffer.from('a') }));
    // DATA for the stream just reset: each one earns an RST (12 bytes) that nobody reads.
    const late = encodeFrame({ type: 'data', streamId: 3, syn: false, fin: false, data: Buffer.from('b') });
    const batch = Buffer.concat(Array.from({ length: Math.floor((64 * 1024) / late.length) }, () => late));
    let sent = 0;
    while (!ours.isPaused()) {
      theirs.write(batch);
      sent += batch.length / late.length;
      await new Promise((r) => setImmediate(r));
      assert.ok(sent < 1_000_000, 'the session never stopped reading');
    }
    const pending = ours.writableLength;
    assert.ok(pending <= 64 * 1024 + (batch.length / late.length) * 12, `replies waiting: ${pending}`);
    // The peer reads again: every frame is answered, and the session is still there.
    const decoder = new FrameDecoder({ maxFrameLength: 1024 });
    let rsts = 0;
    theirs.on('data', (chunk: Buffer) => (rsts += decoder.push(chunk).filter((f) => f.type === 'rst').length));
    await until(() => rsts === sent + 1, 'every RST');
    assert.ok(!session.closed);
    session.destroy();
  });

  it('reads frames that arrive one byte at a time', async () => {
    const [ours, theirs] = pipePair();
    const session = new Session(ours, { role: 'server' });
    const accepted = once(session, 'stream') as Promise<[MuxadoStream]>;
    const bytes = Buffer.concat([
      encodeFrame({ type: 'data', streamId: 3, syn: true, fin: false, data: Buffer.from('00000000', 'hex') }),
      encodeFrame({ type: 'wndinc', streamId: 3, increment: 10 }),
      encodeFrame({ type: 'data', streamId: 3, syn: false, fin: false, data: Buffer.from('{"Version":') }),
      encodeFrame({ type: 'data', streamId: 3, syn: false, fin: true, data: Buffer.from('["3"]}') }),
    ]);
    for (const byte of bytes) theirs.write(Buffer.from([byte]));
    const [auth] = await accepted;
    assert.equal(await readStreamType(auth, 1000), 0);
    assert.equal((await readAll(auth)).toString(), '{"Version":["3"]}');
    session.destroy();
  });

  it('opens typed streams (the type rides with the SYN) and reads the type of accepted ones', async () => {
    const [session, peer] = await sessionWithRawPeer('server');
    const proxy = openTyped(session, 3);
    proxy.write('raw bytes');
    await peer.until(() => peer.dataBytes(2) >= 13, 'type and bytes');
    assert.equal(encodeFrame(peer.frames[0]!).toString('hex'), '0000041200000002' + '00000003');
    const accepted = once(session, 'stream') as Promise<[MuxadoStream]>;
    peer.send({ type: 'data', streamId: 3, syn: true, fin: false, data: Buffer.from('00000001', 'hex') });
    peer.send({ type: 'data', streamId: 3, syn: false, fin: true, data: Buffer.from('{"Id":""}') });
    const [bind] = await accepted;
    assert.equal(await readStreamType(bind, 1000), 1);
    assert.equal((await readAll(bind)).toString(), '{"Id":""}');
    session.destroy();
  });

  it('echoes heartbeats and measures them; declares a silent peer dead after the timeout', async () => {
    const [server, client] = await sessionPair();
    acceptTyped(server, { onStream: () => assert.fail('only heartbeats here') });
    const latencies: number[] = [];
    const threeBeats = new Promise<void>((resolve) => {
      startHeartbeat(client, {
        intervalMs: 10,
        timeoutMs: 5_000,
        onBeat: (ms) => latencies.push(ms) === 3 && resolve(),
      });
    });
    await threeBeats;
    assert.ok(latencies.every((ms) => ms >= 0));
    client.goAway();

    // A peer that takes the heartbeat stream and never answers.
    const [session, peer] = await sessionWithRawPeer('server');
    const closed = new Promise<[MuxadoError]>((resolve) => session.once('close', (err) => resolve([err!])));
    startHeartbeat(session, { intervalMs: 10_000, timeoutMs: 100 });
    const opening = await peer.until((fs) => fs[0], 'the heartbeat stream');
    assert.ok(opening.type === 'data' && opening.syn);
    assert.equal(opening.data.subarray(0, 4).readUInt32BE(0), HEARTBEAT_TYPE);
    const [why] = await closed;
    assert.equal(why.code, ErrorCode.writeTimeout);
    assert.match(why.message, /no echo within 100 ms/);
    await peer.until(() => peer.ended, 'the connection to close');
  });

  it('with onlyWhenQuiet, beats only after an interval in which nothing came from the peer', async () => {
    const [server, client] = await sessionPair();
    acceptTyped(server, { onStream: () => assert.fail('only heartbeats here') });
    acceptTyped(client, { onStream: () => assert.fail('only heartbeats here') });
    // The server beats every 10 ms: the client hears from it all the time.
    const talking = startHeartbeat(server, { intervalMs: 10, timeoutMs: 5_000 });
    let beats = 0;
    let firstBeat!: () => void;
    const beaten = new Promise<void>((resolve) => (firstBeat = resolve));
    startHeartbeat(client, { intervalMs: 50, timeoutMs: 5_000, onlyWhenQuiet: true, onBeat: () => beats++ === 0 && firstBeat() });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(beats, 0, 'no beat while the peer is heard from');
    // Quiet now: the next tick past an interval of silence beats, and the echo comes back.
    talking.stop();
    const quietSince = performance.now();
    await beaten;
    assert.ok(performance.now() - quietSince >= 50, 'not before an interval of silence');
    client.goAway();
  });
});
