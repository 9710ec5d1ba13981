// The internal connections between instances: a public connection that reaches instance B for an
// agent held by instance A is carried to A over one long-lived link, and A hands it to the agent as
// if it had arrived at its own listener.
//
// A link is TLS 1.2 with a pre-shared key derived from the master key (every instance of one
// store has the same), so that instances authenticate each other and the traffic is encrypted
// with no certificate to issue or rotate; ECDHE-PSK gives forward secrecy. On it, muxado (the
// agents' own framing, src/lib/muxado) carries one stream per public connection, each opened by a
// header naming the tunnel and the public client's address. The listener is meant for a private
// network: it is off unless EDGEPLANE_PEER_LISTEN is set, and answers nothing to a peer without
// the key.
import { hkdfSync } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { ErrorCode } from '../lib/muxado/frame.js';
import { Session, type MuxadoStream } from '../lib/muxado/session.js';
import { AgentConnectError } from '../ingress/forwarding.js';
import { joinStreams } from '../lib/stream/join.js';

const IDENTITY = 'edgeplane-peer';
const TLS_OPTIONS = { minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2', ciphers: 'ECDHE-PSK-CHACHA20-POLY1305' } as const;
/** The largest header of a stream (tunnel id and client address, as JSON) in bytes. */
const MAX_HEADER = 1024;
/** After a link fails, streams to that peer are refused at once for this long (a failover backend moves on). */
const DOWN_FOR_MS = 1000;
/** Per stream window: as an agent session's, so a link carries a stream as fast as an agent does. */
const WINDOW = 256 * 1024;
/** Public connections carried at once on one link. */
const MAX_STREAMS = 10_000;

/** The key of the links: the same on every instance that shares the master key, and of no other use. */
export function peerKey(masterKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'edgeplane peer links', 32));
}

export interface PeerStreamHeader {
  /** The tunnel held by the instance that accepts the stream. */
  tunnelId: string;
  /** The public client's `ip:port`. */
  clientAddr: string;
}

/** Writes a stream's header: two bytes of length, then JSON. */
function encodeHeader(header: PeerStreamHeader): Buffer {
  const json = Buffer.from(JSON.stringify({ t: header.tunnelId, c: header.clientAddr }));
  const out = Buffer.alloc(2 + json.length);
  out.writeUInt16BE(json.length, 0);
  json.copy(out, 2);
  return out;
}

/** Reads a stream's header, then hands the stream (positioned after it) on; a bad header resets it. */
function readHeader(stream: MuxadoStream, then: (header: PeerStreamHeader, rest: Buffer) => void): void {
  let buffered = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    if (buffered.length < 2) return;
    const length = buffered.readUInt16BE(0);
    if (length > MAX_HEADER) return fail();
    if (buffered.length < 2 + length) return;
    stream.off('data', onData);
    stream.pause();
    let parsed: { t?: unknown; c?: unknown };
    try {
      parsed = JSON.parse(buffered.subarray(2, 2 + length).toString('utf8')) as { t?: unknown; c?: unknown };
    } catch {
      return fail();
    }
    if (typeof parsed.t !== 'string' || typeof parsed.c !== 'string') return fail();
    then({ tunnelId: parsed.t, clientAddr: parsed.c }, buffered.subarray(2 + length));
  };
  const fail = () => {
    stream.off('data', onData);
    stream.reset();
  };
  stream.on('data', onData);
}

export interface PeerListenerOptions {
  host: string;
  port: number;
  key: Buffer;
  log: Logger;
  /** A stream to the agent for a tunnel held here; undefined when it is not (any more). */
  connect(header: PeerStreamHeader): Duplex | undefined;
}

export interface PeerListener {
  address: AddressInfo;
  /** Links open from peers now. */
  readonly links: number;
  close(): Promise<void>;
}

/** Listens for the links of other instances and serves their streams with this instance's tunnels. */
export async function listenForPeers(options: PeerListenerOptions): Promise<PeerListener> {
  const { key, log } = options;
  const sessions = new Set<Session>();
  const server = tls.createServer({
    ...TLS_OPTIONS,
    pskCallback: (_socket, identity) => (identity === IDENTITY ? key : null),
  });
  server.on('secureConnection', (socket) => {
    socket.setNoDelay(true);
    const session = new Session(socket, { role: 'server', windowSize: WINDOW, maxStreams: MAX_STREAMS, maxPendingWrite: 4 * 1024 * 1024 });
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
    session.on('error', (err) => log.debug({ err }, 'peer link: a link failed'));
    session.on('stream', (stream) =>
      readHeader(stream, (header, rest) => {
        let agent: Duplex | undefined;
        try {
          agent = options.connect(header);
        } catch {
          agent = undefined;
        }
        // Refused (not cancelled): the other instance answers the client as for a tunnel it does not know.
        if (!agent) return stream.reset(ErrorCode.streamRefused);
        if (rest.length > 0) agent.write(rest);
        joinStreams(stream, agent);
        stream.resume();
      }),
    );
  });
  // A peer without the key, or no TLS at all: nothing is answered, nothing is logged past debug.
  server.on('tlsClientError', (err) => log.debug({ err }, 'peer link: a handshake failed'));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    address: server.address() as AddressInfo,
    get links() {
      return sessions.size;
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sessions) s.destroy();
      await closed;
    },
  };
}

interface Link {
  session: Session;
  /** When it failed: streams are refused until DOWN_FOR_MS later. */
  failedAt?: number;
}

/** This instance's links to its peers, one per address, made on first use and again after a failure. */
export class PeerLinks {
  private readonly links = new Map<string, Link>();
  private closed = false;

  constructor(
    private readonly key: Buffer,
    private readonly log: Logger,
  ) {}

  /**
   * A stream to the tunnel held by the peer at `address`, for one public connection; throws
   * AgentConnectError when the peer was found down a moment ago. A stream the peer refuses (the
   * tunnel is gone) is reset with ErrorCode.streamRefused before any byte.
   */
  open(address: string, header: PeerStreamHeader): Duplex {
    const session = this.session(address);
    let stream: MuxadoStream;
    try {
      stream = session.open();
    } catch (err) {
      throw new AgentConnectError(`the instance at ${address} cannot be reached: ${(err as Error).message}`);
    }
    stream.write(encodeHeader(header));
    return stream;
  }

  private session(address: string): Session {
    if (this.closed) throw new AgentConnectError('this instance is stopping');
    const known = this.links.get(address);
    if (known && !known.session.closed) return known.session;
    if (known?.failedAt !== undefined && Date.now() - known.failedAt < DOWN_FOR_MS)
      throw new AgentConnectError(`the instance at ${address} could not be reached a moment ago`);
    const { host, port } = splitAddress(address);
    // Written before the handshake ends, frames wait in the socket: a stream opens at once.
    const socket = tls.connect({
      ...TLS_OPTIONS,
      host,
      port,
      pskCallback: () => ({ psk: this.key, identity: IDENTITY }),
      checkServerIdentity: () => undefined,
    });
    socket.setNoDelay(true);
    const handshake = setTimeout(() => socket.destroy(new Error('the peer did not finish the handshake within 10 s')), 10_000);
    handshake.unref();
    socket.once('secureConnect', () => clearTimeout(handshake));
    socket.once('close', () => clearTimeout(handshake));
    const session = new Session(socket, { role: 'client', windowSize: WINDOW, maxStreams: MAX_STREAMS, maxPendingWrite: 4 * 1024 * 1024 });
    const link: Link = { session };
    this.links.set(address, link);
    session.on('error', (err) => this.log.warn({ peer: address, err: err.message }, 'peer link: the link to an instance failed'));
    session.on('close', () => {
      link.failedAt = Date.now();
    });
    // Nothing is accepted from the accepting side: it opens no stream.
    session.on('stream', (s) => s.reset());
    return session;
  }

  /** Ends every link (this instance is stopping). */
  close(): void {
    this.closed = true;
    for (const link of this.links.values()) link.session.destroy();
    this.links.clear();
  }
}

/** `host:port`, `[v6]:port`. */
export function splitAddress(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(':');
  const host = address.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  return { host, port: Number(address.slice(colon + 1)) };
}
