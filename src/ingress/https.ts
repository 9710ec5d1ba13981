// The HTTPS and TLS listener of public ingress: one port for both. Each connection's ClientHello
// is read first; a server name bound by a `tls` tunnel has its bytes passed through to the agent
// untouched (the agent's upstream terminates TLS), any other has TLS terminated here with the
// certificate for its name and its requests proxied by Host.
import https from 'node:https';
import type net from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import type { HttpsEdge, TlsEdge, TlsTerminationModule } from '../edges/edge-config.js';
import { joinStreams } from '../lib/stream/join.js';
import type { Logger } from 'pino';
import { ClientHelloReader } from '../lib/tls/client-hello.js';
import type { IngressDirectory, TunnelTarget } from '../core/live-agents.js';
import type { IngressCertificates, TlsVariant } from './certificates.js';
import { clientAddress } from './http-proxy.js';
import type { StreamEdgeServer } from './edge-stream.js';
import { serveProxy, serverOptions, type IngressEdges, type IngressTuning } from './http.js';
import { Traffic } from './traffic-metrics.js';

export interface HttpsListenerOptions {
  directory: IngressDirectory;
  edges?: IngressEdges | undefined;
  certificates: IngressCertificates;
  log: Logger;
  tuning: Required<IngressTuning>;
  /** Every client connection, to be closed by the listener's close(). */
  track: (socket: Duplex) => void;
  /** Where requests, connections and failed handshakes are counted and logged (default: counted, published nowhere). */
  traffic?: Traffic | undefined;
}

/** The HTTPS/TLS listener (not yet listening). */
export function createHttpsListener(options: HttpsListenerOptions): https.Server {
  const { directory, edges, certificates, log, tuning, track } = options;
  const traffic = options.traffic ?? new Traffic();
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
  serveProxy(server, { directory, edges, scheme: 'https', log, tuning, track, traffic });
  server.on('tlsClientError', (err) => {
    traffic.handshakeFailed('https');
    log.debug({ err: err.message }, 'ingress: TLS handshake failed');
  });

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
      const name = answer.kind === 'server_name' ? answer.serverName : undefined;
      // An edge's name first: what is configured through the API is what the name serves.
      const tlsEdge = name !== undefined ? edges?.directory.tlsEdge(name) : undefined;
      if (tlsEdge && edges) return serveTlsEdge(socket, name!, tlsEdge, edges.streams);
      // A cloud endpoint's name is served by it (TLS ends here), not passed through to an agent's tls endpoint.
      const target = name !== undefined && !edges?.directory.cloudEndpoint(name, 'https') ? directory.tls(name) : undefined;
      // An agent's TLS endpoint with an IP restriction or a policy (its Bind's, its configuration's) goes through the stream edge code.
      const agentEdge = target && name !== undefined ? edges?.agentEndpoints?.streamEdge(target, name) : undefined;
      if (agentEdge && edges) return edges.streams.serve(socket, agentEdge, clientAddress(socket));
      if (target) return passThrough(socket, target, log, traffic);
      socket.removeListener('error', onError);
      const httpsEdge = name !== undefined ? edges?.directory.httpsEdge(name) : undefined;
      const variant = httpsEdge && httpsVariant(httpsEdge);
      if (variant) {
        // The edge's own TLS settings: terminated here, then handed to the HTTPS server as its own connections are.
        return terminateWith(socket, variant);
      }
      terminateTls.call(server, socket);
    };
    socket.on('data', onData);
  });
  /**
   * The edges' own TLS settings, for a server name: those of its TLS edge (when TLS ends here) or
   * its HTTPS edge. Asked again at the handshake, by the servers below.
   */
  const variantByName = (name: string): (TlsVariant & { clientCerts: boolean }) | undefined => {
    const tlsEdge = edges?.directory.tlsEdge(name);
    if (tlsEdge) return { ...tlsVariant(tlsEdge.tlsTermination, tlsEdge.mutualTls), clientCerts: Boolean(tlsEdge.mutualTls?.enabled) };
    const httpsEdge = edges?.directory.httpsEdge(name);
    return httpsEdge && httpsVariant(httpsEdge);
  };

  // Connections whose TLS an edge's settings shape are handed to TLS servers of their own, one per
  // lowest version and per whether client certificates are asked for (those that do not chain to
  // the edge's CAs are refused). node's TLS server is what enforces a refused certificate (a
  // TLSSocket made by hand only reports it), and the version bounds are the first context's (a
  // context chosen by server name does not change them). Each takes the name's context with the
  // edge's settings.
  const edgeTlsServer = (clientCerts: boolean, minVersion: tls.SecureVersion | undefined) => {
    const secure = tls.createServer(
      {
        ...(minVersion && { minVersion }),
        requestCert: clientCerts,
        rejectUnauthorized: clientCerts,
        ALPNProtocols: ['http/1.1'],
        handshakeTimeout: tuning.helloTimeoutMs,
        SNICallback: (name, callback) => {
          certificates.contextFor(name.toLowerCase(), variantByName(name.toLowerCase())).then(
            (context) => callback(null, context),
            (err: Error) => callback(err),
          );
        },
      },
      (secured) => {
        const name = typeof secured.servername === 'string' ? secured.servername.toLowerCase() : '';
        const tlsEdge = edges?.directory.tlsEdge(name);
        if (tlsEdge && edges) return edges.streams.serve(secured, { ...tlsEdge, serverName: name }, clientAddress(secured));
        // An HTTPS edge's connection: served as the HTTPS server serves its own.
        server.emit('secureConnection', secured);
      },
    );
    secure.on('tlsClientError', (err) => {
      traffic.handshakeFailed('edge_tls');
      log.info({ err: err.message }, 'ingress: TLS handshake refused');
    });
    return secure;
  };
  const edgeTlsServers = new Map<string, tls.Server>();
  const terminateWith = (socket: net.Socket, variant: TlsVariant & { clientCerts: boolean }) => {
    const key = `${variant.clientCerts}/${variant.minVersion ?? ''}`;
    let secure = edgeTlsServers.get(key);
    if (!secure) {
      secure = edgeTlsServer(variant.clientCerts, variant.minVersion);
      edgeTlsServers.set(key, secure);
    }
    secure.emit('connection', socket);
  };

  /** A TLS edge's connection: passed through to its backend as it is, or terminated here first. */
  function serveTlsEdge(socket: net.Socket, name: string, edge: TlsEdge, streams: StreamEdgeServer): void {
    if (!terminatesAtEdge(edge.tlsTermination)) {
      socket.setKeepAlive(true, 30_000);
      return streams.serve(socket, { ...edge, serverName: name }, clientAddress(socket));
    }
    terminateWith(socket, variantByName(name) ?? { clientCerts: false });
  }

  return server;
}

/** Node's name of a TLS version the API takes (`1.2`); below 1.2 is 1.2, the floor Node and OpenSSL keep. */
function secureVersion(version: string | null | undefined): tls.SecureVersion | undefined {
  if (version === '1.3') return 'TLSv1.3';
  return version ? 'TLSv1.2' : undefined;
}

/** A TLS edge terminates at the edge unless its tls_termination module, enabled, says upstream. */
function terminatesAtEdge(termination: TlsTerminationModule | undefined): boolean {
  return !termination?.enabled || termination.terminate_at === 'edge';
}

function tlsVariant(termination: TlsTerminationModule | undefined, mutualTls: { enabled: boolean; caPems: string[] } | undefined): TlsVariant {
  const minVersion = termination?.enabled ? secureVersion(termination.min_version) : undefined;
  return { ...(minVersion && { minVersion }), ...(mutualTls?.enabled && { ca: mutualTls.caPems }) };
}

/** An HTTPS edge's own TLS settings, or undefined when it has none (the listener's defaults serve it). */
function httpsVariant(edge: HttpsEdge): (TlsVariant & { clientCerts: boolean }) | undefined {
  const variant = tlsVariant(edge.tlsTermination, edge.mutualTls);
  if (!variant.minVersion && !variant.ca) return undefined;
  return { ...variant, clientCerts: Boolean(variant.ca) };
}

/** TLS passed through: the client's bytes (its ClientHello first) to the agent and back, each way at the reader's pace. */
function passThrough(socket: net.Socket, target: TunnelTarget, log: Logger, traffic: Traffic): void {
  const client = clientAddress(socket);
  const visit = traffic.connection(socket, 'tls', client.ip);
  visit.to('endpoint', target.endpoint?.id ?? target.tunnelId, true);
  let stream: Duplex;
  try {
    stream = target.connect(client.addr);
    visit.sentTo('tunnel', target.tunnelId);
  } catch (err) {
    log.debug({ err: (err as Error).message, tunnel_id: target.tunnelId }, 'ingress: TLS connection refused: the agent is gone');
    socket.destroy();
    return;
  }
  socket.setKeepAlive(true, 30_000);
  // Joined as a TCP endpoint's connection is: half-close kept, an error or close on one side ends the other.
  joinStreams(socket, stream);
}
