// The HTTPS and TLS listener of public ingress: one port for both. Each connection's ClientHello
// is read first; a server name bound by a `tls` tunnel has its bytes passed through to the agent
// untouched (the agent's upstream terminates TLS), any other has TLS terminated here with the
// certificate for its name and its requests proxied by Host.
import https from 'node:https';
import type net from 'node:net';
import type { Duplex } from 'node:stream';
import { joinStreams } from '../lib/stream/join.js';
import type { Logger } from 'pino';
import { ClientHelloReader } from '../lib/tls/client-hello.js';
import type { IngressDirectory, TunnelTarget } from '../core/live-agents.js';
import type { IngressCertificates } from './certificates.js';
import { clientAddress } from './http-proxy.js';
import { serveProxy, serverOptions, type IngressEdges, type IngressTuning } from './http.js';

export interface HttpsListenerOptions {
  directory: IngressDirectory;
  edges?: IngressEdges | undefined;
  certificates: IngressCertificates;
  log: Logger;
  tuning: Required<IngressTuning>;
  /** Every client connection, to be closed by the listener's close(). */
  track: (socket: Duplex) => void;
}

/** The HTTPS/TLS listener (not yet listening). */
export function createHttpsListener(options: HttpsListenerOptions): https.Server {
  const { directory, edges, certificates, log, tuning, track } = options;
  const server = https.createServer({
    ...serverOptions(tuning),
    ...certificates.defaultCertificate,
    SNICallback: (serverName, callback) => {
      certificates.contextFor(serverName.toLowerCase()).then(
        (context) => callback(null, context),
        (err: Error) => callback(err),
      );
    },
    handshakeTimeout: tuning.helloTimeoutMs,
    ALPNProtocols: ['http/1.1'],
  });
  serveProxy(server, { directory, edges, scheme: 'https', log, tuning, track });
  server.on('tlsClientError', (err) => log.debug({ err: err.message }, 'ingress: TLS handshake failed'));

  // The TLS server's own connection handler wraps the socket in TLS at once; it runs only once the
  // ClientHello has been read here, and the bytes read are put back first (TLSSocket takes what a
  // socket has buffered).
  const terminate = server.listeners('connection');
  if (terminate.length !== 1) throw new Error(`the HTTPS server has ${terminate.length} connection listeners; expected node's one`);
  const terminateTls = terminate[0] as (socket: net.Socket) => void;
  server.removeAllListeners('connection');

  server.on('connection', (socket: net.Socket) => {
    track(socket);
    const reader = new ClientHelloReader();
    const onError = (err: Error) => log.debug({ err: err.message }, 'ingress: connection failed before its ClientHello');
    const timer = setTimeout(() => socket.destroy(), tuning.helloTimeoutMs);
    socket.on('error', onError);
    socket.once('close', () => clearTimeout(timer));
    const onData = (chunk: Buffer) => {
      const answer = reader.push(chunk);
      if (answer.kind === 'need_more') return;
      clearTimeout(timer);
      socket.removeListener('data', onData);
      socket.pause();
      if (answer.kind === 'invalid') {
        log.debug({ problem: answer.problem, detail: answer.detail }, 'ingress: connection refused: no valid ClientHello');
        socket.destroy();
        return;
      }
      socket.unshift(Buffer.from(reader.bytes()));
      const target = answer.kind === 'server_name' ? directory.tls(answer.serverName) : undefined;
      if (target) {
        passThrough(socket, target, log);
        return;
      }
      socket.removeListener('error', onError);
      terminateTls.call(server, socket);
    };
    socket.on('data', onData);
  });
  return server;
}

/** TLS passed through: the client's bytes (its ClientHello first) to the agent and back, each way at the reader's pace. */
function passThrough(socket: net.Socket, target: TunnelTarget, log: Logger): void {
  let stream: Duplex;
  try {
    stream = target.connect(clientAddress(socket).addr);
  } catch (err) {
    log.debug({ err: (err as Error).message, tunnel_id: target.tunnelId }, 'ingress: TLS connection refused: the agent is gone');
    socket.destroy();
    return;
  }
  socket.setKeepAlive(true, 30_000);
  // Joined as a TCP endpoint's connection is: half-close kept, an error or close on one side ends the other.
  joinStreams(socket, stream);
}
