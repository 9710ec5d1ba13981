// Public TCP endpoints: one listening socket per bound TCP tunnel, on EDGEPLANE_INGRESS_TCP_HOST
// at the tunnel's port, opened when the agent binds and closed when the tunnel goes. Each
// connection becomes a stream to the agent, joined both ways.
import net from 'node:net';
import type { Logger } from 'pino';
import { joinStreams } from '../lib/stream/join.js';
import type { TunnelTarget } from '../core/live-agents.js';

export interface TcpIngressOptions {
  host: string;
  log: Logger;
  /** Connections open at once per port; more are closed at once. */
  maxConnectionsPerPort?: number;
}

export class TcpIngress {
  /** Ports listened on or being opened, with how to stop each once listening. */
  private readonly ports = new Map<number, (() => void) | undefined>();

  constructor(private readonly options: TcpIngressOptions) {}

  /** Whether this process neither listens on `port` nor is opening it. */
  isFree(port: number): boolean {
    return !this.ports.has(port);
  }

  /** Claims the port at once (so two binds cannot race for it), then listens; the function returned stops. */
  async listen(port: number, target: TunnelTarget): Promise<() => void> {
    if (this.ports.has(port)) throw new Error(`port ${port} is already in use here`);
    this.ports.set(port, undefined);
    const { log } = this.options;
    const sockets = new Set<net.Socket>();
    const server = net.createServer({ allowHalfOpen: true, noDelay: true }, (socket) => {
      const clientAddr = `${socket.remoteAddress ?? ''}:${socket.remotePort ?? 0}`;
      socket.on('error', () => {});
      let stream;
      try {
        stream = target.connect(clientAddr);
      } catch (err) {
        log.debug({ err: (err as Error).message, tunnel_id: target.tunnelId }, 'TCP connection refused: the tunnel is gone');
        socket.destroy();
        return;
      }
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      joinStreams(socket, stream);
    });
    server.maxConnections = this.options.maxConnectionsPerPort ?? 10_000;
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ host: this.options.host, port }, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (err) {
      this.ports.delete(port);
      throw err;
    }
    server.on('error', (err) => log.warn({ err, port }, 'TCP endpoint listener error'));
    const stop = (): void => {
      if (this.ports.get(port) !== stop) return;
      this.ports.delete(port);
      server.close();
      for (const socket of sockets) socket.destroy();
    };
    this.ports.set(port, stop);
    return stop;
  }

  /** Stops every listener (one still opening is stopped by its tunnel's release). */
  close(): void {
    for (const stop of [...this.ports.values()]) stop?.();
  }
}
