// Public ingress: the listeners public clients reach agents' endpoints through. main.ts starts it
// with the live tunnels (IngressDirectory) and the certificates to present.
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
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
  const track = (socket: Duplex) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  };
  const servers: http.Server[] = [];
  const close = async () => {
    await Promise.all(
      servers.map(
        (server) =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeAllConnections();
            for (const socket of open) socket.destroy();
          }),
      ),
    );
  };
  const result: Ingress = { close };
  try {
    if (options.https) {
      const server = createHttpsListener({ directory, edges, certificates, log: log.child({ listener: 'https' }), tuning, track, traffic });
      servers.push(server);
      server.on('error', (err) => log.error({ err }, 'ingress: HTTPS listener error'));
      result.httpsAddress = await listen(server, options.https);
    }
    if (options.http) {
      const server = createHttpListener({ directory, edges, log: log.child({ listener: 'http' }), tuning, track, traffic });
      servers.push(server);
      server.on('error', (err) => log.error({ err }, 'ingress: HTTP listener error'));
      result.httpAddress = await listen(server, options.http);
    }
  } catch (err) {
    await close();
    throw err;
  }
  return result;
}
