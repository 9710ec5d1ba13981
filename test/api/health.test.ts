// GET /healthz, /readyz and /metrics on both stores, over a real socket: liveness without
// credentials, readiness that turns 503 (never 500) when the store is closed, slow or missing a
// migration, and a Prometheus scrape whose labels are route patterns, whose job counts come
// through the runner's onOutcome hook, and whose certificate gauge reads the store at scrape time.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, sql, type DatabaseConnection, type Driver } from 'kysely';
import { pino } from 'pino';
import { register as globalRegistry } from 'prom-client';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createDeps } from '../../src/deps.js';
import type { Database } from '../../src/db/schema.js';
import { scopedTx } from '../../src/db/scoped.js';
import { openStore, type Store } from '../../src/db/store.js';
import { readiness } from '../../src/http/health.js';
import { UNMATCHED_ROUTE } from '../../src/http/metrics.js';
import { enqueueJob } from '../../src/jobs/queue.js';
import { defineJob, JobRunner } from '../../src/jobs/runner.js';
import { createResolver } from '../../src/lib/dns/resolver.js';
import type { OrderRequest } from '../../src/certificates/acme-orders.js';
import { certificateJob } from '../../src/certificates/certificate-job.js';
import { makeChain } from '../helpers/certs.js';
import { describeEachStore, freshStore, storeKinds, type Api, type Harness } from '../helpers/harness.js';
import { startTestDns, type TestDns } from '../helpers/test-dns.js';

const silent = pino({ level: 'silent' });
const DAY_MS = 86_400_000;

/** A request with no credentials and no version header, as a probe or a scraper sends it. */
async function probe(baseUrl: string, path: string) {
  const res = await fetch(baseUrl + path);
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined };
}

/** One sample of a scrape: its metric name, labels and value. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of Prometheus's text format (comments and blank lines skipped). */
function parseScrape(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(m, `not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of m[2]?.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g) ?? []) labels[key!] = value!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

/** The value of the series with exactly these labels, or undefined. */
function valueOf(samples: Sample[], name: string, labels: Record<string, string>): number | undefined {
  const want = Object.entries(labels);
  const found = samples.find((s) => s.name === name && Object.keys(s.labels).length === want.length && want.every(([key, value]) => s.labels[key] === value));
  return found?.value;
}

async function scrape(baseUrl: string): Promise<{ text: string; samples: Sample[] }> {
  const res = await probe(baseUrl, '/metrics');
  assert.equal(res.status, 200, res.text);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return { text: res.text, samples: parseScrape(res.text) };
}

/** An app of its own over `store`, listening on loopback, with its log lines kept. */
async function serveOver(store: Store, database: Config['database'], settings: { metricsToken?: string; host?: string } = {}) {
  const host = settings.host ?? '127.0.0.1';
  const config = loadConfig({ listen: `${host}:0`, tls: 'off', logLevel: 'info', dataDir: os.tmpdir(), metricsToken: settings.metricsToken });
  config.database = database;
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n').filter(Boolean)) logs.push(JSON.parse(line));
      callback();
    },
  });
  const deps = createDeps({ config, logger: pino({ level: 'info' }, sink), store, masterKey: randomBytes(32) });
  const app: FastifyInstance = await buildApp(deps);
  await app.listen({ host, port: 0 });
  return { app, logs, port: (app.server.address() as { port: number }).port, baseUrl: `http://127.0.0.1:${(app.server.address() as { port: number }).port}` };
}

/** A store whose reads never answer: a Kysely whose driver never hands out a connection. */
function hangingStore(store: Store): Store {
  const driver: Driver = {
    init: async () => {},
    acquireConnection: () => new Promise<DatabaseConnection>(() => {}),
    beginTransaction: async () => {},
    commitTransaction: async () => {},
    rollbackTransaction: async () => {},
    releaseConnection: async () => {},
    destroy: async () => {},
  };
  const reader = new Kysely<Database>({
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => driver,
      createIntrospector: (db) => new SqliteIntrospector(db),
      createQueryCompiler: () => new SqliteQueryCompiler(),
    },
  });
  return { ...store, reader, db: reader };
}

describeEachStore('health and metrics', (h: () => Harness) => {
  let api: Api;
  before(async () => {
    api = await h().newAccount();
  });

  describe('GET /healthz', () => {
    it('answers 200 {"status":"ok"} without credentials or a version header', async () => {
      const res = await probe(h().baseUrl, '/healthz');
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json, { status: 'ok' });
    });
  });

  describe('GET /readyz', () => {
    it('answers 200 on a migrated store that answers, both checks ok', async () => {
      const res = await probe(h().baseUrl, '/readyz');
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json, { status: 'ok', checks: { store: 'ok', migrations: 'ok' } });
    });

    it('a store whose reads do not answer: unavailable once the time limit passes', async () => {
      const started = performance.now();
      const result = await readiness({ store: hangingStore(h().deps.store), logger: silent, timeoutMs: 100 });
      const elapsed = performance.now() - started;
      assert.equal(result.ready, false);
      assert.equal(result.checks.store, 'no answer within 100 ms');
      assert.equal(result.checks.migrations, 'no answer within 100 ms');
      assert.ok(elapsed >= 90 && elapsed < 2000, `waited ${elapsed} ms`);
    });
  });

  describe('GET /metrics', () => {
    it('counts requests by route pattern, method and status, with latency buckets, never a raw id or path', async () => {
      const created = await api.post('/ip_policies', { description: 'metrics' });
      assert.equal(created.status, 201, created.text);
      const id = created.json.id as string;
      assert.equal((await api.get(`/ip_policies/${id}`)).status, 200);
      const missingId = `ipp_${'0'.repeat(27)}`;
      assert.equal((await api.get(`/ip_policies/${missingId}`)).status, 404);
      assert.equal((await api.get('/no_such_collection/abc')).status, 404);

      const { text, samples } = await scrape(h().baseUrl);
      const requests = (route: string, method: string, status: string) =>
        valueOf(samples, 'edgeplane_http_requests_total', { route, method, status_code: status });
      assert.equal(requests('/ip_policies', 'POST', '201'), 1);
      assert.equal(requests('/ip_policies/:id', 'GET', '200'), 1);
      assert.equal(requests('/ip_policies/:id', 'GET', '404'), 1);
      assert.ok((requests(UNMATCHED_ROUTE, 'GET', '404') ?? 0) >= 1, 'an unknown path counts under one label value');

      // Histogram: every bucket up to +Inf, counting the same requests as the counter.
      const bucket = (le: string) =>
        valueOf(samples, 'edgeplane_http_request_duration_seconds_bucket', { le, route: '/ip_policies', method: 'POST', status_code: '201' });
      assert.equal(bucket('+Inf'), 1);
      assert.notEqual(bucket('0.005'), undefined, 'the default buckets are there');
      const count = valueOf(samples, 'edgeplane_http_request_duration_seconds_count', { route: '/ip_policies', method: 'POST', status_code: '201' });
      assert.equal(count, 1);
      const sum = valueOf(samples, 'edgeplane_http_request_duration_seconds_sum', { route: '/ip_policies', method: 'POST', status_code: '201' })!;
      assert.ok(sum > 0 && sum < 10, `seconds, not milliseconds: ${sum}`);

      for (const raw of [id, missingId, '/no_such_collection', 'abc"']) assert.ok(!text.includes(raw), `${raw} appears in the scrape`);
      const routes = new Set(samples.filter((s) => s.name === 'edgeplane_http_requests_total').map((s) => s.labels.route!));
      for (const route of routes) {
        if (route === UNMATCHED_ROUTE) continue;
        assert.ok(h().app.hasRoute({ method: 'GET', url: route }) || h().app.hasRoute({ method: 'POST', url: route }), `${route} is not a route pattern`);
      }
      assert.ok(
        samples.some((s) => s.name === 'process_cpu_user_seconds_total'),
        "prom-client's process metrics are collected",
      );
    });

    it("each app has its own registry, never prom-client's global one", async () => {
      assert.equal(globalRegistry.getSingleMetric('edgeplane_http_requests_total'), undefined);
      assert.notEqual(h().app.metrics.registry.getSingleMetric('edgeplane_http_requests_total'), undefined);
    });

    it('counts jobs by kind and outcome, with their duration, through the runner hook', async () => {
      const kind = `health-test-${randomBytes(3).toString('hex')}`;
      const job = defineJob({
        kind,
        async run(j) {
          await new Promise((resolve) => setTimeout(resolve, 30));
          if (j.subject_id === 'rd_fails') throw new Error('this one fails');
        },
      });
      const scope = { accountId: api.info.accountId };
      await scopedTx(h().deps.store, scope, async (db) => {
        for (const subject of ['rd_one', 'rd_two', 'rd_fails']) await enqueueJob(db, kind, subject, new Date(), new Date());
      });
      const runner = new JobRunner({ store: h().deps.store, jobs: [job], log: silent, onOutcome: h().app.metrics.observeJob });
      assert.equal(await runner.runOnce(), 3);

      const { samples } = await scrape(h().baseUrl);
      assert.equal(valueOf(samples, 'edgeplane_jobs_total', { kind, outcome: 'done' }), 2);
      assert.equal(valueOf(samples, 'edgeplane_jobs_total', { kind, outcome: 'failed' }), 1);
      assert.equal(valueOf(samples, 'edgeplane_job_duration_seconds_count', { kind, outcome: 'done' }), 2);
      const sum = valueOf(samples, 'edgeplane_job_duration_seconds_sum', { kind, outcome: 'done' })!;
      assert.ok(sum >= 0.055 && sum < 10, `two runs of at least 30 ms, in seconds: ${sum}`);
      // A run of at least 30 ms: above the 10 ms bucket, within +Inf.
      assert.equal(valueOf(samples, 'edgeplane_job_duration_seconds_bucket', { le: '0.01', kind, outcome: 'failed' }), 0);
      assert.equal(valueOf(samples, 'edgeplane_job_duration_seconds_bucket', { le: '+Inf', kind, outcome: 'failed' }), 1);
      await scopedTx(h().deps.store, scope, (db) => db.delete('jobs', { kind, subject_id: 'rd_fails' }));
    });

    describe('certificate expiry', () => {
      let dns: TestDns;
      before(async () => {
        dns = await startTestDns();
      });
      after(async () => {
        await dns.close();
      });

      it('gives the days left on an issued managed certificate, by id and domain; none for a domain still without one', async () => {
        const managed = async (name: string) => {
          const created = await api.post('/reserved_domains', { domain: name, certificate_management_policy: {} });
          assert.equal(created.status, 201, created.text);
          dns.set(name, 'CNAME', [created.json.cname_target]);
          return created.json.id as string;
        };
        const stamp = Date.now();
        const issuedName = `metrics-${stamp}.example.test`;
        const issuedId = await managed(issuedName);
        // A fake CA: a 30-day certificate signed by a test root.
        const orders = {
          async issue(request: OrderRequest) {
            const chain = await makeChain({
              names: request.identifiers,
              keyKind: request.keyType,
              notBefore: new Date(Date.now() - 1000),
              notAfter: new Date(Date.now() + 30 * DAY_MS),
            });
            return { certificatePem: chain.chainPem, keyPem: chain.leaf.keyPem };
          },
        };
        const job = certificateJob({
          store: h().deps.store,
          sealer: h().deps.sealer,
          orders,
          dns: createResolver({ server: dns.address, timeoutMs: 1000, tries: 1 }),
          domains: h().deps.config.domains,
        });
        const runner = new JobRunner({ store: h().deps.store, jobs: [job], log: silent, onOutcome: h().app.metrics.observeJob });
        assert.equal(await runner.runOnce(), 1);
        const certificate = (await api.get(`/reserved_domains/${issuedId}`)).json.certificate;
        assert.notEqual(certificate, null, 'issued');
        const notAfter = Date.parse((await api.get(`/tls_certificates/${certificate.id}`)).json.not_after);
        // Registered after the runner ran: it stays without a certificate.
        const pendingName = `metrics-pending-${stamp}.example.test`;
        const pendingId = await managed(pendingName);

        const daysBefore = Math.floor((notAfter - Date.now()) / DAY_MS);
        const { samples } = await scrape(h().baseUrl);
        const daysAfter = Math.floor((notAfter - Date.now()) / DAY_MS);
        const days = valueOf(samples, 'edgeplane_certificate_expiry_days', { id: issuedId, domain: issuedName });
        assert.ok(days !== undefined && days <= daysBefore && days >= daysAfter, `days: ${days}, expected ${daysBefore}`);
        assert.ok(days >= 28 && days <= 30, `a 30-day certificate: ${days}`);
        assert.equal(
          samples.find((s) => s.name === 'edgeplane_certificate_expiry_days' && (s.labels.id === pendingId || s.labels.domain === pendingName)),
          undefined,
          'no series without a certificate',
        );
        assert.equal(valueOf(samples, 'edgeplane_jobs_total', { kind: 'certificate', outcome: 'done' }), 1);

        // Computed at scrape time: gone with its domain.
        assert.equal((await api.delete(`/reserved_domains/${issuedId}`)).status, 204);
        assert.equal((await api.delete(`/reserved_domains/${pendingId}`)).status, 204);
        const later = await scrape(h().baseUrl);
        assert.equal(valueOf(later.samples, 'edgeplane_certificate_expiry_days', { id: issuedId, domain: issuedName }), undefined);
      });
    });

    it('is public and absent from the OpenAPI document, as are /healthz and /readyz', async () => {
      const doc = (await probe(h().baseUrl, '/openapi.json')).json;
      for (const path of ['/healthz', '/readyz', '/metrics']) assert.equal(doc.paths[path], undefined, `${path} is documented`);
      assert.ok(Object.keys(doc.paths).length > 10, 'the document lists the API');
    });
  });
});

/** An address of this host other than loopback, if it has one. */
function externalAddress(): string | undefined {
  return Object.values(os.networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
}

describe('who may read /metrics', () => {
  it('with a token configured, only a scrape that shows it; others get the unknown path’s 404', async () => {
    const fresh = await freshStore('sqlite');
    const server = await serveOver(fresh.store, fresh.database, { metricsToken: 'scrape-token-0123456789' });
    try {
      assert.equal((await probe(server.baseUrl, '/metrics')).status, 404, 'no token, even from loopback');
      const wrong = await fetch(`${server.baseUrl}/metrics`, { headers: { authorization: 'Bearer scrape-token-012345678X' } });
      assert.equal(wrong.status, 404);
      const right = await fetch(`${server.baseUrl}/metrics`, { headers: { authorization: 'Bearer scrape-token-0123456789' } });
      assert.equal(right.status, 200);
      assert.match(await right.text(), /edgeplane_http_requests_total/);
    } finally {
      await server.app.close();
      await fresh.dispose();
    }
  });

  it('without a token, loopback clients only', { skip: externalAddress() ? false : 'this host has no address but loopback' }, async () => {
    const fresh = await freshStore('sqlite');
    const server = await serveOver(fresh.store, fresh.database, { host: '0.0.0.0' });
    try {
      assert.equal((await probe(server.baseUrl, '/metrics')).status, 200, 'from 127.0.0.1');
      const outside = await fetch(`http://${externalAddress()}:${server.port}/metrics`);
      assert.equal(outside.status, 404, 'from another address of the host');
      assert.equal((await fetch(`http://${externalAddress()}:${server.port}/healthz`)).status, 200, 'health is for anyone');
    } finally {
      await server.app.close();
      await fresh.dispose();
    }
  });
});

for (const kind of storeKinds()) {
  describe(`GET /readyz on a broken store [${kind}]`, () => {
    it('answers 503 naming the migration the store lacks', async () => {
      const fresh = await freshStore(kind);
      try {
        const [last] = await sql<{ name: string }>`select name from kysely_migration order by name desc limit 1`.execute(fresh.store.db).then((r) => r.rows);
        assert.ok(last, 'the store holds migrations');
        await sql`delete from kysely_migration where name = ${last.name}`.execute(fresh.store.db);
        const server = await serveOver(fresh.store, fresh.database);
        try {
          const res = await probe(server.baseUrl, '/readyz');
          assert.equal(res.status, 503, res.text);
          assert.equal(res.json.status, 'unavailable');
          assert.equal(res.json.checks.store, 'ok');
          assert.match(res.json.checks.migrations, new RegExp(`^not applied: ${last.name} `));
          assert.equal((await probe(server.baseUrl, '/healthz')).status, 200, 'alive all the same');
        } finally {
          await server.app.close();
        }
      } finally {
        await fresh.dispose();
      }
    });

    it('answers 503, not 500, once its store is closed, and says so without the driver’s message; /healthz stays 200', async () => {
      const fresh = await freshStore(kind);
      // A second handle on the same store, closed under the app; `fresh` keeps its own for cleanup.
      const store = openStore(fresh.database, { schema: fresh.schema });
      const server = await serveOver(store, fresh.database);
      try {
        assert.equal((await probe(server.baseUrl, '/readyz')).status, 200, 'ready before');
        await store.close();
        const res = await probe(server.baseUrl, '/readyz');
        assert.equal(res.status, 503, res.text);
        assert.equal(res.json.status, 'unavailable');
        assert.notEqual(res.json.checks.store, 'ok');
        assert.notEqual(res.json.checks.migrations, 'ok');
        const failures = server.logs.filter((line) => line.msg === 'readiness check failed');
        assert.deepEqual(failures.map((line) => line.check).sort(), ['migrations', 'store']);
        const driverMessage = (failures[0]!.err as { message: string }).message;
        assert.ok(driverMessage.length > 0 && !res.text.includes(driverMessage), `the body leaks: ${res.text}`);
        assert.equal((await probe(server.baseUrl, '/healthz')).status, 200);
      } finally {
        await server.app.close();
        await fresh.dispose();
      }
    });
  });
}
