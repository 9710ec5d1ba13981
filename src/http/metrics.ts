// GET /metrics: Prometheus's text format, through prom-client. Requests by route pattern, method
// and status; jobs by kind and outcome (fed by the job runner's onOutcome hook); the days left on
// each managed certificate, read from the store at scrape time; and prom-client's process metrics.
// Every app has its own registry, never prom-client's global one: tests build many apps in one
// process, and a second app would otherwise find its metric names taken.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type Metric } from 'prom-client';
import type { Clock } from '../core/time.js';
import { timingSafeEqual } from 'node:crypto';
import { errors } from '../core/errors.js';

/** The `route` label of requests that matched no route (unknown paths, wrong methods, CORS preflight). */
export const UNMATCHED_ROUTE = 'unmatched';

/** Seconds: a job with nothing to do takes milliseconds, an ACME order waits on DNS and the CA for minutes. */
const JOB_DURATION_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 120, 300, 600];

export interface MetricsDeps {
  logger: Logger;
  clock: Clock;
  /** The bearer token a scrape must show; without one, only loopback clients are answered. */
  token?: string;
  /** Each managed certificate's days to expiry (null: none issued yet), read at scrape time. */
  certificates(now: Date): Promise<{ id: string; domain: string; days_to_expiry: number | null }[]>;
}

/**
 * Whether a scrape may read the metrics, which name every account's managed domains: with a
 * token configured, a request that shows it; else one from this host (request.ip, so that a
 * client behind a trusted proxy is judged by its own address). Others get the unknown path's 404.
 */
function mayScrape(request: FastifyRequest, token: string | undefined): boolean {
  if (token === undefined) return request.ip === '127.0.0.1' || request.ip === '::1' || request.ip === '::ffff:127.0.0.1';
  const shown = Buffer.from(request.headers.authorization ?? '');
  const wanted = Buffer.from(`Bearer ${token}`);
  return shown.length === wanted.length && timingSafeEqual(shown, wanted);
}

/** One app's metrics: its registry, and what other parts of the process feed into it. */
export interface AppMetrics {
  readonly registry: Registry;
  /** Counts one job's outcome and its duration: pass as the JobRunner's `onOutcome`. */
  /** `outcome`: done, failed, superseded or unrecorded (the job runner's). */
  observeJob(kind: string, outcome: string, durationSeconds: number): void;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** This app's Prometheus metrics (src/http/metrics.ts). */
    metrics: AppMetrics;
  }
}

/** Prometheus's default buckets, which prom-client's histograms use: 5 ms to 10 s. */
const REQUEST_DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type RequestLabels = { route: string; method: string; status_code: string };

/** The answers of one route, method and status: how many, their total time, and how many fell in each bucket. */
class RequestSeries {
  count = 0;
  sum = 0;
  /** Per bucket, not cumulative: the answers no longer than its bound and longer than the one before; the last slot, longer than every bound. */
  readonly inBucket = new Float64Array(REQUEST_DURATION_BUCKETS.length + 1);

  constructor(readonly labels: RequestLabels) {}

  observe(seconds: number): void {
    this.count++;
    this.sum += seconds;
    let i = 0;
    while (i < REQUEST_DURATION_BUCKETS.length && seconds > REQUEST_DURATION_BUCKETS[i]!) i++;
    this.inBucket[i]!++;
  }
}

/**
 * Every answered request, counted in plain numbers by route, method and status: a request costs
 * three map lookups and a few additions, where prom-client's counter and histogram would hash
 * their labels into a string key twice and search the buckets. The Prometheus series are made
 * from these numbers when /metrics is scraped (requestMetrics).
 */
class RequestCounts {
  private readonly byRoute = new Map<string, Map<string, Map<number, RequestSeries>>>();
  /** Every series, in the order they first appeared: the order a scrape lists them in. */
  readonly all: RequestSeries[] = [];

  observe(route: string, method: string, status: number, seconds: number): void {
    let byMethod = this.byRoute.get(route);
    if (!byMethod) this.byRoute.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (!series) {
      series = new RequestSeries({ route, method, status_code: String(status) });
      byStatus.set(status, series);
      this.all.push(series);
    }
    series.observe(seconds);
  }

  reset(): void {
    this.byRoute.clear();
    this.all.length = 0;
  }
}

/**
 * The request counter and latency histogram, as prom-client metrics of the app's registry that
 * read the counts when scraped: the same names, labels, buckets and text as prom-client's own
 * Counter and Histogram would give (`get` is what the registry reads for JSON, `getForPromString`
 * for the text format, whose histogram lines name `le` first).
 */
function requestMetrics(registry: Registry, counts: RequestCounts): void {
  const counter = {
    name: 'edgeplane_http_requests_total',
    help: 'HTTP requests answered',
    type: 'counter',
    aggregator: 'sum',
    get: async () => ({ ...metadata(counter), values: counts.all.map((s) => ({ labels: { ...s.labels }, value: s.count })) }),
    reset: () => counts.reset(),
  };
  const name = 'edgeplane_http_request_duration_seconds';
  const bucketLines = (s: RequestSeries) => {
    const lines = [];
    let cumulative = 0;
    for (let i = 0; i < REQUEST_DURATION_BUCKETS.length; i++) {
      cumulative += s.inBucket[i]!;
      lines.push({ labels: { le: REQUEST_DURATION_BUCKETS[i] as number | string }, sharedLabels: s.labels, value: cumulative, metricName: `${name}_bucket` });
    }
    lines.push({ labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: `${name}_bucket` });
    lines.push({ labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${name}_sum` });
    lines.push({ labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${name}_count` });
    return lines;
  };
  const histogram = {
    name,
    help: 'Time from receiving an HTTP request to sending its response, in seconds',
    type: 'histogram',
    aggregator: 'sum',
    getForPromString: async () => ({ ...metadata(histogram), values: counts.all.flatMap(bucketLines) }),
    get: async () => ({
      ...metadata(histogram),
      values: counts.all.flatMap(bucketLines).map(({ labels, sharedLabels, ...line }) => ({ ...line, labels: { ...labels, ...sharedLabels } })),
    }),
    reset: () => counts.reset(),
  };
  registry.registerMetric(counter as unknown as Metric);
  registry.registerMetric(histogram as unknown as Metric);
}

const metadata = (metric: { name: string; help: string; type: string; aggregator: string }) => ({
  name: metric.name,
  help: metric.help,
  type: metric.type,
  aggregator: metric.aggregator,
});

/** Job counter and duration histogram, labelled by kind and outcome. */
function jobMetrics(registry: Registry): AppMetrics['observeJob'] {
  const labelNames = ['kind', 'outcome'] as const;
  const jobs = new Counter({ name: 'edgeplane_jobs_total', help: 'Background job runs, by outcome', labelNames, registers: [registry] });
  const duration = new Histogram({
    name: 'edgeplane_job_duration_seconds',
    help: 'Time from the start of a job run to its outcome being recorded, in seconds',
    labelNames,
    buckets: JOB_DURATION_BUCKETS,
    registers: [registry],
  });
  return (kind, outcome, durationSeconds) => {
    jobs.inc({ kind, outcome });
    duration.observe({ kind, outcome }, durationSeconds);
  };
}

/**
 * Days until each managed certificate expires (whole days, negative once expired, as
 * `edgeplane certificates status` shows them), read at scrape time: two indexed reads of the
 * store. Domains without a certificate yet have no series. Should the store fail, the gauge is
 * left empty for that scrape (and the failure logged) rather than failing the whole scrape.
 */
function certificateExpiry(registry: Registry, deps: MetricsDeps): void {
  new Gauge({
    name: 'edgeplane_certificate_expiry_days',
    help: 'Whole days until a managed certificate expires (negative once expired), by reserved domain or agent ingress id and domain',
    labelNames: ['id', 'domain'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      try {
        for (const status of await deps.certificates(deps.clock.now())) {
          if (status.days_to_expiry !== null) this.set({ id: status.id, domain: status.domain }, status.days_to_expiry);
        }
      } catch (error) {
        deps.logger.warn({ err: error }, 'metrics: managed certificates could not be read');
      }
    },
  });
}

/** Creates this app's registry and metrics, and registers GET /metrics (public, hidden from the OpenAPI document). */
export function registerMetrics(app: FastifyInstance, deps: MetricsDeps): AppMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const counts = new RequestCounts();
  requestMetrics(registry, counts);
  const metrics: AppMetrics = { registry, observeJob: jobMetrics(registry) };
  certificateExpiry(registry, deps);

  app.decorate('metrics', metrics);
  app.addHook('onResponse', (request, reply, done) => {
    // The pattern (`/reserved_domains/:id`), never the raw URL: one series per route, not per id.
    counts.observe(request.routeOptions.url ?? UNMATCHED_ROUTE, request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  app.get('/metrics', { schema: { hide: true }, config: { public: true } }, async (request, reply) => {
    if (!mayScrape(request, deps.token)) throw errors.routeNotFound({ method: request.method, path: request.url.split('?')[0]! });
    const text = await registry.metrics();
    return reply.header('Content-Type', registry.contentType).header('Cache-Control', 'no-store').send(text);
  });
  return metrics;
}
