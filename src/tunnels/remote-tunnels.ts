// The tunnels other instances hold, as this instance's public listeners and edges see them: read
// from the store (the leased rows every instance writes, with their route claims and the address
// of their instance's peer listener), held in memory, and read again when any instance's live
// agents change (PostgreSQL NOTIFY at each sync) or every few seconds (SQLite, and a PostgreSQL
// connection that missed notifications). A public connection for one of them is carried to its
// instance over a peer link (peer-links.ts).
//
// ClusterDirectory answers the public listeners: this process's own tunnels first (no hop), then
// the others'. So a pooled URL with tunnels on several instances is served by the tunnels of the
// instance a connection reaches, and by another instance's only when it holds none.
import type { Logger } from 'pino';
import type { EndpointProto, IngressDirectory, TunnelTarget } from '../core/live-agents.js';
import { LIVE_AGENTS_CHANNEL, remoteTunnels, type RemoteTunnelRow } from '../db/live-agents.js';
import type { Store } from '../db/store.js';
import type { AgentEndpointModules } from '../edges/agent-options.js';
import { isRefusal } from '../lib/muxado/frame.js';
import type { PeerLinks } from './peer-links.js';
import { hasLabels, LabelTurns, RouteLookups, takeTurn } from './registry.js';

/** How often the rows are read when no notification comes (SQLite always polls at this pace). */
const DEFAULT_POLL_MS = 1000;
const ENDPOINT_PROTOS = new Set<string>(['http', 'https', 'tls', 'tcp']);

export interface RemoteTunnelsOptions {
  store: Store;
  instanceId: string;
  links: PeerLinks;
  log: Logger;
  /** The modules an endpoint's sealed Bind options ask for (unsealed and compiled by the caller); undefined when none. */
  modulesOf(sealed: string, tunnelId: string): AgentEndpointModules | undefined;
  pollMs?: number;
}

interface Remote {
  target: TunnelTarget;
  labels?: Record<string, string>;
}

interface Snapshot {
  routes: Map<string, { tunnels: Remote[]; next: number }>;
  labeled: Map<string, Remote[]>;
  /** Sealed options already compiled, by tunnel id, so an unchanged tunnel is not compiled again. */
  compiled: Map<string, { sealed: string; modules: AgentEndpointModules | undefined }>;
}

const empty = (): Snapshot => ({ routes: new Map(), labeled: new Map(), compiled: new Map() });

export class RemoteTunnels extends RouteLookups implements IngressDirectory {
  private snapshot: Snapshot = empty();
  private readonly labeledTurns = new LabelTurns();
  private timer?: NodeJS.Timeout;
  private watch?: { close(): Promise<void> };
  private reading?: Promise<void>;
  private again = false;
  private closed = false;
  private failing = false;
  private readonly observers = new Set<() => void>();

  constructor(private readonly options: RemoteTunnelsOptions) {
    super();
  }

  /** Reads the rows once, then keeps them fresh. */
  async start(): Promise<void> {
    await this.refresh();
    const pollMs = this.options.pollMs ?? DEFAULT_POLL_MS;
    this.timer = setInterval(() => void this.refresh(), this.options.store.listen ? pollMs * 5 : pollMs);
    this.timer.unref();
    if (this.options.store.listen) {
      this.watch = await this.options.store.listen(LIVE_AGENTS_CHANNEL, {
        message: () => void this.refresh(),
        resumed: () => void this.refresh(),
        error: () => {},
      });
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.watch?.close();
    await this.reading;
  }

  /** Reads the rows again; a read asked for while one runs runs once more after it. */
  refresh(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    this.reading = (async () => {
      do {
        this.again = false;
        await this.readOnce();
      } while (this.again && !this.closed);
    })().finally(() => (this.reading = undefined));
    return this.reading;
  }

  private async readOnce(): Promise<void> {
    if (this.closed) return;
    let rows: RemoteTunnelRow[];
    try {
      rows = await remoteTunnels(this.options.store, this.options.instanceId, new Date().toISOString());
    } catch (err) {
      // The last rows are kept: the instances they name still serve their agents.
      if (!this.failing) this.options.log.warn({ err }, "other instances' tunnels could not be read; the last ones known are used");
      this.failing = true;
      return;
    }
    if (this.failing) this.options.log.info("other instances' tunnels are read again");
    this.failing = false;
    this.snapshot = this.build(rows);
    for (const observer of this.observers) observer();
  }

  /** Calls `observer` after each reading of the rows; returns what stops it. */
  observe(observer: () => void): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  private build(rows: RemoteTunnelRow[]): Snapshot {
    const next = empty();
    const seen = new Set<string>();
    for (const row of rows) {
      const remote = this.remoteOf(row, next);
      if (!remote) continue;
      if (row.route !== null) {
        const on = next.routes.get(row.route) ?? { tunnels: [], next: this.snapshot.routes.get(row.route)?.next ?? 0 };
        on.tunnels.push(remote);
        next.routes.set(row.route, on);
      }
      // A tunnel pooled on one route has one row per claim; its labels are listed once.
      if (remote.labels && !seen.has(row.id)) {
        const of = next.labeled.get(row.account_id) ?? [];
        of.push(remote);
        next.labeled.set(row.account_id, of);
      }
      seen.add(row.id);
    }
    return next;
  }

  private remoteOf(row: RemoteTunnelRow, next: Snapshot): Remote | undefined {
    const { links } = this.options;
    let labels: Record<string, string> | undefined;
    if (row.labels !== null) {
      try {
        labels = JSON.parse(row.labels) as Record<string, string>;
      } catch {
        return undefined;
      }
    }
    const proto = (row.endpoint_proto !== null && ENDPOINT_PROTOS.has(row.endpoint_proto) ? row.endpoint_proto : 'https') as EndpointProto;
    let modules: AgentEndpointModules | undefined;
    if (row.sealed_options !== null) {
      const known = this.snapshot.compiled.get(row.id) ?? next.compiled.get(row.id);
      if (known?.sealed === row.sealed_options) modules = known.modules;
      else {
        try {
          modules = this.options.modulesOf(row.sealed_options, row.id);
        } catch (err) {
          // Served with no modules would serve it unprotected: not served here at all.
          this.options.log.warn({ err, tunnel_id: row.id }, "another instance's endpoint options could not be read; its traffic is not carried from here");
          return undefined;
        }
      }
      next.compiled.set(row.id, { sealed: row.sealed_options, modules });
    }
    const peer = row.peer_address;
    const tunnelId = row.id;
    const target: TunnelTarget = {
      tunnelId,
      accountId: row.account_id,
      proto,
      ...(row.endpoint_id !== null && {
        endpoint: {
          id: row.endpoint_id,
          ...(row.endpoint_domain_id !== null && { domainId: row.endpoint_domain_id }),
          ...(row.endpoint_tcp_addr_id !== null && { tcpAddrId: row.endpoint_tcp_addr_id }),
          ...(modules && { modules }),
        },
      }),
      connect: (clientAddr) => {
        const stream = links.open(peer, { tunnelId, clientAddr });
        // Refused: that instance holds the tunnel no more; the rows are read again rather than at the next notice.
        stream.once('error', (err) => {
          if (isRefusal(err)) void this.refresh();
        });
        return stream;
      },
    };
    return { target, ...(labels && { labels }) };
  }

  protected pick(route: string): TunnelTarget | undefined {
    return takeTurn(this.snapshot.routes.get(route))?.target;
  }

  /** The ports of the other instances' TCP tunnels, which this instance listens on for them. */
  tcpPorts(): number[] {
    const ports: number[] = [];
    for (const route of this.snapshot.routes.keys()) if (route.startsWith('tcp:')) ports.push(Number(route.slice('tcp:'.length)));
    return ports;
  }

  // ---- IngressDirectory (the lookups by route are RouteLookups') ----

  labeled(accountId: string, labels: Readonly<Record<string, string>>): TunnelTarget | undefined {
    const wanted = Object.entries(labels);
    const matching = (this.snapshot.labeled.get(accountId) ?? []).filter((r) => hasLabels(r.labels!, wanted));
    return this.labeledTurns.next(accountId, wanted, matching)?.target;
  }
}

/** This process's tunnels first, then those of the other instances. */
export class ClusterDirectory implements IngressDirectory {
  constructor(
    private readonly local: IngressDirectory,
    private readonly remote: IngressDirectory,
  ) {}

  http(host: string, scheme: 'http' | 'https'): TunnelTarget | undefined {
    return this.local.http(host, scheme) ?? this.remote.http(host, scheme);
  }

  tls(serverName: string): TunnelTarget | undefined {
    return this.local.tls(serverName) ?? this.remote.tls(serverName);
  }

  tcp(port: number): TunnelTarget | undefined {
    return this.local.tcp(port) ?? this.remote.tcp(port);
  }

  internal(accountId: string, url: string): TunnelTarget | undefined {
    return this.local.internal(accountId, url) ?? this.remote.internal(accountId, url);
  }

  labeled(accountId: string, labels: Readonly<Record<string, string>>): TunnelTarget | undefined {
    return this.local.labeled(accountId, labels) ?? this.remote.labeled(accountId, labels);
  }
}
