// What public traffic leaves behind for the operator: the data plane's metrics, in the registry
// GET /metrics serves, and one access-log line per public request or connection.
//
// Cheap on the request path, which carries every account's traffic: a request's counts go into a
// plain object per edge or endpoint, found with one Map lookup, and nothing is labelled, hashed
// or formatted until a scrape, when each metric's get() publishes what was counted. The gauges
// (sessions, tunnels, streams) cost nothing per change: they are read from the registry at scrape
// time. prom-client's own Counter and Histogram would hash their labels on every request.
//
// Label sets are bounded: `id` is an edge's or an endpoint's id, never a client's address or a
// host; edges and cloud endpoints are rows of the store, agent endpoints live as long as their
// tunnel (their series are dropped once the tunnel is gone and they have been scraped), and past
// MAX_IDS ids at once the rest are counted under `id="_other"`. Refusals are labelled with the
// module and the error code (or the traffic policy's action type), both from fixed lists.
import type http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { Metric, Registry } from 'prom-client';

/** Whose traffic it is: an edge of the API, an endpoint (an agent's or a cloud endpoint), or neither (no one serves the host). */
export type TrafficKind = 'edge' | 'endpoint' | 'unmatched';

/** `EDGEPLANE_ACCESS_LOG`: the level access-log lines are written at, or off. */
export type AccessLogLevel = 'info' | 'debug' | 'off';

/** Edges and endpoints counted apart at most; more at once share `id="_other"` (MAX_IDS is far above what a store holds in practice). */
export const MAX_IDS = 10_000;
const OTHER = '_other';

/** Seconds from a request sent upstream to its response head: an agent on loopback answers in a millisecond, a slow upstream in tens of seconds. */
const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** `status_class` by the status's hundreds; `none` when the client went away before any answer. */
const STATUS_CLASSES = ['none', '1xx', '2xx', '3xx', '4xx', '5xx'] as const;

/** The module each refusal code of docs/ingress.md comes from (the `module` label). */
const REFUSING_MODULE: Readonly<Record<string, string>> = {
  ERR_EP_INGRESS_701: 'route',
  ERR_EP_INGRESS_710: 'route',
  ERR_EP_INGRESS_702: 'ip_restriction',
  ERR_EP_INGRESS_703: 'user_agent_filter',
  ERR_EP_INGRESS_704: 'circuit_breaker',
  ERR_EP_INGRESS_709: 'traffic_policy',
  ERR_EP_INGRESS_713: 'webhook_verification',
  ERR_EP_INGRESS_714: 'webhook_verification',
  ERR_EP_INGRESS_715: 'basic_auth',
  ERR_EP_INGRESS_716: 'endpoint_configuration',
};

/** What the metrics read of the live agents at scrape time (the session registry). */
export interface LiveCounts {
  sessions(): number;
  tunnels(): readonly { endpoint?: { id: string } }[];
  /** Streams open to agents for public connections. */
  streams(): number;
}

/**
 * One public request or connection, filled in as it is routed and told once it ends. The
 * listeners make it as the request arrives; edge-http.ts and edge-stream.ts add the route and
 * the backend.
 */
export class Visit {
  kind: TrafficKind = 'unmatched';
  id = '';
  /** An agent endpoint's: its id goes with its tunnel, so its series are dropped once the tunnel is gone. */
  transient = false;
  route: string | undefined = undefined;
  backendKind: string | undefined = undefined;
  backendId: string | undefined = undefined;
  /** An upgrade's status, once known: the answer edgeplane gave, or the one the upstream's first bytes begin with. */
  status = 0;
  readonly started = performance.now();

  constructor(
    /** `http` or `https` for a request; `tcp` or `tls` for a connection. */
    readonly proto: string,
    readonly clientIp: string,
  ) {}

  /** The edge or endpoint the request reached. */
  to(kind: TrafficKind, id: string, transient = false): void {
    this.kind = kind;
    this.id = id;
    this.transient = transient;
  }

  /** The backend it was sent to: its kind (`tunnel`, `static`, `response`) and id. */
  sentTo(kind: string, id: string): void {
    this.backendKind = kind;
    this.backendId = id;
  }

  /** An upgrade's upstream began to answer with `chunk`: its status line says how (101, or a refusal of its own). */
  answeredWith(chunk: Buffer): void {
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(chunk.toString('latin1', 0, 16));
    if (status) this.status = Number(status[1]);
  }
}

/** The counts of one edge or endpoint. */
interface Row {
  kind: TrafficKind;
  id: string;
  transient: boolean;
  /** Requests by STATUS_CLASSES index. */
  requests: number[];
  connections: number;
  bytesIn: number;
  bytesOut: number;
  /** Found gone at the last scrape (its tunnel is): dropped at the next one. */
  gone: boolean;
}

/** Counts per bucket (the last one +Inf), their sum and their number. */
interface Buckets {
  counts: number[];
  sum: number;
  count: number;
}

type Published = { value: number; labels: Record<string, string>; metricName?: string };

/**
 * A metric whose values are computed at scrape time: the shape prom-client's registry reads of
 * its own metrics (`name`, `help`, `type`, `get()`). Written here rather than with prom-client's
 * classes because a histogram's buckets cannot be set through them, only observed one by one.
 */
function register(registry: Registry, name: string, help: string, type: 'counter' | 'gauge' | 'histogram', values: () => Published[]): void {
  const metric = {
    name,
    help,
    type,
    aggregator: 'sum',
    get: async () => ({ name, help, type, aggregator: 'sum', values: values() }),
    reset: () => {},
  };
  registry.registerMetric(metric as unknown as Metric);
}

/** Per-connection marks of the bytes already told: a keep-alive connection's requests each get what moved since the last. */
interface Marks {
  read: number;
  written: number;
}

type CountedSocket = Partial<Record<'bytesRead' | 'bytesWritten', number>>;

export interface TrafficOptions {
  /** The registry GET /metrics serves; without one, nothing is published (counting still happens). */
  registry?: Registry | undefined;
  live?: LiveCounts | undefined;
  /** The ingress logger the access-log lines are written with. */
  log?: Logger | undefined;
  accessLog?: AccessLogLevel | undefined;
}

/** The data plane's traffic: counted for /metrics, and written to the access log. */
export class Traffic {
  private readonly rows = new Map<string, Row>();
  private readonly refusals = new Map<string, { module: string; code: string; count: number }>();
  private readonly handshakeFailures = new Map<string, number>();
  private readonly latency = new Map<TrafficKind, Buckets>();
  private readonly marks = new WeakMap<object, Marks>();
  private readonly log: Logger | undefined;
  private readonly accessLevel: 'info' | 'debug' | undefined;

  constructor(private readonly options: TrafficOptions = {}) {
    this.log = options.log;
    this.accessLevel = options.accessLog === 'off' || !options.log ? undefined : (options.accessLog ?? 'info');
    if (options.registry) this.publish(options.registry);
  }

  /** A request as it arrives: told once its response closes (answered, or the client gone). */
  request(req: http.IncomingMessage, res: http.ServerResponse, proto: 'http' | 'https', clientIp: string): Visit {
    const visit = new Visit(proto, clientIp);
    // Taken now: node:http may have let go of it by the time the response closes.
    const socket = req.socket as CountedSocket;
    res.once('close', () => this.requestDone(visit, req, res.headersSent ? res.statusCode : 0, socket));
    return visit;
  }

  /**
   * An upgrade (a WebSocket) as it arrives: told once its connection closes, as a request whose
   * status is what the answer began with (`visit.status`: 0 when no answer was seen).
   */
  upgrade(req: http.IncomingMessage, socket: Duplex, proto: 'http' | 'https', clientIp: string): Visit {
    const visit = new Visit(proto, clientIp);
    socket.once('close', () => this.requestDone(visit, req, visit.status, socket as Duplex & CountedSocket));
    return visit;
  }

  /** A TCP or TLS connection as it is accepted: told once it closes. */
  connection(socket: Duplex, proto: 'tcp' | 'tls', clientIp: string): Visit {
    const visit = new Visit(proto, clientIp);
    socket.once('close', () => this.connectionDone(visit, socket as Duplex & CountedSocket));
    return visit;
  }

  /** A refusal by one of the modules, by its error code (docs/ingress.md). */
  refused(code: string, module: string = REFUSING_MODULE[code] ?? 'other'): void {
    const key = `${module}\n${code}`;
    const found = this.refusals.get(key);
    if (found) found.count++;
    else this.refusals.set(key, { module, code, count: 1 });
  }

  /** A traffic policy's own answer (`action`: its type) that refuses (a status of 400 or more), or a connection its policy denied. */
  refusedByPolicy(action: string): void {
    this.refused(action, 'traffic_policy');
  }

  /** A client's TLS handshake failed at the listener (`https`: the listener's own settings; `edge_tls`: an edge's). */
  handshakeFailed(listener: 'https' | 'edge_tls'): void {
    this.handshakeFailures.set(listener, (this.handshakeFailures.get(listener) ?? 0) + 1);
  }

  /** The upstream's response head arrived, `sentAt` (performance.now()) after the request went to it. */
  answered(kind: TrafficKind, sentAt: number): void {
    const seconds = (performance.now() - sentAt) / 1000;
    let buckets = this.latency.get(kind);
    if (!buckets) {
      buckets = { counts: new Array<number>(LATENCY_BUCKETS.length + 1).fill(0), sum: 0, count: 0 };
      this.latency.set(kind, buckets);
    }
    let i = 0;
    while (i < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[i]!) i++;
    buckets.counts[i]!++;
    buckets.sum += seconds;
    buckets.count++;
  }

  private row(kind: TrafficKind, id: string, transient: boolean): Row {
    const key = `${kind}\n${id}`;
    let row = this.rows.get(key);
    if (row) return row;
    if (this.rows.size >= MAX_IDS && id !== OTHER) return this.row(kind, OTHER, false);
    row = { kind, id, transient, requests: [0, 0, 0, 0, 0, 0], connections: 0, bytesIn: 0, bytesOut: 0, gone: false };
    this.rows.set(key, row);
    return row;
  }

  /** The bytes a connection moved since it last told any (HTTP heads and bodies, after TLS). */
  private moved(socket: CountedSocket): { bytesIn: number; bytesOut: number } {
    const read = socket.bytesRead ?? 0;
    const written = socket.bytesWritten ?? 0;
    let marks = this.marks.get(socket);
    if (!marks) {
      marks = { read: 0, written: 0 };
      this.marks.set(socket, marks);
    }
    const moved = { bytesIn: read - marks.read, bytesOut: written - marks.written };
    marks.read = read;
    marks.written = written;
    return moved;
  }

  private requestDone(visit: Visit, req: http.IncomingMessage, status: number, socket: CountedSocket): void {
    const { bytesIn, bytesOut } = this.moved(socket);
    const row = this.row(visit.kind, visit.id, visit.transient);
    row.requests[status >= 100 && status < 600 ? Math.floor(status / 100) : 0]!++;
    row.bytesIn += bytesIn;
    row.bytesOut += bytesOut;
    if (this.accessLevel === undefined || !this.log!.isLevelEnabled(this.accessLevel)) return;
    const url = req.url ?? '';
    const query = url.indexOf('?');
    this.log![this.accessLevel](
      {
        proto: visit.proto,
        edge_id: visit.kind === 'edge' ? visit.id : undefined,
        endpoint_id: visit.kind === 'endpoint' ? visit.id : undefined,
        route_id: visit.route,
        backend_kind: visit.backendKind,
        backend_id: visit.backendId,
        client_ip: visit.clientIp,
        method: req.method,
        // As the client sent it: bounded as the path is (a name has at most 253 characters).
        host: req.headers.host?.slice(0, 300),
        // Never the query string: tokens travel in it.
        path: (query < 0 ? url : url.slice(0, query)).slice(0, 1024),
        status,
        bytes_in: bytesIn,
        bytes_out: bytesOut,
        ms: Math.round((performance.now() - visit.started) * 10) / 10,
      },
      'access',
    );
  }

  private connectionDone(visit: Visit, socket: Duplex & CountedSocket): void {
    const bytesIn = socket.bytesRead ?? 0;
    const bytesOut = socket.bytesWritten ?? 0;
    const row = this.row(visit.kind, visit.id, visit.transient);
    row.connections++;
    row.bytesIn += bytesIn;
    row.bytesOut += bytesOut;
    if (this.accessLevel === undefined || !this.log!.isLevelEnabled(this.accessLevel)) return;
    this.log![this.accessLevel](
      {
        proto: visit.proto,
        edge_id: visit.kind === 'edge' ? visit.id : undefined,
        endpoint_id: visit.kind === 'endpoint' ? visit.id : undefined,
        backend_kind: visit.backendKind,
        backend_id: visit.backendId,
        client_ip: visit.clientIp,
        bytes_in: bytesIn,
        bytes_out: bytesOut,
        ms: Math.round((performance.now() - visit.started) * 10) / 10,
      },
      'access',
    );
  }

  /**
   * Drops the rows of agent endpoints whose tunnel was already gone at the previous scrape (so
   * their last counts were published once), and marks those gone now. Run once per scrape.
   */
  private sweep(): void {
    const live = this.options.live;
    if (!live) return;
    const ids = new Set<string>();
    for (const tunnel of live.tunnels()) if (tunnel.endpoint) ids.add(tunnel.endpoint.id);
    for (const [key, row] of this.rows) {
      if (!row.transient) continue;
      if (ids.has(row.id)) row.gone = false;
      else if (row.gone) this.rows.delete(key);
      else row.gone = true;
    }
  }

  private publish(registry: Registry): void {
    const live = this.options.live;
    if (live) {
      register(registry, 'edgeplane_agent_sessions', 'Agent sessions connected to this process', 'gauge', () => [{ value: live.sessions(), labels: {} }]);
      register(registry, 'edgeplane_agent_tunnels', "Tunnels (endpoints and labeled tunnels) held by this process's agent sessions", 'gauge', () => [
        { value: live.tunnels().length, labels: {} },
      ]);
      register(registry, 'edgeplane_streams_open', 'Streams open to agents for public connections', 'gauge', () => [{ value: live.streams(), labels: {} }]);
    }
    register(registry, 'edgeplane_ingress_requests_total', 'Public HTTP requests answered, by edge or endpoint and status class', 'counter', () => {
      this.sweep();
      const out: Published[] = [];
      for (const row of this.rows.values()) {
        for (let c = 0; c < STATUS_CLASSES.length; c++) {
          if (row.requests[c]! > 0) out.push({ value: row.requests[c]!, labels: { kind: row.kind, id: row.id, status_class: STATUS_CLASSES[c]! } });
        }
      }
      return out;
    });
    register(registry, 'edgeplane_ingress_connections_total', 'Public TCP and TLS connections closed, by edge or endpoint', 'counter', () => {
      const out: Published[] = [];
      for (const row of this.rows.values()) if (row.connections > 0) out.push({ value: row.connections, labels: { kind: row.kind, id: row.id } });
      return out;
    });
    register(
      registry,
      'edgeplane_ingress_bytes_total',
      'Bytes of public requests and connections, by edge or endpoint, read from clients (in) and written to them (out)',
      'counter',
      () => {
        const out: Published[] = [];
        for (const row of this.rows.values()) {
          out.push({ value: row.bytesIn, labels: { kind: row.kind, id: row.id, direction: 'in' } });
          out.push({ value: row.bytesOut, labels: { kind: row.kind, id: row.id, direction: 'out' } });
        }
        return out;
      },
    );
    register(
      registry,
      'edgeplane_ingress_upstream_latency_seconds',
      'Time from a request sent to its upstream (an agent, a static address) to its response head, in seconds',
      'histogram',
      () => {
        const out: Published[] = [];
        for (const [kind, buckets] of this.latency) {
          let cumulative = 0;
          for (let i = 0; i <= LATENCY_BUCKETS.length; i++) {
            cumulative += buckets.counts[i]!;
            const le = i < LATENCY_BUCKETS.length ? String(LATENCY_BUCKETS[i]) : '+Inf';
            out.push({ metricName: 'edgeplane_ingress_upstream_latency_seconds_bucket', value: cumulative, labels: { kind, le } });
          }
          out.push({ metricName: 'edgeplane_ingress_upstream_latency_seconds_sum', value: buckets.sum, labels: { kind } });
          out.push({ metricName: 'edgeplane_ingress_upstream_latency_seconds_count', value: buckets.count, labels: { kind } });
        }
        return out;
      },
    );
    register(registry, 'edgeplane_ingress_refusals_total', 'Public requests and connections refused by a module, by module and error code', 'counter', () =>
      [...this.refusals.values()].map(({ module, code, count }) => ({ value: count, labels: { module, code } })),
    );
    register(registry, 'edgeplane_ingress_tls_handshake_failures_total', 'TLS handshakes of public clients that failed, by listener', 'counter', () =>
      [...this.handshakeFailures].map(([listener, count]) => ({ value: count, labels: { listener } })),
    );
  }
}
