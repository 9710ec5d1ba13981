// The worst body of each parser beyond JSON.parse (YAML and JSON traffic policy documents, CEL,
// PEM and X.509, SSH public keys, regular expressions), each sent by one account while another
// account reads over and over: every one is answered with its 400 (or, for the patterns, checked
// in full), and the event loop, which the in-process server shares with this test, is never held
// long. Before the bounds, the 31,000-key document of the security review held it 7-12 s.
import assert from 'node:assert/strict';
import { webcrypto, KeyObject } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { it } from 'node:test';
import 'reflect-metadata'; // @peculiar/x509 needs it loaded first
import * as x509 from '@peculiar/x509';
import { describeEachStore, type Api, type Response } from '../helpers/harness.js';
import { assertError, created } from '../helpers/assertions.js';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

// Generous for a shared, loaded machine (two cores, several test runs): the bounded parsers take a
// few tens of milliseconds of CPU; before the bounds, one document took 7 s.
const MAX_LOOP_DELAY_MS = 500;
const MAX_OTHER_READ_MS = 2000;

/**
 * Sends the hostile request while `other` lists its edges again and again; returns its answer,
 * the longest the event loop was held, and the slowest of the other account's reads.
 */
async function whileAnotherAccountReads(other: Api, hostile: () => Promise<Response>) {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  let done = false;
  let slowestRead = 0;
  delay.enable();
  const reads = (async () => {
    do {
      const start = performance.now();
      const res = await other.get('/edges/tcp');
      assert.equal(res.status, 200, res.text);
      slowestRead = Math.max(slowestRead, performance.now() - start);
    } while (!done);
  })();
  const res = await hostile().finally(() => (done = true));
  await reads;
  delay.disable();
  return { res, loopMs: delay.max / 1e6, slowestRead };
}

async function assertBounded(what: string, other: Api, hostile: () => Promise<Response>, status: number, code: string, mentions: string | RegExp) {
  const { res, loopMs, slowestRead } = await whileAnotherAccountReads(other, hostile);
  const figures = `${what}: the event loop was held up to ${Math.round(loopMs)} ms, another account's read took up to ${Math.round(slowestRead)} ms`;
  if (process.env.EDGEPLANE_TEST_FIGURES) console.log(figures);
  assert.ok(loopMs < MAX_LOOP_DELAY_MS, figures);
  assert.ok(slowestRead < MAX_OTHER_READ_MS, figures);
  assertError(res, status, code, mentions);
}

/** A self-signed certificate (a CA when `ca`) with `names` DNS names, and its key. */
async function certificateWithNames(names: number, ca = false): Promise<{ certPem: string; keyPem: string }> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as EcKeyGenParams;
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=many.example.com',
    notBefore: new Date(Date.now() - 86_400_000),
    notAfter: new Date(Date.now() + 30 * 86_400_000),
    signingAlgorithm: alg,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(ca, undefined, true),
      new x509.SubjectAlternativeNameExtension(Array.from({ length: names }, (_, i) => ({ type: 'dns' as const, value: `h${i}.example.com` }))),
    ],
  });
  const keyPem = KeyObject.from(keys.privateKey as unknown as webcrypto.CryptoKey).export({ type: 'pkcs8', format: 'pem' }) as string;
  return { certPem: `${cert.toString('pem')}\n`, keyPem };
}

/** The finding's document: 31,000 keys in an action's config, 246 KB, under the 256 KiB cap. */
const yamlKeys = (n: number) =>
  `on_tcp_connect: [{actions: [{type: log, config: {${Array.from({ length: n }, (_, i) => `${i.toString(36)}: 0`).join(', ')}}}]}]\n`;
const jsonKeys = (n: number) =>
  `{"on_tcp_connect": [{"actions": [{"type": "log", "config": {${Array.from({ length: n }, (_, i) => `"${i.toString(36)}":0`).join(',')}}}]}]}`;

describeEachStore('parser bounds: the worst bodies do not hold the event loop', (h) => {
  it('traffic_policy documents: 31,000 keys in YAML and in JSON (also three at once), and 12,000 anchors on one node, are 1970 within a few tens of ms', async () => {
    const [api, other] = [await h().newAccount(), await h().newAccount()];
    const documents: [string, string, string][] = [
      ['31,000 YAML keys', yamlKeys(31_000), 'more than 20000 tokens'],
      ['31,000 JSON keys', jsonKeys(31_000), 'more than 20000 tokens'],
      ['anchors on one node', `on_tcp_connect: ${'&a '.repeat(12_000)}[]\n`, 'more than 100 anchors'],
    ];
    for (const [what, value, mentions] of documents) {
      assert.ok(Buffer.byteLength(value) < 256 * 1024, what);
      await assertBounded(what, other, () => api.post('/edges/tcp', { traffic_policy: { value } }), 400, 'ERR_EP_1970', mentions);
    }
    // Three at once stalled every account for 36 s.
    const threeAtOnce = async () => {
      const answers = await Promise.all([0, 1, 2].map(() => api.post('/edges/tcp', { traffic_policy: { value: documents[0]![1] } })));
      for (const res of answers.slice(1)) assertError(res, 400, 'ERR_EP_1970');
      return answers[0]!;
    };
    await assertBounded('three at once', other, threeAtOnce, 400, 'ERR_EP_1970', 'more than 20000 tokens');
    assert.equal((await api.get('/edges/tcp')).json.tcp_edges.length, 0, 'nothing written');
  });

  it('CEL: a policy of 232 expressions of 3,212 characters (750 KB) is 1971 once 32 KiB of it are checked', async () => {
    const [api, other] = [await h().newAccount(), await h().newAccount()];
    // Nested comprehensions: the costliest valid CEL per character found.
    const nested = `${'[1, 2, 3].all(x, '.repeat(100)}true${')'.repeat(100)}`;
    const expression = `${nested} && ${nested}`;
    const inbound = Array.from({ length: 8 }, (_, i) => ({ name: `r${i}`, expressions: Array(29).fill(expression), actions: [{ type: 'log' }] }));
    await assertBounded('CEL', other, () => api.post('/edges/tcp', { policy: { inbound } }), 400, 'ERR_EP_1971', 'at most 32768');
  });

  it('the policy module: 50,000 CIDRs in one restrict-ips (850 KB) are 1972 before any is checked (the configs of a policy hold at most 10,000 values)', async () => {
    const [api, other] = [await h().newAccount(), await h().newAccount()];
    const allow = Array.from({ length: 50_000 }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}/32`);
    const inbound = [{ name: 'office', actions: [{ type: 'restrict-ips', config: { allow } }] }];
    await assertBounded('CIDRs', other, () => api.post('/edges/tcp', { policy: { inbound } }), 400, 'ERR_EP_1972', 'go over 10000 values');
  });

  it('PEM: a leaf and a CA of 2,500 names (64 KiB) are 1900 before their fields are read', async () => {
    const [api, other] = [await h().newAccount(), await h().newAccount()];
    const leaf = await certificateWithNames(2500);
    const ca = await certificateWithNames(2500, true);
    assert.ok(leaf.certPem.length < 65536 && ca.certPem.length < 65536);
    await assertBounded(
      'TLS certificate',
      other,
      () => api.post('/tls_certificates', { certificate_pem: leaf.certPem, private_key_pem: leaf.keyPem }),
      400,
      'ERR_EP_1900',
      'more than 512 DER elements',
    );
    await assertBounded('CA', other, () => api.post('/certificate_authorities', { ca_pem: ca.certPem }), 400, 'ERR_EP_1900', 'more than 512 DER elements');
  });

  it('SSH public keys and user agent patterns: the largest bodies their fields allow are checked in full, quickly', async () => {
    const [api, other] = [await h().newAccount(), await h().newAccount()];
    const sshCa = await created(api, '/ssh_certificate_authorities', {});
    const publicKey = `ssh-rsa ${Buffer.alloc(12_000, 7).toString('base64')}`.slice(0, 16_384);
    await assertBounded(
      'SSH public key',
      other,
      () => api.post('/ssh_user_certificates', { ssh_certificate_authority_id: sshCa.id, public_key: publicKey }),
      400,
      'ERR_EP_1950',
      'could not be decoded',
    );

    const edge = await created(api, '/edges/https', {});
    // 1,024 characters of alternatives (what safe-regex2 takes longest on), 32 in each list; the last is refused.
    const slow = `${'ab|'.repeat(341)}a`;
    const filter = { allow: Array(32).fill(slow), deny: [...Array(31).fill(slow), '(a+)+$'] };
    await assertBounded(
      'user agent patterns',
      other,
      () => api.post(`/edges/https/${edge.id}/routes`, { match_type: 'path_prefix', match: '/', user_agent_filter: filter }),
      400,
      'ERR_EP_2090',
      'deny[31]',
    );
  });
});
