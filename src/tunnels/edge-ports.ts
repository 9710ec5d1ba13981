// The ports of TCP edges: listened on while an edge serves the reserved address, closed when it no
// longer does, after every reading of the edges. A port an agent's TCP endpoint holds here is not
// taken from it; it is tried again at the next reading, and the edge serves it once it is free
// (an agent cannot bind an address an edge listens on: it is not free).
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { EdgeDirectory } from '../edges/edge-directory.js';
import type { StreamEdgeServer } from '../ingress/edge-stream.js';
import type { TcpIngress } from './tcp-ingress.js';

/** Emits `listening` and `closed` with a port, as edges' ports open and close. */
export class EdgePorts extends EventEmitter<{ listening: [port: number]; closed: [port: number] }> {
  /** Ports listened on for edges, and how to stop each. */
  private readonly open = new Map<number, () => void>();
  private readonly opening = new Set<number>();
  private stopObserving: (() => void) | undefined;
  private closed = false;

  constructor(private readonly options: { edges: EdgeDirectory; tcp: TcpIngress; server: StreamEdgeServer; log: Logger }) {
    super();
  }

  /** Whether this process listens on the port for an edge now. */
  isListening(port: number): boolean {
    return this.open.has(port);
  }

  start(): void {
    this.stopObserving = this.options.edges.observe(() => this.sync());
    this.sync();
  }

  /** A drain began: the edges' changes open and close no port any more (the open ones stop accepting with the TCP listeners). */
  stopWatching(): void {
    this.closed = true;
    this.stopObserving?.();
  }

  close(): void {
    this.stopWatching();
    for (const stop of this.open.values()) stop();
    this.open.clear();
  }

  private sync(): void {
    const { edges, tcp, server, log } = this.options;
    const wanted = new Set(edges.tcpPorts());
    for (const [port, stop] of this.open) {
      if (wanted.has(port)) continue;
      stop();
      this.open.delete(port);
      log.info({ port }, 'edge: TCP port closed');
      this.emit('closed', port);
    }
    for (const port of wanted) {
      if (this.open.has(port) || this.opening.has(port) || !tcp.isFree(port)) continue;
      this.opening.add(port);
      tcp
        .listenWith(port, (socket, client) => {
          // The edge that serves the port now: a connection after a change meets the new configuration.
          const edge = edges.tcpEdge(port);
          if (!edge) return void socket.destroy();
          server.serve(socket, edge, client);
        })
        .then(
          (stop) => {
            this.opening.delete(port);
            if (this.closed || !edges.tcpPorts().includes(port)) return void stop();
            this.open.set(port, stop);
            log.info({ port, edge_id: edges.tcpEdge(port)?.id }, 'edge: TCP port listening');
            this.emit('listening', port);
          },
          (err: unknown) => {
            this.opening.delete(port);
            log.warn({ err, port }, 'edge: a TCP edge’s port could not be listened on; it is tried again at the next change');
          },
        );
    }
  }
}
