// The edges of every account, as this process enforces them: read at start, and read again for an
// account when its configuration revision moves (db/config-revisions.ts: NOTIFY on PostgreSQL, a
// poll of one small table on SQLite). Requests look edges up here, in memory; a reload swaps an
// account's snapshot whole, so a request sees one revision or the next, never half of each, and
// connections in flight keep the snapshot they started with.
import type { Logger } from 'pino';
import { readAcrossAccounts } from '../db/cross-account.js';
import { watchConfigChanges, type ConfigChange, type ConfigWatch } from '../db/config-revisions.js';
import { scopedRead } from '../db/scoped.js';
import type { Store } from '../db/store.js';
import type { CloudEndpoint } from './cloud-endpoints.js';
import { readAccountEdges, type AccountEdges, type HttpsEdge, type TcpEdge, type TlsEdge } from './edge-config.js';

export interface EdgeDirectoryOptions {
  store: Store;
  log: Logger;
  /** How often SQLite's revisions are read (default 250 ms). */
  pollMs?: number;
}

/** Reads of an account that fail are tried again after this long, then twice as long, up to a minute. */
const RETRY_MS = { first: 500, max: 60_000 };

export class EdgeDirectory {
  private readonly accounts = new Map<string, AccountEdges>();
  private httpsByHost = new Map<string, HttpsEdge>();
  private tlsByHost = new Map<string, TlsEdge>();
  private tcpByPort = new Map<number, TcpEdge>();
  /** Cloud endpoints by `scheme:host`. */
  private cloudByUrl = new Map<string, CloudEndpoint>();
  private readonly observers: (() => void)[] = [];
  private watch: ConfigWatch | undefined;
  /** Accounts to read again, and whether a reading runs now. */
  private pending = new Set<string>();
  private pendingAll = false;
  private running: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryMs = RETRY_MS.first;
  private closed = false;

  constructor(private readonly options: EdgeDirectoryOptions) {}

  /** Reads every account's edges, then follows changes. */
  async start(): Promise<void> {
    // Watching first: a change committed while the first reading runs is read again after it.
    this.watch = await watchConfigChanges(this.options.store, (change) => this.changed(change), {
      ...(this.options.pollMs !== undefined && { pollMs: this.options.pollMs }),
      onError: (err) => this.options.log.warn({ err }, 'edges: configuration changes could not be read; edges keep their last configuration'),
    });
    this.pendingAll = true;
    await this.drain();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    await this.watch?.close();
    await this.running;
  }

  /** Called after every reading of what the directory holds (TCP edges open and close their ports); the function returned stops it. */
  observe(onChange: () => void): () => void {
    this.observers.push(onChange);
    return () => {
      const at = this.observers.indexOf(onChange);
      if (at >= 0) this.observers.splice(at, 1);
    };
  }

  /** The HTTPS edge serving `host` (lower case, no port): its exact reserved domain, else a wildcard one over it. */
  httpsEdge(host: string): HttpsEdge | undefined {
    return byName(this.httpsByHost, host);
  }

  tlsEdge(serverName: string): TlsEdge | undefined {
    return byName(this.tlsByHost, serverName);
  }

  /**
   * The cloud endpoint serving `host` (lower case, no port) on the listener of `scheme`: its exact
   * name, else the nearest wildcard one over it (`*.example.com` serves `a.b.example.com`).
   */
  cloudEndpoint(host: string, scheme: 'http' | 'https'): CloudEndpoint | undefined {
    const exact = this.cloudByUrl.get(`${scheme}:${host}`);
    if (exact) return exact;
    const labels = host.split('.');
    for (let i = 1; i < labels.length - 1; i++) {
      const found = this.cloudByUrl.get(`${scheme}:*.${labels.slice(i).join('.')}`);
      if (found) return found;
    }
    return undefined;
  }

  tcpEdge(port: number): TcpEdge | undefined {
    return this.tcpByPort.get(port);
  }

  /** Every TCP edge's ports. */
  tcpPorts(): number[] {
    return [...this.tcpByPort.keys()];
  }

  account(accountId: string): AccountEdges | undefined {
    return this.accounts.get(accountId);
  }

  /** Resolves once every change told so far has been read (for tests and readiness). */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  private changed(change: ConfigChange): void {
    if (change === 'all') this.pendingAll = true;
    else for (const account of change) this.pending.add(account);
    void this.drain();
  }

  private drain(): Promise<void> {
    if (this.running) return this.running;
    if (this.closed || (!this.pendingAll && this.pending.size === 0)) return Promise.resolve();
    this.running = this.readPending().finally(() => {
      this.running = undefined;
    });
    return this.running.then(() => this.drain());
  }

  private async readPending(): Promise<void> {
    const all = this.pendingAll;
    const accounts = all ? await this.accountsWithEdges().catch((err: unknown) => this.failed(err, true)) : new Set(this.pending);
    if (!accounts) return;
    if (all) this.pendingAll = false;
    for (const account of accounts) this.pending.delete(account);
    const read = await Promise.allSettled(
      [...accounts].map(async (accountId) => ({
        accountId,
        edges: await scopedRead(this.options.store, { accountId }, (db) => readAccountEdges(db, accountId)),
      })),
    );
    let failures = 0;
    for (const [i, outcome] of read.entries()) {
      if (outcome.status === 'fulfilled') this.put(outcome.value.accountId, outcome.value.edges);
      else {
        failures++;
        this.pending.add([...accounts][i]!);
        this.options.log.warn({ err: outcome.reason as Error }, 'edges: an account’s edges could not be read; its edges keep their last configuration');
      }
    }
    this.reindex();
    if (failures > 0) this.failed(undefined, false);
    else this.retryMs = RETRY_MS.first;
  }

  /** A reading failed: it is tried again later, each time a little later. */
  private failed(err: unknown, all: boolean): undefined {
    if (err) this.options.log.warn({ err }, 'edges: the accounts with edges could not be read');
    if (all) this.pendingAll = true;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.drain(), this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MS.max);
    return undefined;
  }

  /** The accounts that have an edge, and those held now (whose edges may all be gone). */
  private async accountsWithEdges(): Promise<Set<string>> {
    const rows = await readAcrossAccounts(this.options.store, (reader) =>
      reader
        .selectFrom('https_edges')
        .select('account_id')
        .union(reader.selectFrom('tls_edges').select('account_id'))
        .union(reader.selectFrom('tcp_edges').select('account_id'))
        // Endpoint configurations apply to agent endpoints on the domains and addresses they are attached to.
        .union(reader.selectFrom('endpoint_configurations').select('account_id'))
        .union(reader.selectFrom('cloud_endpoints').select('account_id'))
        .execute(),
    );
    return new Set([...rows.map((r) => r.account_id), ...this.accounts.keys()]);
  }

  private put(accountId: string, edges: AccountEdges): void {
    const configurations = edges.endpointConfigurations;
    const attached = configurations !== undefined && configurations.byDomain.size + configurations.byAddr.size > 0;
    if (edges.https.length + edges.tls.length + edges.tcp.length + edges.cloud.length === 0 && !attached) this.accounts.delete(accountId);
    else this.accounts.set(accountId, edges);
  }

  /** The lookups rebuilt from every account's snapshot. Hostports are unique across accounts (the store's indexes). */
  private reindex(): void {
    const https = new Map<string, HttpsEdge>();
    const tls = new Map<string, TlsEdge>();
    const tcp = new Map<number, TcpEdge>();
    const cloud = new Map<string, CloudEndpoint>();
    for (const account of this.accounts.values()) {
      for (const endpoint of account.cloud) cloud.set(`${endpoint.scheme}:${endpoint.host}`, endpoint);
      for (const edge of account.https) for (const host of edge.hosts) https.set(host, edge);
      for (const edge of account.tls) for (const host of edge.hosts) tls.set(host, edge);
      for (const edge of account.tcp) for (const { port } of edge.addrs) tcp.set(port, edge);
    }
    this.httpsByHost = https;
    this.tlsByHost = tls;
    this.tcpByPort = tcp;
    this.cloudByUrl = cloud;
    for (const observer of [...this.observers]) observer();
  }
}

/** The exact name first, then a wildcard reserved domain one label above it (`*.example.com` serves `a.example.com`). */
function byName<T>(map: ReadonlyMap<string, T>, name: string): T | undefined {
  const exact = map.get(name);
  if (exact) return exact;
  const dot = name.indexOf('.');
  return dot > 0 ? map.get(`*${name.slice(dot)}`) : undefined;
}
