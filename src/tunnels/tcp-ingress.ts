// Public TCP listeners: one listening socket per bound TCP tunnel or TCP edge address, on
// EDGEPLANE_INGRESS_TCP_HOST at its port, opened when the agent binds (or the edge gains the
// address) and closed when the tunnel goes (or the edge loses it). A tunnel's connections each
// become a stream to the agent, joined both ways; an edge's go through its modules first.
import net from 'node:net';
import type { Logger } from 'pino';
import { clientAddress } from '../ingress/forwarding.js';
import { joinStreams } from '../lib/stream/join.js';
import type { TunnelTarget } from '../core/live-agents.js';

export interface TcpIngressOptions {
  host: string;
  log: Logger;
  /** Connections open at once per port; more are closed at once. */
  maxConnectionsPerPort?: number;
  /**
   * Serves a tunnel's connection through the edge pipeline when its endpoint has options or an
   * endpoint configuration (true: taken); else the connection is joined to the agent directly.
   */
  agentStreams?: (target: TunnelTarget, socket: net.Socket, client: { ip: string; addr: string }) => boolean;
}

export class TcpIngress {
  /** Ports listened on or being opened, with how to stop each once listening. */
  private readonly ports = new Map<number, (() => void) | undefined>();
  /** Every port's listening server, and every connection open, across ports. */
  private readonly servers = new Set<net.Server>();
  private readonly connections = new Set<net.Socket>();
  /** Set by stopAccepting(): no port is listened on any more. */
  private draining = false;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly options: TcpIngressOptions) {}

  /** Whether this process neither listens on `port` nor is opening it. */
  isFree(port: number): boolean {
    return !this.ports.has(port);
  }

  /**
   * Whether `port` can be listened on now: free here, and held by no other socket of the machine
   * (a program's listener, or an outgoing connection's local port, which the pool's range shares
   * with the system's ephemeral ports). A probe listens and closes at once.
   */
  bindable(port: number): Promise<boolean> {
    if (!this.isFree(port)) return Promise.resolve(false);
    return new Promise((resolve) => {
      const probe = net.createServer();
      probe.once('error', () => resolve(false));
      probe.listen({ host: this.options.host, port, exclusive: true }, () => probe.close(() => resolve(true)));
    });
  }

  /** Listens for a tunnel: each connection a stream to the agent. */
  listen(port: number, target: TunnelTarget): Promise<() => void> {
    const { log } = this.options;
    return this.listenWith(port, (socket, client) => {
      if (this.options.agentStreams?.(target, socket, client)) return;
      const clientAddr = client.addr;
      let stream;
      try {
        stream = target.connect(clientAddr);
      } catch (err) {
        log.debug({ err: (err as Error).message, tunnel_id: target.tunnelId }, 'TCP connection refused: the tunnel is gone');
        socket.destroy();
        return;
      }
      joinStreams(socket, stream);
    });
  }

  /**
   * Claims the port at once (so two binds cannot race for it), then listens, handing each
   * connection to `onConnection` with the client's address; the function returned stops.
   */
  async listenWith(port: number, onConnection: (socket: net.Socket, client: { ip: string; addr: string }) => void): Promise<() => void> {
    if (this.draining) throw new Error('the server is shutting down');
    if (this.ports.has(port)) throw new Error(`port ${port} is already in use here`);
    this.ports.set(port, undefined);
    const { log } = this.options;
    const sockets = new Set<net.Socket>();
    const server = net.createServer({ allowHalfOpen: true, noDelay: true }, (socket) => {
      socket.on('error', () => {});
      sockets.add(socket);
      this.connections.add(socket);
      socket.once('close', () => {
        sockets.delete(socket);
        this.connections.delete(socket);
        if (this.connections.size === 0) this.idle();
      });
      onConnection(socket, clientAddress(socket));
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
    // Began to listen as a drain started: it accepts nothing, and its tunnel's release forgets the port.
    if (this.draining) server.close();
    else this.servers.add(server);
    const stop = (): void => {
      if (this.ports.get(port) !== stop) return;
      this.ports.delete(port);
      this.servers.delete(server);
      server.close();
      for (const socket of sockets) socket.destroy();
    };
    this.ports.set(port, stop);
    return stop;
  }

  /**
   * The start of a drain: every port stops accepting (and no port is listened on from now on),
   * while the connections open go on until they end or their tunnel goes.
   */
  stopAccepting(): void {
    this.draining = true;
    for (const server of this.servers) server.close();
    this.servers.clear();
  }

  /** Connections open on every port. */
  openConnections(): number {
    let open = 0;
    for (const socket of this.connections) if (!socket.destroyed) open++;
    return open;
  }

  /** Resolves once no connection is open on any port. */
  whenIdle(): Promise<void> {
    if (this.connections.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops every listener (one still opening is stopped by its tunnel's release). */
  close(): void {
    for (const stop of [...this.ports.values()]) stop?.();
  }

  private idle(): void {
    for (const resolve of this.idleWaiters) resolve();
    this.idleWaiters = [];
  }
}
