// Public TCP listeners: one listening socket per bound TCP tunnel or TCP edge address, on
// EDGEPLANE_INGRESS_TCP_HOST at its port, opened when the agent binds (or the edge gains the
// address) and closed when the tunnel goes (or the edge loses it). A tunnel's connections each
// become a stream to the agent, joined both ways; an edge's go through its modules first.
import net from 'node:net';
import type { Logger } from 'pino';
import { clientAddress } from '../ingress/forwarding.js';
import { joinStreams } from '../lib/stream/join.js';
import type { TunnelTarget } from '../core/live-agents.js';
import { Traffic } from '../ingress/traffic-metrics.js';

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
  /** Where the connections joined to agents directly are counted and logged (default: counted, published nowhere). */
  traffic?: Traffic;
}

export class TcpIngress {
  /** Ports listened on or being opened, with how to stop each once listening. */
  private readonly ports = new Map<number, (() => void) | undefined>();
  /** Ports listened on for another instance's tunnels: given up to a tunnel bound here. */
  private readonly remote = new Map<number, Promise<() => Promise<void>>>();
  /** When each port's listening socket has closed (its 'close' event). */
  private readonly closings = new Map<number, Promise<void>>();
  private readonly traffic: Traffic;
  /** Every port's listening server, and every connection open, across ports. */
  private readonly servers = new Set<net.Server>();
  private readonly connections = new Set<net.Socket>();
  /** Set by stopAccepting(): no port is listened on any more. */
  private draining = false;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly options: TcpIngressOptions) {
    this.traffic = options.traffic ?? new Traffic();
  }

  /** Whether this process neither listens on `port` nor is opening it (for another instance's tunnel does not count). */
  isFree(port: number): boolean {
    return !this.ports.has(port) || this.remote.has(port);
  }

  /**
   * Whether `port` can be listened on now: free here, and held by no other socket of the machine
   * (a program's listener, or an outgoing connection's local port, which the pool's range shares
   * with the system's ephemeral ports). A probe listens and closes at once.
   */
  bindable(port: number): Promise<boolean> {
    // Another instance's tunnel holds it: a pool pick passes it over (a rebind of that tunnel here asks isFree only).
    if (!this.isFree(port) || this.remote.has(port)) return Promise.resolve(false);
    return new Promise((resolve) => {
      const probe = net.createServer();
      probe.once('error', () => resolve(false));
      probe.listen({ host: this.options.host, port, exclusive: true }, () => probe.close(() => resolve(true)));
    });
  }

  /** Listens for a tunnel: each connection a stream to the agent. A listener for another instance's tunnel on the port is closed first. */
  async listen(port: number, target: TunnelTarget): Promise<() => void> {
    await this.stopRemote(port);
    return this.listenWith(port, (socket, client) => this.serveTunnel(target, socket, client));
  }

  /** One connection for a tunnel: through the edge pipeline when its endpoint asks, else a stream to the agent; none (it went): closed. */
  serveTunnel(target: TunnelTarget | undefined, socket: net.Socket, client: { ip: string; addr: string }): void {
    if (!target) return void socket.destroy();
    if (this.options.agentStreams?.(target, socket, client)) return;
    const visit = this.traffic.connection(socket, 'tcp', client.ip);
    visit.to('endpoint', target.endpoint?.id ?? target.tunnelId, true);
    let stream;
    try {
      stream = target.connect(client.addr);
      visit.sentTo('tunnel', target.tunnelId);
    } catch (err) {
      this.options.log.debug({ err: (err as Error).message, tunnel_id: target.tunnelId }, 'TCP connection refused: the tunnel is gone');
      socket.destroy();
      return;
    }
    joinStreams(socket, stream);
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
    const closing = new Promise<void>((resolve) => server.once('close', () => resolve()));
    this.closings.set(port, closing);
    void closing.then(() => this.closings.get(port) === closing && this.closings.delete(port));
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
   * Listens on the port of another instance's TCP tunnel, each connection handed to `onConnection`
   * (which finds the tunnel then); false when the port is taken here or cannot be listened on.
   */
  async listenForRemote(port: number, onConnection: (socket: net.Socket, client: { ip: string; addr: string }) => void): Promise<boolean> {
    if (this.ports.has(port)) return false;
    const opening = this.listenWith(port, onConnection).then((stop) => async () => {
      stop();
      await this.released(port);
    });
    this.remote.set(port, opening);
    try {
      await opening;
      return true;
    } catch (err) {
      this.remote.delete(port);
      this.options.log.warn({ err, port }, "the port of another instance's TCP endpoint could not be listened on here");
      return false;
    }
  }

  /** Stops listening on a port for another instance's tunnel (none there: nothing). */
  async stopRemote(port: number): Promise<void> {
    const opening = this.remote.get(port);
    if (!opening) return;
    this.remote.delete(port);
    const stop = await opening.catch(() => undefined);
    await stop?.();
  }

  /**
   * Whether the port is listened on for another instance's tunnel, once that settles: true once
   * its listener is open; false once a listener being stopped has closed (or there is none).
   */
  remoteListening(port: number): Promise<boolean> {
    const opening = this.remote.get(port);
    if (!opening) return this.released(port).then(() => false);
    return opening.then(
      () => true,
      () => false,
    );
  }

  /** The ports listened on for other instances' tunnels. */
  remotePorts(): number[] {
    return [...this.remote.keys()];
  }

  /** Resolves once the port's listening socket has closed, after listenWith's stop. */
  private released(port: number): Promise<void> {
    return this.closings.get(port) ?? Promise.resolve();
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
    this.remote.clear();
    for (const stop of [...this.ports.values()]) stop?.();
  }

  private idle(): void {
    for (const resolve of this.idleWaiters) resolve();
    this.idleWaiters = [];
  }
}
