// The agent sessions live in this process: who they are (account, credential, what the agent said
// of itself), how to reach and end them, and the tunnels they hold. In memory only: a session is a
// connection to this process (the many-instance records are written from here, live-records.ts).
// Recently ended sessions are remembered for a while, so that an agent that reconnects keeps its
// session id (resumption); that memory is bounded.
//
// The tunnels are indexed by route (`https:app.example.com`, `tls:…`, `tcp:10001`): that index is
// what the public listeners ask (IngressDirectory), and what a bind is checked against (a route is
// one tunnel's, unless every tunnel on it asked for pooling: then connections take turns).
import { timingSafeEqual } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { newId } from '../core/ids.js';
import type { EndpointProto, IngressDirectory, LiveSession, LiveState, LiveTunnel, TunnelTarget } from '../core/live-agents.js';

export interface AgentSessionInfo {
  id: string;
  accountId: string;
  credentialId: string;
  os: string;
  /** The agent's version, as it reports it. */
  version: string;
  clientType: string;
  metadata: string;
  /** The agent's address as this process sees it. */
  ip: string;
  startedAt: Date;
  /** The opaque cookie of the Auth reply: the agent must present it to resume the session. */
  cookie: string;
  /**
   * Why the agent will not run a command, as it said at Auth: undefined or '' when it will
   * (an agent too old to say is sent the command, and answers for itself).
   */
  unsupported?: { restart?: string; stop?: string; update?: string };
  /** How the agent came in: `ngrok/tls` (the default) or `ssh`. */
  transport?: string;
}

/** How the registry reaches a session's connection. */
export interface SessionHandle {
  end(reason: string): void;
  /** A new server-opened stream; throws when the session has ended. */
  open(): Duplex;
}

interface Live {
  info: AgentSessionInfo;
  handle: SessionHandle;
  tunnels: Set<string>;
}

/** A tunnel and what serves it: its record, where public connections for it go, its route. */
export interface HeldTunnel {
  live: LiveTunnel;
  target: TunnelTarget;
  /** The route key it serves (none for a labeled tunnel, which edges route to later). */
  route?: string;
  pooling: boolean;
  /** Called once when the tunnel goes (unbound, or its session ended): a TCP listener closes. */
  release?: () => void;
}

/** Cookies compared in constant time (they are secrets of the session's agent). */
export function sameCookie(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && a.length > 0 && timingSafeEqual(a, b);
}

/** The route of an endpoint: `https:host`, `http:host`, `tls:host` or `tcp:port`. */
export function routeKey(proto: EndpointProto, hostOrPort: string | number): string {
  return `${proto}:${hostOrPort}`;
}

/**
 * The route of an internal endpoint (`https://name.internal`): the account's own, so two accounts
 * may each bind the same internal name, and no public lookup (`https:host`) ever finds it.
 */
export function internalRouteKey(accountId: string, url: string): string {
  return `internal:${accountId}:${url}`;
}

/** The route of `host` that `pick` has: the exact name first, then the wildcard endpoints that cover it, nearest first. */
export function pickByName<T>(proto: EndpointProto, host: string, pick: (route: string) => T | undefined): T | undefined {
  const exact = pick(routeKey(proto, host));
  if (exact !== undefined) return exact;
  const labels = host.split('.');
  for (let i = 1; i < labels.length - 1; i++) {
    const found = pick(routeKey(proto, `*.${labels.slice(i).join('.')}`));
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Whether a tunnel's labels include every wanted label with the same value. */
export function hasLabels(has: Readonly<Record<string, string>>, wanted: readonly (readonly [string, string])[]): boolean {
  return wanted.every(([name, value]) => has[name] === value);
}

/** A key naming one label set, the same whatever the order its labels were given in. */
export function labelSetKey(accountId: string, wanted: readonly (readonly [string, string])[]): string {
  return `${accountId}\n${JSON.stringify([...wanted].sort(([a], [b]) => (a < b ? -1 : 1)))}`;
}

/** Which of a route's tunnels is next: each in turn. */
export function takeTurn<T>(on: { tunnels: T[]; next: number } | undefined): T | undefined {
  if (!on || on.tunnels.length === 0) return undefined;
  const tunnel = on.tunnels[on.next % on.tunnels.length]!;
  on.next = (on.next + 1) % on.tunnels.length;
  return tunnel;
}

/**
 * Whose turn it is among the tunnels matching a label set, per label set asked for. Bounded: a
 * counter per distinct label set, forgotten in bulk past 10 000.
 */
export class LabelTurns {
  private readonly turns = new Map<string, number>();

  next<T>(accountId: string, wanted: readonly (readonly [string, string])[], matching: readonly T[]): T | undefined {
    if (matching.length === 0) return undefined;
    const key = labelSetKey(accountId, wanted);
    const turn = this.turns.get(key) ?? 0;
    if (this.turns.size >= 10_000) this.turns.clear();
    this.turns.set(key, (turn + 1) % matching.length);
    return matching[turn % matching.length];
  }
}

/**
 * The lookups of IngressDirectory that name a route: a name (exact, then the wildcards that cover
 * it), a TCP port, an account's internal URL; each is the tunnel whose turn it is on that route
 * (`pick`), for this process's tunnels as for the other instances'.
 */
export abstract class RouteLookups {
  protected abstract pick(route: string): TunnelTarget | undefined;

  http(host: string, scheme: 'http' | 'https'): TunnelTarget | undefined {
    return pickByName(scheme, host, (route) => this.pick(route));
  }

  tls(serverName: string): TunnelTarget | undefined {
    return pickByName('tls', serverName, (route) => this.pick(route));
  }

  tcp(port: number): TunnelTarget | undefined {
    return this.pick(routeKey('tcp', port));
  }

  internal(accountId: string, url: string): TunnelTarget | undefined {
    return this.pick(internalRouteKey(accountId, url));
  }
}

export interface RegistryOptions {
  /** How long an ended session's id can be resumed (default 10 minutes). */
  resumeWindowMs?: number;
  /** Ended sessions remembered at most (default 10 000); the oldest are forgotten first. */
  maxRemembered?: number;
  now?: () => number;
  /** Called after sessions or tunnels change (the many-instance records sync soon after). */
  onChange?: () => void;
  /** The region sessions are listed in. */
  region?: string;
}

export class AgentSessionRegistry extends RouteLookups implements IngressDirectory, LiveState {
  private readonly live = new Map<string, Live>();
  private readonly held = new Map<string, HeldTunnel>();
  /** Route key → the tunnels on it, in bind order, and whose turn is next. */
  private readonly routes = new Map<string, { tunnels: HeldTunnel[]; next: number }>();
  /** Labeled tunnels by account, in bind order, and whose turn is next per label set asked for. */
  private readonly labeledOf = new Map<string, Set<HeldTunnel>>();
  private readonly labeledTurns = new LabelTurns();
  private onChange: () => void;
  private readonly region: string;
  /** Ended sessions by id: their credential and when they ended, oldest first (Map order). */
  private readonly ended = new Map<string, { credentialId: string; cookie: string; endedAt: number }>();
  private readonly resumeWindowMs: number;
  private readonly maxRemembered: number;
  private readonly now: () => number;
  /** Streams open to agents for public connections (Proxy streams), for /metrics. */
  private proxyStreams = 0;

  constructor(options: RegistryOptions = {}) {
    super();
    this.resumeWindowMs = options.resumeWindowMs ?? 10 * 60_000;
    this.maxRemembered = options.maxRemembered ?? 10_000;
    this.now = options.now ?? Date.now;
    this.onChange = options.onChange ?? (() => {});
    this.region = options.region ?? 'us';
  }

  /**
   * The id a new session of this credential takes: the one the agent asks for when it names a
   * live or recently ended session of the same credential and presents that session's cookie,
   * else a new one.
   */
  sessionIdFor(credentialId: string, requested: string, cookie: string): { id: string; resumed: boolean } {
    if (requested !== '') {
      const live = this.live.get(requested)?.info;
      if (live?.credentialId === credentialId && sameCookie(live.cookie, cookie)) return { id: requested, resumed: true };
      const ended = this.ended.get(requested);
      if (ended?.credentialId === credentialId && sameCookie(ended.cookie, cookie) && this.now() - ended.endedAt <= this.resumeWindowMs)
        return { id: requested, resumed: true };
    }
    return { id: newId('ts'), resumed: false };
  }

  /**
   * Records a session. A live session with the same id (the agent reconnected before its old
   * connection was noticed dead) is ended first: one connection per session id.
   */
  add(info: AgentSessionInfo, handle: SessionHandle): void {
    const previous = this.live.get(info.id);
    if (previous) {
      this.dropSession(previous);
      previous.handle.end('the agent resumed this session on a new connection');
    }
    this.ended.delete(info.id);
    this.live.set(info.id, { info, handle, tunnels: new Set() });
    this.onChange();
  }

  /** Forgets a session that ended (no-op when `info` was already replaced by a resumption). */
  remove(info: AgentSessionInfo): void {
    const live = this.live.get(info.id);
    if (live?.info !== info) return;
    this.dropSession(live);
    this.ended.set(info.id, { credentialId: info.credentialId, cookie: info.cookie, endedAt: this.now() });
    while (this.ended.size > this.maxRemembered) this.ended.delete(this.ended.keys().next().value!);
  }

  /** Whom to tell of changes from now on (the many-instance records), in place of the constructor's. */
  observe(onChange: () => void): void {
    this.onChange = onChange;
  }

  /** Counts a Proxy stream as open until it closes (one listener; read at scrape time). */
  proxyStream<S extends Duplex>(stream: S): S {
    this.proxyStreams++;
    stream.once('close', () => this.proxyStreams--);
    return stream;
  }

  /** Proxy streams open now. */
  get openProxyStreams(): number {
    return this.proxyStreams;
  }

  /** A live session's handle. */
  handleOf(sessionId: string): SessionHandle | undefined {
    return this.live.get(sessionId)?.handle;
  }

  /** A live session's record. */
  infoOf(sessionId: string): AgentSessionInfo | undefined {
    return this.live.get(sessionId)?.info;
  }

  private dropSession(live: Live): void {
    this.live.delete(live.info.id);
    for (const id of [...live.tunnels]) this.removeTunnel(id);
    this.onChange();
  }

  // ---- Tunnels ----

  /**
   * The tunnel on this route that a new bind would collide with: undefined when the route is free,
   * or when both the bind and every tunnel on it ask for pooling.
   */
  conflict(route: string, pooling: boolean): HeldTunnel | undefined {
    const on = this.routes.get(route)?.tunnels ?? [];
    return on.find((t) => !(pooling && t.pooling));
  }

  /** Records a tunnel of a live session; false when the session is gone. The caller checked `conflict`. */
  addTunnel(tunnel: HeldTunnel): boolean {
    const live = this.live.get(tunnel.live.sessionId);
    if (!live) return false;
    if (this.held.has(tunnel.live.id)) this.removeTunnel(tunnel.live.id);
    this.held.set(tunnel.live.id, tunnel);
    live.tunnels.add(tunnel.live.id);
    if (tunnel.route !== undefined) {
      const on = this.routes.get(tunnel.route) ?? { tunnels: [], next: 0 };
      on.tunnels.push(tunnel);
      this.routes.set(tunnel.route, on);
    }
    if (tunnel.live.labels) {
      const of = this.labeledOf.get(tunnel.live.accountId) ?? new Set();
      of.add(tunnel);
      this.labeledOf.set(tunnel.live.accountId, of);
    }
    this.onChange();
    return true;
  }

  /** Removes a tunnel (unbound, or its session ended); false when it was not held. */
  removeTunnel(id: string): boolean {
    const tunnel = this.held.get(id);
    if (!tunnel) return false;
    this.held.delete(id);
    this.live.get(tunnel.live.sessionId)?.tunnels.delete(id);
    if (tunnel.route !== undefined) {
      const on = this.routes.get(tunnel.route);
      if (on) {
        on.tunnels = on.tunnels.filter((t) => t !== tunnel);
        if (on.tunnels.length === 0) this.routes.delete(tunnel.route);
      }
    }
    const labeled = this.labeledOf.get(tunnel.live.accountId);
    if (labeled?.delete(tunnel) && labeled.size === 0) this.labeledOf.delete(tunnel.live.accountId);
    tunnel.release?.();
    this.onChange();
    return true;
  }

  tunnel(id: string): HeldTunnel | undefined {
    return this.held.get(id);
  }

  /** Tunnels of one session. */
  tunnelsOf(sessionId: string): HeldTunnel[] {
    return [...(this.live.get(sessionId)?.tunnels ?? [])].map((id) => this.held.get(id)!);
  }

  /** Tunnels of an account. */
  tunnelCount(accountId: string): number {
    let n = 0;
    for (const t of this.held.values()) if (t.live.accountId === accountId) n++;
    return n;
  }

  protected pick(route: string): TunnelTarget | undefined {
    return takeTurn(this.routes.get(route))?.target;
  }

  // ---- IngressDirectory (the lookups by route are RouteLookups') ----

  labeled(accountId: string, labels: Readonly<Record<string, string>>): TunnelTarget | undefined {
    const wanted = Object.entries(labels);
    const matching: HeldTunnel[] = [];
    for (const tunnel of this.labeledOf.get(accountId) ?? []) {
      if (hasLabels(tunnel.live.labels!, wanted)) matching.push(tunnel);
    }
    return this.labeledTurns.next(accountId, wanted, matching)?.target;
  }

  // ---- LiveState ----

  sessions(): LiveSession[] {
    return [...this.live.values()].map(({ info }) => ({
      id: info.id,
      accountId: info.accountId,
      credentialId: info.credentialId,
      os: info.os,
      agentVersion: info.version,
      metadata: info.metadata,
      ip: info.ip,
      region: this.region,
      transport: info.transport ?? 'ngrok/tls',
      startedAt: info.startedAt,
    }));
  }

  tunnels(): LiveTunnel[] {
    return [...this.held.values()].map((t) => t.live);
  }

  list(accountId: string): AgentSessionInfo[] {
    return [...this.live.values()].filter((s) => s.info.accountId === accountId).map((s) => ({ ...s.info }));
  }

  count(accountId: string): number {
    let n = 0;
    for (const s of this.live.values()) if (s.info.accountId === accountId) n++;
    return n;
  }

  get size(): number {
    return this.live.size;
  }

  /** The credentials of the live sessions, each once. */
  credentialIds(): string[] {
    return [...new Set([...this.live.values()].map((s) => s.info.credentialId))];
  }

  /** Ends every session of a credential (it was deleted); they cannot be resumed. Returns how many. */
  endForCredential(credentialId: string, reason: string): number {
    const ending = [...this.live.values()].filter((s) => s.info.credentialId === credentialId);
    for (const s of ending) {
      this.dropSession(s);
      s.handle.end(reason);
    }
    for (const [id, e] of this.ended) if (e.credentialId === credentialId) this.ended.delete(id);
    return ending.length;
  }

  /** What the credentials kind is told once a delete commits (deps' `credentialDeleted`): its sessions end. */
  readonly credentialDeleted = (credentialId: string): void => void this.endForCredential(credentialId, 'the credential was deleted');

  /** Ends one session; the agent may resume it. False when it is not live here. */
  end(sessionId: string, reason: string): boolean {
    const live = this.live.get(sessionId);
    live?.handle.end(reason);
    return live !== undefined;
  }

  /** Ends every session (shutdown). */
  endAll(reason: string): void {
    for (const s of [...this.live.values()]) s.handle.end(reason);
  }
}
