// The Pebble harness (test/helpers/pebble.ts) against the real Pebble binary: the ACME tests can
// only be trusted if the server they run against starts, is trusted over HTTPS, honours its
// config (validity period, external account binding), and really goes away and comes back.
// Skipped when Pebble is not installed. No challenge is validated here, so Pebble's DNS server
// is just an unused UDP port.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import fs from 'node:fs';
import https from 'node:https';
import { after, before, describe, it } from 'node:test';
import * as acme from 'acme-client';
import { x509 } from '../../src/lib/crypto/x509.js';
import { httpsGet, pebbleAvailable, startPebble, type Pebble } from '../helpers/pebble.js';

const skip = pebbleAvailable() ? false : 'pebble is not installed (Debian package `pebble`: run scripts/ensure-test-tools.sh as root)';

/** 127.0.0.1:PORT of a UDP port that was free a moment ago, for Pebble's unused DNS server. */
async function unusedDnsServer(): Promise<string> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', resolve);
  });
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(resolve));
  return `127.0.0.1:${port}`;
}

/** A new ACME client for Pebble with a fresh P-256 account key, optionally with external account binding. */
async function acmeClient(pebble: Pebble, externalAccountBinding?: { kid: string; hmacKey: string }): Promise<acme.Client> {
  const accountKey = await acme.crypto.createPrivateEcdsaKey();
  return new acme.Client({ directoryUrl: pebble.directoryUrl, accountKey, externalAccountBinding });
}

describe('Pebble harness: lifecycle', { skip }, () => {
  const validitySeconds = 3600;
  let pebble: Pebble;
  let ca: string;

  before(async () => {
    pebble = await startPebble({ dnsServer: await unusedDnsServer(), httpPort: 5002, certificateValiditySeconds: validitySeconds });
    ca = fs.readFileSync(pebble.caFile, 'utf8');
  });

  after(async () => {
    await pebble?.close();
  });

  it('serves an ACME directory over HTTPS signed by caFile', async () => {
    assert.match(pebble.directoryUrl, /^https:\/\/127\.0\.0\.1:\d+\/dir$/);
    const response = await httpsGet(pebble.directoryUrl, ca);
    assert.equal(response.status, 200, pebble.logs());
    const directory = JSON.parse(response.body) as Record<string, unknown>;
    const origin = new URL(pebble.directoryUrl).origin;
    for (const resource of ['newNonce', 'newAccount', 'newOrder']) {
      assert.equal(typeof directory[resource], 'string', `directory has ${resource}: ${response.body}`);
      assert.ok((directory[resource] as string).startsWith(`${origin}/`), `${resource} is on ${origin}: ${response.body}`);
    }
  });

  it('uses the configured certificate validity period', () => {
    assert.match(pebble.logs(), new RegExp(`certificate validity period of ${validitySeconds} seconds`));
  });

  it('rejects no good nonces unless asked to', () => {
    assert.match(pebble.logs(), /reject 0% of good nonces/);
  });

  it('hands out its issuance root as a self-signed CA certificate', async () => {
    const roots = await pebble.issuanceRoots();
    assert.equal(roots.length, 1);
    assert.match(roots[0], /^-----BEGIN CERTIFICATE-----/);
    const root = new x509.X509Certificate(roots[0]);
    assert.equal(root.getExtension(x509.BasicConstraintsExtension)?.ca, true, `${root.subject} is a CA`);
    assert.ok(await root.isSelfSigned(), `${root.subject} is self-signed`);
  });

  it('refuses connections once stopped and answers on the same URL, with a new root, once started again', async () => {
    const [rootBefore] = await pebble.issuanceRoots();
    await pebble.stop();
    await assert.rejects(httpsGet(pebble.directoryUrl, ca), { code: 'ECONNREFUSED' });
    await pebble.start();
    const response = await httpsGet(pebble.directoryUrl, ca);
    assert.equal(response.status, 200, pebble.logs());
    const [rootAfter] = await pebble.issuanceRoots();
    assert.notEqual(rootAfter, rootBefore);
  });
});

describe('Pebble harness: external account binding', { skip }, () => {
  const kid = 'edgeplane-test';
  const hmacKey = randomBytes(32).toString('base64url');
  let pebble: Pebble;
  let previousAgent: unknown;

  before(async () => {
    pebble = await startPebble({ dnsServer: await unusedDnsServer(), httpPort: 5002, eab: { [kid]: hmacKey } });
    // acme-client sends every request through one shared axios instance; trust Pebble's CA there.
    previousAgent = acme.axios.defaults.httpsAgent;
    acme.axios.defaults.httpsAgent = new https.Agent({ ca: fs.readFileSync(pebble.caFile) });
  });

  after(async () => {
    acme.axios.defaults.httpsAgent = previousAgent;
    await pebble?.close();
  });

  it('refuses an account without external account binding', async () => {
    const client = await acmeClient(pebble);
    await assert.rejects(client.createAccount({ termsOfServiceAgreed: true }), /externalAccountBinding/);
  });

  it('refuses an account bound with the wrong HMAC key', async () => {
    const client = await acmeClient(pebble, { kid, hmacKey: randomBytes(32).toString('base64url') });
    await assert.rejects(client.createAccount({ termsOfServiceAgreed: true }), /external account binding JWS verification error/);
  });

  it('accepts an account bound with the configured kid and HMAC key', async () => {
    const client = await acmeClient(pebble, { kid, hmacKey });
    const account = await client.createAccount({ termsOfServiceAgreed: true });
    assert.equal(account.status, 'valid');
  });
});
