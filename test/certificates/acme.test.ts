// Certificate automation end to end, on both stores: a real edgeplane server (its job runner, its
// HTTP-01 responder and its authoritative DNS server) orders certificates from a real ACME server
// (Pebble), which validates them through the tests' stand-in for the Internet's DNS. Each issued
// certificate is checked against Pebble's issuance root and for its names.
import assert from 'node:assert/strict';
import { randomBytes, X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { startServer, type Server } from '../../src/main.js';
import { freshStore, freshStoreUrl, storeKinds, type StoreKind } from '../helpers/harness.js';
import { pebbleAvailable, startPebble, type Pebble } from '../helpers/pebble.js';
import { startTestDns, type TestDns } from '../helpers/test-dns.js';
import { freePort } from '../helpers/ports.js';

const ZONES = {
  serviceDomains: 'svc.edgeplane.test',
  cnameZone: 'cname.edgeplane.test',
  acmeChallengeZone: 'acme.edgeplane.test',
  agentIngressNameservers: 'ns1.edgeplane.test,ns2.edgeplane.test',
  regions: 'us,eu',
};

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- API bodies, read field by field

/** One edgeplane with certificate automation, on a fresh store, with Pebble and the test DNS around it. */
interface World {
  server: Server;
  pebble: Pebble;
  dns: TestDns;
  store: Awaited<ReturnType<typeof freshStore>>;
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }>;
  close(): Promise<void>;
}

async function startWorld(kind: StoreKind, options: { validitySeconds?: number; eab?: { kid: string; hmacKey: string } } = {}): Promise<World> {
  const dns = await startTestDns();
  const http01Port = await freePort();
  const dnsPort = await freePort();
  const pebble = await startPebble({
    dnsServer: dns.address,
    httpPort: http01Port,
    certificateValiditySeconds: options.validitySeconds,
    ...(options.eab && { eab: { [options.eab.kid]: options.eab.hmacKey } }),
  });
  // The operator's edge: every CNAME target resolves to it, and it hands the challenge path to edgeplane.
  dns.set(`*.${ZONES.cnameZone}`, 'A', ['127.0.0.1']);
  dns.delegate(ZONES.acmeChallengeZone, `127.0.0.1:${dnsPort}`);
  const store = await freshStore(kind);
  const databaseUrl = freshStoreUrl(store);
  const config = loadConfig({
    dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'edgeplane-acme-')),
    databaseUrl,
    listen: '127.0.0.1:0',
    tls: 'off',
    logLevel: 'silent',
    bootstrap: 'off',
    acmeDirectoryUrl: pebble.directoryUrl,
    acmeCaFile: pebble.caFile,
    dnsResolver: dns.address,
    http01Listen: `127.0.0.1:${http01Port}`,
    dnsListen: `127.0.0.1:${dnsPort}`,
    ...(options.eab && { acmeEabKid: options.eab.kid, acmeEabHmacKey: options.eab.hmacKey }),
    ...ZONES,
  });
  const server = await startServer(config, {
    say: () => {},
    logger: pino({ level: process.env.EDGEPLANE_TEST_LOG_LEVEL ?? 'silent' }),
    runner: { pollMs: 100 },
    certificates: { polling: { minMs: 100, maxMs: 500, attempts: 40 }, retryBaseMs: 500 },
  });
  const { port } = server.app.server.address() as net.AddressInfo;
  const account = await server.deps.accounts.createAccount({ name: 'acme-test' });
  return {
    server,
    pebble,
    dns,
    store,
    async call(method, path, body) {
      const response = await fetch(`http://127.0.0.1:${port}${path}`, {
        method,
        headers: { authorization: `Bearer ${account.token}`, 'service-version': '2', ...(body !== undefined && { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text ? (JSON.parse(text) as Json) : {} };
    },
    async close() {
      await server.close();
      await pebble.close();
      await dns.close();
      await store.dispose();
    },
  };
}

/** Reads `path` until `check` holds for its body; fails with the last body past the deadline. */
async function waitFor(world: World, path: string, what: string, check: (body: Json) => boolean, timeoutMs = 60_000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  let last: Json = {};
  while (Date.now() < deadline) {
    const { status, body } = await world.call('GET', path);
    assert.equal(status, 200, JSON.stringify(body));
    last = body;
    if (check(body)) return body;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.fail(`timed out waiting for ${what}; last: ${JSON.stringify(last)}\npebble: ${world.pebble.logs().slice(-2000)}`);
}

const job = (body: Json) => body.certificate_management_status?.provisioning_job as Json | null | undefined;
const issued = (body: Json) => job(body) === null && body.certificate_management_status?.renews_at != null;

/**
 * The certificate's chain verifies up to one of Pebble's issuance roots, it names exactly
 * `names`, and its key is of `keyType`; returns the leaf.
 */
async function verifyIssued(world: World, certificate: Json, names: string[], keyType: string): Promise<X509Certificate> {
  assert.notEqual(certificate.issued_at, null, 'issued by edgeplane');
  assert.equal(certificate.private_key_type, keyType);
  assert.deepEqual([...certificate.subject_alternative_names.dns_names].sort(), [...names].sort());
  const chain = (certificate.certificate_pem as string)
    .match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)!
    .map((pem) => new X509Certificate(pem));
  const roots = (await world.pebble.issuanceRoots()).map((pem) => new X509Certificate(pem));
  for (let i = 0; i + 1 < chain.length; i++) assert.ok(chain[i]!.verify(chain[i + 1]!.publicKey), `certificate ${i} is signed by the next`);
  const top = chain[chain.length - 1]!;
  assert.ok(
    roots.some((root) => top.verify(root.publicKey)),
    "the chain ends at Pebble's issuance root",
  );
  const leaf = chain[0]!;
  for (const name of names.filter((n) => !n.startsWith('*.'))) assert.equal(leaf.checkHost(name), name);
  return leaf;
}

const suffix = () => randomBytes(4).toString('hex');

for (const kind of storeKinds()) {
  describe(`certificate automation against Pebble [${kind}]`, { skip: pebbleAvailable() ? false : 'pebble is not installed' }, () => {
    let world: World;
    before(async () => {
      world = await startWorld(kind);
    });
    after(async () => {
      await world?.close();
    });

    it('(a) a custom domain shows DNS_ERROR until its CNAME is set, then gets a certificate through HTTP-01', async () => {
      const domain = `app-${suffix()}.example.test`;
      const created = await world.call('POST', '/reserved_domains', { domain, certificate_management_policy: { private_key_type: 'ecdsa' } });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const target = created.body.cname_target as string;
      const path = `/reserved_domains/${created.body.id}`;

      const failing = await waitFor(world, path, 'DNS_ERROR', (b) => job(b)?.error_code === 'DNS_ERROR');
      assert.equal(job(failing)!.msg, `${domain} has no CNAME record; it must have a CNAME record pointing to ${target}.`);
      assert.ok(Date.parse(job(failing)!.retries_at) >= Date.parse(job(failing)!.started_at), 'says when it is checked again');
      assert.equal(failing.certificate, null);

      world.dns.set(domain, 'CNAME', ['wrong.example.net']);
      const wrong = await waitFor(world, path, 'the wrong CNAME reported', (b) => /has CNAME wrong\.example\.net/.test(job(b)?.msg ?? ''));
      assert.equal(job(wrong)!.error_code, 'DNS_ERROR');

      world.dns.set(domain, 'CNAME', [target]);
      // A change of the domain checks again at once.
      assert.equal((await world.call('PATCH', path, { description: 'CNAME set' })).status, 200);
      const done = await waitFor(world, path, 'the certificate', issued);
      assert.match(done.certificate.id, /^cert_/);
      const certificate = await world.call('GET', `/tls_certificates/${done.certificate.id}`);
      assert.equal(certificate.status, 200);
      const leaf = await verifyIssued(world, certificate.body, [domain], 'ecdsa');
      const lifetime = Date.parse(leaf.validTo) - Date.parse(leaf.validFrom);
      const renewsAt = Date.parse(done.certificate_management_status.renews_at);
      assert.ok(Math.abs(renewsAt - (Date.parse(leaf.validFrom) + (lifetime * 2) / 3)) < 2000, 'renews when two thirds of its lifetime have passed');

      const row = await world.store.store.reader.selectFrom('tls_certificates').selectAll().where('id', '=', done.certificate.id).executeTakeFirstOrThrow();
      assert.doesNotMatch(row.private_key_sealed, /PRIVATE KEY/, 'the key is sealed at rest');
      const account = await world.store.store.reader.selectFrom('acme_accounts').selectAll().executeTakeFirstOrThrow();
      assert.equal(account.directory_url, world.pebble.directoryUrl);
      assert.doesNotMatch(account.key_sealed, /PRIVATE KEY/, 'so is the ACME account key');
      assert.match(account.account_url ?? '', /^https:\/\/127\.0\.0\.1:\d+\//);
      const jobs = await world.store.store.reader.selectFrom('jobs').selectAll().where('subject_id', '=', created.body.id).execute();
      assert.equal(jobs.length, 1, 'one job: the renewal');
      assert.equal(Date.parse(jobs[0]!.run_at), renewsAt);
    });

    it('(b) a wildcard domain gets a certificate through DNS-01, via its _acme-challenge CNAME', async () => {
      const base = `w-${suffix()}.example.test`;
      const created = await world.call('POST', '/reserved_domains', { domain: `*.${base}`, certificate_management_policy: {} });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const path = `/reserved_domains/${created.body.id}`;
      const missing = await waitFor(world, path, 'the missing CNAME', (b) => job(b)?.error_code === 'DNS_ERROR');
      assert.equal(job(missing)!.msg, `*.${base} has no CNAME record; it must have a CNAME record pointing to ${created.body.cname_target}.`);
      world.dns.set(`*.${base}`, 'CNAME', [created.body.cname_target]);
      // The wildcard record also answers for _acme-challenge, as it would in real DNS, until that name has its own.
      const failing = await waitFor(world, path, 'the missing challenge CNAME', (b) => /^_acme-challenge/.test(job(b)?.msg ?? ''));
      assert.equal(
        job(failing)!.msg,
        `_acme-challenge.${base} has CNAME ${created.body.cname_target}; it must have a CNAME record pointing to ${created.body.acme_challenge_cname_target}.`,
      );
      world.dns.set(`_acme-challenge.${base}`, 'CNAME', [created.body.acme_challenge_cname_target]);
      assert.equal((await world.call('PATCH', path, { metadata: 'challenge CNAME set' })).status, 200);
      const done = await waitFor(world, path, 'the certificate', issued);
      const certificate = await world.call('GET', `/tls_certificates/${done.certificate.id}`);
      const leaf = await verifyIssued(world, certificate.body, [`*.${base}`], 'rsa');
      assert.equal(leaf.checkHost(`any.${base}`), `*.${base}`, 'the wildcard covers names under its base');
    });

    it('(c) an agent ingress gets a certificate for its regional names after its NS delegation', async () => {
      const domain = `ingress-${suffix()}.example.test`;
      const created = await world.call('POST', '/agent_ingresses', { domain, certificate_management_policy: { private_key_type: 'ecdsa' } });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const path = `/agent_ingresses/${created.body.id}`;
      const failing = await waitFor(world, path, 'the missing delegation', (b) => job(b)?.error_code === 'DNS_ERROR');
      assert.equal(job(failing)!.msg, `${domain} has no NS records; it must be delegated with NS records to exactly ns1.edgeplane.test, ns2.edgeplane.test.`);

      world.dns.set(domain, 'NS', ['ns1.edgeplane.test', 'ns2.edgeplane.test']);
      world.dns.delegate(domain, `127.0.0.1:${world.server.deps.config.certificates.dnsListen!.port}`);
      assert.equal((await world.call('PATCH', path, { description: 'delegated' })).status, 200);
      await waitFor(world, path, 'the certificate', issued);
      const list = await world.call('GET', '/tls_certificates');
      const names = created.body.region_domains as string[];
      assert.deepEqual(names, [`tunnel.us.${domain}`, `tunnel.eu.${domain}`]);
      const mine = (list.body.tls_certificates as Json[]).filter((c) => c.subject_alternative_names.dns_names.includes(names[0]));
      assert.equal(mine.length, 1, 'one certificate for the ingress');
      await verifyIssued(world, mine[0]!, names, 'ecdsa');

      const inUse = await world.call('DELETE', `/tls_certificates/${mine[0]!.id}`);
      assert.equal(inUse.status, 409, 'the ingress still uses it');
      assert.match(JSON.stringify(inUse.body), new RegExp(created.body.id));
      assert.equal((await world.call('DELETE', path)).status, 204);
      assert.equal((await world.call('GET', `/tls_certificates/${mine[0]!.id}`)).status, 404, 'deleted with its ingress');
    });

    it('(d) INTERNAL_ERROR while the ACME server is down, then a certificate once it is back', async () => {
      const domain = `down-${suffix()}.example.test`;
      await world.pebble.stop();
      try {
        const created = await world.call('POST', '/reserved_domains', { domain, certificate_management_policy: {} });
        assert.equal(created.status, 201);
        world.dns.set(domain, 'CNAME', [created.body.cname_target]);
        const path = `/reserved_domains/${created.body.id}`;
        const failing = await waitFor(world, path, 'INTERNAL_ERROR', (b) => job(b)?.error_code === 'INTERNAL_ERROR');
        assert.match(job(failing)!.msg, /ECONNREFUSED|connect/i);
        assert.notEqual(job(failing)!.retries_at, null);
        await world.pebble.start();
        assert.equal((await world.call('PATCH', path, { description: 'CA back' })).status, 200);
        const done = await waitFor(world, path, 'the certificate', issued);
        const certificate = await world.call('GET', `/tls_certificates/${done.certificate.id}`);
        await verifyIssued(world, certificate.body, [domain], 'rsa');
      } finally {
        await world.pebble.start().catch(() => {});
      }
    });

    it('a challenge the CA cannot reach is a DNS_ERROR with what the CA said', async () => {
      const domain = `unreachable-${suffix()}.example.test`;
      const created = await world.call('POST', '/reserved_domains', { domain, certificate_management_policy: {} });
      world.dns.set(domain, 'CNAME', [created.body.cname_target]);
      // The CNAME is right, but its target leads where no edge answers.
      world.dns.set(created.body.cname_target, 'A', ['127.0.0.2']);
      const path = `/reserved_domains/${created.body.id}`;
      const failing = await waitFor(world, path, 'the failed validation', (b) => job(b)?.error_code === 'DNS_ERROR');
      assert.match(job(failing)!.msg, new RegExp(`^the CA could not validate ${domain.replace(/\./g, '\\.')}: .*(connection refused|connect)`, 'i'));
      assert.equal(failing.certificate, null);
      world.dns.set(created.body.cname_target, 'A', []);
      assert.equal((await world.call('PATCH', path, { description: 'edge fixed' })).status, 200);
      await waitFor(world, path, 'the certificate', issued);
    });

    it('detaching the policy or deleting the domain cancels its job, and deleting it deletes its certificate', async () => {
      const domain = `gone-${suffix()}.example.test`;
      const created = await world.call('POST', '/reserved_domains', { domain, certificate_management_policy: {} });
      const id = created.body.id as string;
      const jobsOf = () => world.store.store.reader.selectFrom('jobs').selectAll().where('subject_id', '=', id).execute();
      assert.equal((await jobsOf()).length, 1, 'a policy enqueues a job');
      assert.equal((await world.call('DELETE', `/reserved_domains/${id}/certificate_management_policy`)).status, 204);
      assert.equal((await jobsOf()).length, 0, 'detaching cancels it');

      world.dns.set(domain, 'CNAME', [created.body.cname_target]);
      assert.equal((await world.call('PATCH', `/reserved_domains/${id}`, { certificate_management_policy: {} })).status, 200);
      const done = await waitFor(world, `/reserved_domains/${id}`, 'the certificate', issued);
      assert.equal((await world.call('DELETE', `/reserved_domains/${id}`)).status, 204);
      assert.equal((await jobsOf()).length, 0, 'deleting cancels the renewal');
      assert.equal((await world.call('GET', `/tls_certificates/${done.certificate.id}`)).status, 404, 'its certificate went with it');
    });
  });

  describe(
    `certificate renewal against Pebble, with external account binding [${kind}]`,
    { skip: pebbleAvailable() ? false : 'pebble is not installed' },
    () => {
      let world: World;
      before(async () => {
        // A CA that requires an external account binding, as ZeroSSL does: the settings carry it.
        world = await startWorld(kind, { validitySeconds: 12, eab: { kid: 'edgeplane-test', hmacKey: randomBytes(32).toString('base64url') } });
      });
      after(async () => {
        await world?.close();
      });

      it('(e) a short-lived certificate is renewed two thirds into its lifetime, and the old one deleted', async () => {
        const domain = `renew-${suffix()}.example.test`;
        const created = await world.call('POST', '/reserved_domains', { domain, certificate_management_policy: {} });
        world.dns.set(domain, 'CNAME', [created.body.cname_target]);
        const path = `/reserved_domains/${created.body.id}`;
        const first = await waitFor(world, path, 'the first certificate', issued);
        const renewsAt = Date.parse(first.certificate_management_status.renews_at);
        const renewed = await waitFor(world, path, 'the renewed certificate', (b) => issued(b) && b.certificate.id !== first.certificate.id, 40_000);
        assert.ok(Date.now() >= renewsAt, 'not renewed before renews_at');
        assert.ok(Date.parse(renewed.certificate_management_status.renews_at) > renewsAt, 'the next renewal is later');
        const certificate = await world.call('GET', `/tls_certificates/${renewed.certificate.id}`);
        await verifyIssued(world, certificate.body, [domain], 'rsa');
        assert.equal((await world.call('GET', `/tls_certificates/${first.certificate.id}`)).status, 404, 'the replaced certificate is deleted');
      });
    },
  );
}
