// Public ingress: the listeners public clients reach agents' endpoints through. main.ts starts it
// with the live tunnels (IngressDirectory) and the certificates to present.
import type http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import type { Logger } from 'pino';
import type { IngressDirectory } from '../core/live-agents.js';
import type { IngressCertificates } from './certificates.js';
import { createHttpListener, INGRESS_DEFAULTS, type IngressEdges, type IngressTuning } from './http.js';
import { createHttpsListener } from './https.js';
import type { Traffic } from './traffic-metrics.js';

export { INGRESS_DEFAULTS, type IngressEdges, type IngressTuning } from './http.js';

export interface IngressOptions {
  /** The HTTPS and TLS listener; off when undefined. */
  https?: { host: string; port: number };
  /** The plain HTTP listener; off when undefined. */
  http?: { host: string; port: number };
  directory: IngressDirectory;
  /** The edges configured through the API; without them only agents' endpoints are served. */
  edges?: IngressEdges;
  certificates: IngressCertificates;
  log: Logger;
  tuning?: IngressTuning;
  /** Where requests, connections and failed handshakes are counted and logged (default: counted, published nowhere). */
  traffic?: Traffic;
}

export interface Ingress {
  httpsAddress?: AddressInfo;
  httpAddress?: AddressInfo;
  /**
   * The start of a drain: the listening sockets close and idle keep-alive connections with them;
   * a request that still arrives on an open connection, and each request in flight whose answer
   * has not begun, is answered with `Connection: close`. Open connections go on.
   */
  stopAccepting(): void;
  /** What is open: HTTP requests in flight, and the other client connections (WebSockets, TLS passthrough, TLS edges, handshakes). */
  activity(): { requests: number; streams: number };
  /** Resolves once every client connection has closed. */
  whenIdle(): Promise<void>;
  /** Stops accepting, closes every open connection (and with it every agent stream), and resolves. */
  close(): Promise<void>;
}

function listen(server: http.Server, at: { host: string; port: number }): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(at.port, at.host, () => {
      server.removeListener('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

export async function startIngress(options: IngressOptions): Promise<Ingress> {
  const tuning = { ...INGRESS_DEFAULTS, ...options.tuning };
  const { directory, edges, certificates, log, traffic } = options;
  const open = new Set<Duplex>();
  let idleWaiters: (() => void)[] = [];
  const track = (socket: Duplex) => {
    open.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      if (open.size > 0) return;
      for (const resolve of idleWaiters) resolve();
      idleWaiters = [];
    });
  };
  /** Requests whose answer is not finished. */
  const responses = new Set<http.ServerResponse>();
  let draining = false;
  const servers: http.Server[] = [];
  const closed: Promise<void>[] = [];
  const stopped = new Set<http.Server>();
  const add = (server: http.Server) => {
    servers.push(server);
    // Made now: a server that stopped accepting emits 'close' once its last connection ends, maybe long before close().
    closed.push(new Promise((resolve) => server.once('close', () => resolve())));
    // Ahead of the proxy's own listener: counted, and told to close its connection once answered while draining.
    server.prependListener('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
      responses.add(res);
      if (draining) res.shouldKeepAlive = false;
      res.once('close', () => {
        responses.delete(res);
        // An answer that began before the drain kept its connection alive: idle now, it is closed.
        if (draining) setImmediate(() => server.closeIdleConnections());
      });
    });
  };
  const stopAccepting = () => {
    draining = true;
    for (const res of responses) if (!res.headersSent) res.shouldKeepAlive = false;
    for (const server of servers) {
      if (stopped.has(server)) continue;
      stopped.add(server);
      // node:http's close() also closes the idle connections.
      server.close();
    }
  };
  const close = async () => {
    stopAccepting();
    for (const server of servers) server.closeAllConnections();
    for (const socket of open) socket.destroy();
    await Promise.all(closed);
  };
  const result: Ingress = {
    stopAccepting,
    activity() {
      // Client connections as accepted (the TLS socket of an upgraded HTTPS connection is the same connection).
      let connections = 0;
      for (const socket of open) if (!socket.destroyed && socket instanceof net.Socket && !(socket instanceof tls.TLSSocket)) connections++;
      return { requests: responses.size, streams: Math.max(0, connections - responses.size) };
    },
    whenIdle: () => (open.size === 0 ? Promise.resolve() : new Promise((resolve) => idleWaiters.push(resolve))),
    close,
  };
  try {
    if (options.https) {
      const server = createHttpsListener({ directory, edges, certificates, log: log.child({ listener: 'https' }), tuning, track, traffic });
      add(server);
      server.on('error', (err) => log.error({ err }, 'ingress: HTTPS listener error'));
      result.httpsAddress = await listen(server, options.https);
    }
    if (options.http) {
      const server = createHttpListener({ directory, edges, log: log.child({ listener: 'http' }), tuning, track, traffic });
      add(server);
      server.on('error', (err) => log.error({ err }, 'ingress: HTTP listener error'));
      result.httpAddress = await listen(server, options.http);
    }
  } catch (err) {
    await close();
    throw err;
  }
  return result;
}
