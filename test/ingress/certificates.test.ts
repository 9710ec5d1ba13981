// The certificates public ingress presents, seen in real TLS handshakes with the HTTPS listener:
// a reserved domain's uploaded certificate (exact and through a wildcard reservation), the local
// CA's wildcard for names under a service domain, the default for anything else, and a changed
// certificate served once the cache's time is up. On both stores.
import assert from 'node:assert/strict';
import { randomBytes, X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { after, before, it } from 'node:test';
import { pino } from 'pino';
import { createIngressCertificates, type IngressCertificates } from '../../src/ingress/certificates.js';
import { startIngress, type Ingress } from '../../src/ingress/ingress.js';
import { ensureLocalTls, ensureServiceDomainTls, type LocalTls } from '../../src/tls.js';
import { makeChain, type Chain } from '../helpers/certs.js';
import { created } from '../helpers/assertions.js';
import { describeEachStore, type Api } from '../helpers/harness.js';

const SERVICE = 'svc.ingress.test';
const rnd = () => randomBytes(4).toString('hex');

async function upload(api: Api, names: string[]): Promise<{ id: string; chain: Chain }> {
  const chain = await makeChain({ names });
  const cert = await created(api, '/tls_certificates', { certificate_pem: chain.chainPem, private_key_pem: chain.leaf.keyPem });
  return { id: cert.id as string, chain };
}

/** The leaf the listener presents for `servername` (unverified: the test compares it). */
async function presented(port: number, servername: string): Promise<X509Certificate> {
  const socket = tls.connect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false });
  await once(socket, 'secureConnect');
  const cert = socket.getPeerX509Certificate()!;
  socket.destroy();
  return cert;
}

const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;

describeEachStore('ingress certificates', (h) => {
  let dir: string;
  let local: LocalTls;
  let ingress: Ingress;
  let certificates: IngressCertificates;
  let clock = Date.now();

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'edgeplane-ingress-certs-'));
    local = await ensureLocalTls(dir, []);
    certificates = createIngressCertificates({
      store: h().deps.store,
      sealer: h().deps.sealer,
      domains: { serviceDomains: [SERVICE] },
      dataDir: dir,
      defaultCertificate: { cert: local.cert, key: local.key },
      log: pino({ level: 'silent' }),
      ttlMs: 60_000,
      now: () => clock,
    });
    ingress = await startIngress({
      https: { host: '127.0.0.1', port: 0 },
      directory: { http: () => undefined, tls: () => undefined, tcp: () => undefined, labeled: () => undefined, internal: () => undefined },
      certificates,
      log: pino({ level: 'silent' }),
    });
  });

  after(async () => {
    await ingress?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("presents a reserved domain's uploaded certificate, unsealed, and a wildcard reservation's for a name one label under it", async () => {
    const api = await h().newAccount();
    const name = `${rnd()}.example.com`;
    const exact = await upload(api, [name]);
    await created(api, '/reserved_domains', { domain: name, certificate_id: exact.id });
    const base = `${rnd()}.example.org`;
    const star = await upload(api, [`*.${base}`]);
    await created(api, '/reserved_domains', { domain: `*.${base}`, certificate_id: star.id });

    const port = ingress.httpsAddress!.port;
    assert.equal((await presented(port, name.toUpperCase())).fingerprint256, fingerprint(exact.chain.leaf.certPem));
    // A full handshake verified against the certificate's own CA.
    const verified = tls.connect({ host: '127.0.0.1', port, servername: name, ca: exact.chain.root.certPem });
    await once(verified, 'secureConnect');
    assert.equal(verified.authorized, true);
    verified.destroy();
    assert.equal((await presented(port, `a.${base}`)).fingerprint256, fingerprint(star.chain.leaf.certPem));
    // Two labels under the wildcard, and the base itself, are not its names.
    assert.equal((await presented(port, `a.b.${base}`)).fingerprint256, fingerprint(local.cert));
    assert.equal((await presented(port, base)).fingerprint256, fingerprint(local.cert));
  });

  it("presents the local CA's wildcard for names under a service domain, and the default otherwise", async () => {
    const port = ingress.httpsAddress!.port;
    const socket = tls.connect({ host: '127.0.0.1', port, servername: `app.${SERVICE}`, ca: fs.readFileSync(local.caFile, 'utf8') });
    await once(socket, 'secureConnect');
    assert.equal(socket.authorized, true);
    const leaf = socket.getPeerX509Certificate()!;
    assert.match(leaf.subjectAltName!, new RegExp(`DNS:\\*\\.${SERVICE.replace(/\./g, '\\.')}`));
    socket.destroy();
    // Kept in the data directory and reused while it is good.
    const kept = await ensureServiceDomainTls(dir, SERVICE);
    assert.equal(kept.cert, fs.readFileSync(path.join(dir, 'tls', `service-${SERVICE}.crt`), 'utf8'));
    assert.equal(leaf.fingerprint256, fingerprint(kept.cert));
    assert.equal((await presented(port, `unknown-${rnd()}.example.net`)).fingerprint256, fingerprint(local.cert));
  });

  it('serves a changed certificate once the cached one has had its time', async () => {
    const api = await h().newAccount();
    const name = `${rnd()}.example.com`;
    const first = await upload(api, [name]);
    const domain = await created(api, '/reserved_domains', { domain: name, certificate_id: first.id });
    const port = ingress.httpsAddress!.port;
    assert.equal((await presented(port, name)).fingerprint256, fingerprint(first.chain.leaf.certPem));
    const second = await upload(api, [name]);
    assert.equal((await api.patch(`/reserved_domains/${domain.id}`, { certificate_id: second.id })).status, 200);
    assert.equal((await presented(port, name)).fingerprint256, fingerprint(first.chain.leaf.certPem), 'cached for now');
    clock += 60_001;
    assert.equal((await presented(port, name)).fingerprint256, fingerprint(second.chain.leaf.certPem));
  });
});
