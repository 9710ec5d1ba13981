// GET /metrics: Prometheus's text format, through prom-client. Requests by route pattern, method
// and status; jobs by kind and outcome (fed by the job runner's onOutcome hook); the days left on
// each managed certificate, read from the store at scrape time; and prom-client's process metrics.
// Every app has its own registry, never prom-client's global one: tests build many apps in one
// process, and a second app would otherwise find its metric names taken.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
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

/** Request counter and latency histogram, labelled by route pattern, method and status code. */
function httpMetrics(registry: Registry) {
  const labelNames = ['route', 'method', 'status_code'] as const;
  const requests = new Counter({ name: 'edgeplane_http_requests_total', help: 'HTTP requests answered', labelNames, registers: [registry] });
  const duration = new Histogram({
    name: 'edgeplane_http_request_duration_seconds',
    help: 'Time from receiving an HTTP request to sending its response, in seconds',
    labelNames,
    registers: [registry],
  });
  return (request: FastifyRequest, reply: FastifyReply) => {
    // The pattern (`/reserved_domains/:id`), never the raw URL: one series per route, not per id.
    const labels = { route: request.routeOptions.url ?? UNMATCHED_ROUTE, method: request.method, status_code: String(reply.statusCode) };
    requests.inc(labels);
    duration.observe(labels, reply.elapsedTime / 1000);
  };
}

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
  const observeRequest = httpMetrics(registry);
  const metrics: AppMetrics = { registry, observeJob: jobMetrics(registry) };
  certificateExpiry(registry, deps);

  app.decorate('metrics', metrics);
  app.addHook('onResponse', (request, reply, done) => {
    observeRequest(request, reply);
    done();
  });
  app.get('/metrics', { schema: { hide: true }, config: { public: true } }, async (request, reply) => {
    if (!mayScrape(request, deps.token)) throw errors.routeNotFound({ method: request.method, path: request.url.split('?')[0]! });
    const text = await registry.metrics();
    return reply.header('Content-Type', registry.contentType).header('Cache-Control', 'no-store').send(text);
  });
  return metrics;
}
