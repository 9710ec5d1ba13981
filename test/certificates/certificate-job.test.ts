// The certificate job's faults, on both stores, with the API and the job runner real: a domain
// deleted while its order runs, a runner killed mid-issuance, an ACME server that answers garbage,
// a DNS resolver that times out. The CA is a stand-in only where the fault is in our own handling
// (a gate to hold an order open); the garbage CA and the resolver are real servers on loopback.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, it } from 'node:test';
import { pino } from 'pino';
import { claimJobs, completeJob } from '../../src/db/jobs.js';
import { JobRunner } from '../../src/jobs/runner.js';
import { createResolver } from '../../src/lib/dns/resolver.js';
import { AcmeOrders, type OrderRequest } from '../../src/certificates/acme-orders.js';
import { certificateJob } from '../../src/certificates/certificate-job.js';
import { waitFor } from '../helpers/assertions.js';
import { makeChain } from '../helpers/certs.js';
import { describeEachStore, type Api, type Harness } from '../helpers/harness.js';
import { startTestDns, type TestDns } from '../helpers/test-dns.js';

const silent = pino({ level: 'silent' });

/** A CA stand-in that signs what it is asked for with a test root, counting orders; `hold` keeps orders open until released. */
function fakeOrders() {
  let release: () => void = () => {};
  let held: Promise<void> | undefined;
  const orders = {
    count: 0,
    started: 0,
    hold() {
      held = new Promise<void>((resolve) => (release = resolve));
    },
    release: () => release(),
    async issue(request: OrderRequest) {
      orders.started++;
      await held;
      const chain = await makeChain({ names: request.identifiers, keyKind: request.keyType, notBefore: new Date(Date.now() - 1000) });
      orders.count++;
      return { certificatePem: chain.chainPem, keyPem: chain.leaf.keyPem };
    },
  };
  return orders;
}

/** Orders and API reads take longer than the default wait allows for. */
const SLOW = { timeoutMs: 15_000, pollMs: 50 };

describeEachStore('certificate job faults', (h: () => Harness) => {
  let dns: TestDns;
  let api: Api;
  before(async () => {
    dns = await startTestDns();
    api = await h().newAccount();
  });
  after(async () => {
    await dns.close();
  });

  type RunnerOptions = { leaseMs?: number; timeoutMs?: number; retryBaseMs?: number };
  const jobOf = (orders: Pick<AcmeOrders, 'issue'>, options: RunnerOptions = {}) =>
    certificateJob({
      store: h().deps.store,
      sealer: h().deps.sealer,
      orders,
      dns: createResolver({ server: dns.address, timeoutMs: options.timeoutMs ?? 1000, tries: 1 }),
      domains: h().deps.config.domains,
      backoff: { baseMs: options.retryBaseMs ?? 100, capMs: options.retryBaseMs ?? 200 },
    });
  // Retries wait half their window (no jitter here), so a test knows when they come.
  const runner = (orders: Pick<AcmeOrders, 'issue'>, options: RunnerOptions = {}) =>
    new JobRunner({ store: h().deps.store, jobs: [jobOf(orders, options)], log: silent, pollMs: 20, leaseMs: options.leaseMs, random: () => 0.5 });

  /** A managed domain whose CNAME is set; its id and path. */
  async function managedDomain(name: string) {
    const created = await api.post('/reserved_domains', { domain: name, certificate_management_policy: {} });
    assert.equal(created.status, 201, created.text);
    dns.set(name, 'CNAME', [created.json.cname_target]);
    return { id: created.json.id as string, path: `/reserved_domains/${created.json.id}` };
  }
  const certificates = async () => (await api.get('/tls_certificates')).json.tls_certificates as { id: string; issued_at: string | null }[];
  const jobsOf = (id: string) => h().deps.store.reader.selectFrom('jobs').selectAll().where('subject_id', '=', id).execute();

  it('a domain deleted while its order runs: no certificate is stored, the job is gone, the runner goes on', async () => {
    const orders = fakeOrders();
    orders.hold();
    const domain = await managedDomain(`deleted-${Date.now()}.example.test`);
    const before = (await certificates()).length;
    const r = runner(orders);
    r.start();
    try {
      await waitFor('the order to start', async () => orders.started === 1, SLOW);
      assert.equal((await api.delete(domain.path)).status, 204);
      orders.release();
      await waitFor('the order to end', async () => orders.count === 1, SLOW);
      await r.stop();
      assert.equal((await certificates()).length, before, 'nothing stored for a deleted domain');
      assert.equal((await jobsOf(domain.id)).length, 0);
    } finally {
      orders.release();
      await r.stop();
    }
  });

  it('a runner killed during issuance: another takes the job after its lease, and one certificate is stored', async () => {
    const orders = fakeOrders();
    const domain = await managedDomain(`killed-${Date.now()}.example.test`);
    // The dead runner: it claimed the job (a 300 ms lease) and never came back.
    const [claimed] = await claimJobs(h().deps.store, { owner: 'dead', kinds: ['certificate'], now: new Date(), leaseMs: 300, limit: 10 });
    assert.equal(claimed?.subject_id, domain.id);
    const r = runner(orders);
    r.start();
    try {
      await waitFor('the certificate', async () => (await api.get(domain.path)).json.certificate !== null, SLOW);
    } finally {
      await r.stop();
    }
    assert.equal(orders.count, 1, 'ordered once, by the live runner');
    // The dead runner's late completion changes nothing.
    assert.equal(await completeJob(h().deps.store, claimed!, 'dead', { write: async () => assert.fail('must not write') }), false);
    const certificateId = (await api.get(domain.path)).json.certificate.id as string;
    assert.deepEqual((await certificates()).filter((c) => c.issued_at !== null && c.id === certificateId).length, 1);
    const jobs = await jobsOf(domain.id);
    assert.equal(jobs.length, 1, 'the renewal');
    assert.ok(Date.parse(jobs[0]!.run_at) > Date.now() + 60_000, 'due at renews_at, not now');

    // A run again before renews_at (a retry after a crash) orders nothing.
    await h().deps.store.db.updateTable('jobs').set({ run_at: new Date().toISOString() }).where('id', '=', jobs[0]!.id).execute();
    assert.equal(await runner(orders).runOnce(), 1);
    assert.equal(orders.count, 1, 'no second certificate');
    assert.equal(Date.parse((await jobsOf(domain.id))[0]!.run_at), Date.parse((await api.get(domain.path)).json.certificate_management_status.renews_at));
  });

  it('a failed renewal keeps the current certificate and reports the job; the next success replaces it', async () => {
    const orders = fakeOrders();
    const domain = await managedDomain(`renewal-${Date.now()}.example.test`);
    assert.equal(await runner(orders).runOnce(), 1);
    const first = (await api.get(domain.path)).json;
    assert.notEqual(first.certificate, null);
    // Renewal is due, and the CA is away.
    const due = async () => {
      await h().deps.store.db.updateTable('jobs').set({ run_at: new Date().toISOString() }).where('subject_id', '=', domain.id).execute();
      await h()
        .deps.store.db.updateTable('reserved_domains')
        .set({ cert_renews_at: new Date(Date.now() - 1000).toISOString() })
        .where('id', '=', domain.id)
        .execute();
    };
    await due();
    const away = { issue: async () => Promise.reject(new Error('the CA is away')) };
    assert.equal(await runner(away).runOnce(), 1);
    const failing = (await api.get(domain.path)).json;
    assert.equal(failing.certificate.id, first.certificate.id, 'the current certificate stays');
    assert.equal(failing.certificate_management_status.provisioning_job.error_code, 'INTERNAL_ERROR');
    assert.equal(failing.certificate_management_status.provisioning_job.msg, 'the CA is away');
    assert.equal((await api.get(`/tls_certificates/${first.certificate.id}`)).status, 200);

    await due();
    assert.equal(await runner(orders).runOnce(), 1);
    const renewed = (await api.get(domain.path)).json;
    assert.notEqual(renewed.certificate.id, first.certificate.id);
    assert.equal(renewed.certificate_management_status.provisioning_job, null);
    assert.equal((await api.get(`/tls_certificates/${first.certificate.id}`)).status, 404, 'the replaced one is deleted');
  });

  it('an ACME server that answers garbage: INTERNAL_ERROR on the domain, retried, no crash', async () => {
    const garbage = http.createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"newNonce": 42, "newAccount": [}');
    });
    await new Promise<void>((resolve) => garbage.listen(0, '127.0.0.1', resolve));
    try {
      const settings = { ...h().deps.config.certificates, acmeDirectoryUrl: `http://127.0.0.1:${(garbage.address() as AddressInfo).port}/dir` };
      const orders = new AcmeOrders({ store: h().deps.store, sealer: h().deps.sealer, settings, requestTimeoutMs: 2000 });
      const domain = await managedDomain(`garbage-${Date.now()}.example.test`);
      assert.equal(await runner(orders).runOnce(), 1);
      const job = (await api.get(domain.path)).json.certificate_management_status.provisioning_job;
      assert.equal(job.error_code, 'INTERNAL_ERROR');
      assert.ok(job.msg.length > 0 && job.retries_at !== null, JSON.stringify(job));
      const [row] = await jobsOf(domain.id);
      assert.equal(row!.last_error, job.msg, 'the job records the same error');
      assert.equal(row!.lease_owner, null, 'released for a retry');
      // Its retries would be claimed by the next test's runners.
      assert.equal((await api.delete(domain.path)).status, 204);
    } finally {
      garbage.closeAllConnections();
      await new Promise<void>((resolve) => garbage.close(() => resolve()));
    }
  });

  it('a DNS resolver that times out: INTERNAL_ERROR (not the user’s to fix), then success when it answers', async () => {
    const orders = fakeOrders();
    const name = `timeout-${Date.now()}.example.test`;
    const domain = await managedDomain(name);
    dns.blackhole('example.test');
    try {
      // Retried in half an hour at the earliest: only the PATCH below makes it due sooner.
      assert.equal(await runner(orders, { timeoutMs: 200, retryBaseMs: 3_600_000 }).runOnce(), 1);
    } finally {
      dns.blackhole(undefined);
    }
    const job = (await api.get(domain.path)).json.certificate_management_status.provisioning_job;
    assert.equal(job.error_code, 'INTERNAL_ERROR');
    assert.match(job.msg, /timed out/);
    assert.equal(orders.started, 0, 'no order without a DNS answer');
    assert.equal(await runner(orders).runOnce(), 0, 'not due before its retry');
    // The user's PATCH checks again at once.
    assert.equal((await api.patch(domain.path, { description: 'again' })).status, 200);
    assert.equal(await runner(orders).runOnce(), 1);
    assert.notEqual((await api.get(domain.path)).json.certificate, null);
  });
});

describeEachStore('edgeplane certificates status', (h: () => Harness) => {
  const cli = (args: string[]) => {
    const root = path.resolve(import.meta.dirname, '../..');
    const result = spawnSync(
      process.execPath,
      ['--import', 'tsx', path.join(root, 'src/cli.ts'), 'certificates', 'status', ...args, '--database-url', h().databaseUrl],
      {
        cwd: root,
        env: { ...process.env, EDGEPLANE_LOG_LEVEL: 'silent' },
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    return { code: result.status, stdout: result.stdout, stderr: result.stderr };
  };

  it("shows each managed certificate's state and days to expiry, of one account or all", async () => {
    const api = await h().newAccount();
    const other = await h().newAccount();
    const dns = await startTestDns();
    try {
      const issuedName = `issued-${Date.now()}.example.test`;
      const issued = await api.post('/reserved_domains', { domain: issuedName, certificate_management_policy: {} });
      dns.set(issuedName, 'CNAME', [issued.json.cname_target]);
      const failingName = `failing-${Date.now()}.example.test`;
      await api.post('/reserved_domains', { domain: failingName, certificate_management_policy: {} });
      await api.post('/reserved_domains', { domain: `unmanaged-${Date.now()}.example.test` });
      const elsewhere = await other.post('/agent_ingresses', { domain: `ingress-${Date.now()}.example.test`, certificate_management_policy: {} });
      const job = certificateJob({
        store: h().deps.store,
        sealer: h().deps.sealer,
        orders: fakeOrders(),
        dns: createResolver({ server: dns.address, timeoutMs: 1000, tries: 1 }),
        domains: h().deps.config.domains,
      });
      await new JobRunner({ store: h().deps.store, jobs: [job], log: silent, concurrency: 10 }).runOnce();

      const shown = cli(['--account', api.info.accountId, '--json']);
      assert.equal(shown.code, 0, shown.stderr);
      const statuses = JSON.parse(shown.stdout).certificates as Record<string, unknown>[];
      assert.deepEqual(
        statuses.map((s) => [s.domain, s.state, s.error_code]),
        [
          [failingName, 'failing', 'DNS_ERROR'],
          [issuedName, 'issued', null],
        ],
        'managed ones only, of this account, by domain',
      );
      const days = statuses[1]!.days_to_expiry as number;
      assert.ok(days >= 88 && days <= 90, `the test CA's 90 days, less today: ${days}`);

      const text = cli(['--all-accounts']);
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, new RegExp(`\\t${issuedName}\\tissued\\texpires \\S+ \\(${days} days\\)\\trenews `));
      assert.match(text.stdout, new RegExp(`\\t${failingName}\\tfailing\\tno certificate yet\\tDNS_ERROR: ${failingName} has no CNAME record`));
      assert.match(text.stdout, new RegExp(`^${other.info.accountId}\\t${elsewhere.json.id}\\t`, 'm'), 'every account');
      assert.equal(cli([]).code, 2, 'an account or all of them must be named');
    } finally {
      await dns.close();
    }
  });
});
