// The settings node:http servers of public ingress share, and the plain HTTP listener.
import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { IngressDirectory } from '../core/live-agents.js';
import type { IngressEdges } from './edge-http.js';
import { createHttpProxy } from './http-proxy.js';
import type { Scheme } from './forwarding.js';
import type { Traffic } from './traffic-metrics.js';

export type { IngressEdges } from './edge-http.js';

export interface IngressTuning {
  /** Milliseconds a client has to send its ClientHello, and to finish the TLS handshake (default 10 s). */
  helloTimeoutMs?: number;
  /** Milliseconds a client has to send a request's headers (default 10 s). */
  headersTimeoutMs?: number;
  /** Milliseconds an idle client connection stays open between requests (default 60 s). */
  keepAliveTimeoutMs?: number;
  /** Milliseconds without a byte either way after which an HTTP connection is closed (default 10 min). */
  idleTimeoutMs?: number;
  /** Bytes of request headers at most (default 16 KiB); more is answered 431. */
  maxHeaderSize?: number;
  /** Open client connections per listener at most (default 10 000); more are closed at once. */
  maxConnections?: number;
  /** Tunnels one client connection keeps an agent stream to at once (default 8). */
  maxTunnelsPerConnection?: number;
}

export const INGRESS_DEFAULTS: Required<IngressTuning> = {
  helloTimeoutMs: 10_000,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 60_000,
  idleTimeoutMs: 600_000,
  maxHeaderSize: 16 * 1024,
  maxConnections: 10_000,
  maxTunnelsPerConnection: 8,
};

/** node:http's server options for ingress. */
export function serverOptions(tuning: Required<IngressTuning>): http.ServerOptions {
  return {
    headersTimeout: tuning.headersTimeoutMs,
    // A body streams for as long as it moves; the idle timeout ends one that stops.
    requestTimeout: 0,
    keepAliveTimeout: tuning.keepAliveTimeoutMs,
    maxHeaderSize: tuning.maxHeaderSize,
    // How often the headers timeout is checked (node's default, 30 s, would let a client take 40).
    connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(tuning.headersTimeoutMs / 4))),
    noDelay: true,
  };
}

/** Wires the proxy into a node:http (or https) server: requests, upgrades, timeouts and bounds. */
export function serveProxy(
  server: http.Server,
  options: {
    directory: IngressDirectory;
    edges?: IngressEdges | undefined;
    scheme: Scheme;
    log: Logger;
    tuning: Required<IngressTuning>;
    track: (socket: Duplex) => void;
    traffic?: Traffic | undefined;
  },
): void {
  const { edges } = options;
  const proxy = createHttpProxy({
    directory: options.directory,
    scheme: options.scheme,
    log: options.log,
    maxTunnelsPerConnection: options.tuning.maxTunnelsPerConnection,
    edges,
    traffic: options.traffic,
  });
  server.timeout = options.tuning.idleTimeoutMs;
  server.maxConnections = options.tuning.maxConnections;
  server.on('request', proxy.onRequest);
  server.on('close', () => proxy.close());
  // node's own answer to a request it cannot parse writes and destroys at once, which loses the
  // answer on a TLS connection (written, not yet flushed): it is ended instead, then closed.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || err.code === 'ECONNRESET') return void socket.destroy();
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    setTimeout(() => socket.destroy(), 1000).unref();
  });
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    // Out of node:http's hands now: closed by the listener's close().
    options.track(socket);
    proxy.onUpgrade(req, socket, head);
  });
}

/** The plain HTTP listener (not yet listening). */
export function createHttpListener(options: {
  directory: IngressDirectory;
  edges?: IngressEdges | undefined;
  log: Logger;
  tuning: Required<IngressTuning>;
  track: (socket: Duplex) => void;
  traffic?: Traffic | undefined;
}): http.Server {
  const server = http.createServer(serverOptions(options.tuning));
  serveProxy(server, { ...options, scheme: 'http' });
  server.on('connection', options.track);
  return server;
}
