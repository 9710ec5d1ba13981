// Certificate authorities (/certificate_authorities): uploads of a root and an intermediate CA with
// every field derived from the certificate and ca_pem re-armored; get, list, PATCH of description
// and metadata only, and delete; each refused upload (not a CA by basic constraints or key usage,
// more than one certificate, garbage, a private key, expired, PEM headers) with its code and nothing
// written; and a read-only user who may not upload.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { it } from 'node:test';
import 'reflect-metadata'; // @peculiar/x509 needs it loaded first
import * as x509 from '@peculiar/x509';
import { describeEachStore, type Api } from '../helpers/harness.js';
import { assertError, created } from '../helpers/assertions.js';
import { makeChain, oddCa, type Chain, type Issued } from '../helpers/certs.js';

const DAY = 24 * 60 * 60 * 1000;
const count = async (api: Api) => (await api.get('/certificate_authorities')).json.certificate_authorities.length as number;
const whole = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

const FIELDS = [
  'ca_pem',
  'created_at',
  'description',
  'extended_key_usages',
  'id',
  'key_usages',
  'metadata',
  'not_after',
  'not_before',
  'subject_common_name',
  'uri',
];

describeEachStore('certificate authorities', (h) => {
  for (const which of ['root', 'intermediate'] as const) {
    it(`upload: a ${which} CA; every field from the certificate, ca_pem re-armored; get and list agree`, async () => {
      const api = await h().newAccount();
      const chain = await makeChain({ intermediates: 1 });
      const ca = which === 'root' ? chain.root : chain.intermediates[0]!;
      // Sent with CRLF and without line wrapping: it comes back armored with LF, 64 columns.
      const body = ca.certPem.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, '');
      const sent = `-----BEGIN CERTIFICATE-----\r\n${body}\r\n-----END CERTIFICATE-----\r\n`;
      const c = await created(api, '/certificate_authorities', { ca_pem: sent, description: 'mtls', metadata: 'm1' });
      assert.deepEqual(Object.keys(c).sort(), FIELDS);
      assert.match(c.id, /^ca_/);
      assert.equal(c.uri, `${h().baseUrl}/certificate_authorities/${c.id}`);
      assert.match(c.created_at, RFC3339);
      assert.equal(c.ca_pem, ca.certPem);
      assert.equal(c.subject_common_name, which === 'root' ? 'Test Root CA' : 'Test Intermediate CA');
      assert.equal(c.not_before, whole(ca.cert.notBefore));
      assert.equal(c.not_after, whole(ca.cert.notAfter));
      assert.match(c.not_before, RFC3339);
      assert.match(c.not_after, RFC3339);
      assert.ok(c.key_usages.includes('cert_sign') && c.key_usages.includes('crl_sign'), String(c.key_usages));
      assert.deepEqual(c.key_usages, ['cert_sign', 'crl_sign']);
      assert.deepEqual(c.extended_key_usages, []);
      assert.equal(c.description, 'mtls');
      assert.equal(c.metadata, 'm1');

      assert.deepEqual((await api.get(`/certificate_authorities/${c.id}`)).json, c);
      const list = await api.get('/certificate_authorities');
      assert.equal(list.status, 200, list.text);
      assert.deepEqual(list.json.certificate_authorities, [c]);
    });
  }

  it('PATCH changes description and metadata only; ca_pem in a PATCH is 214 and changes nothing; delete removes it', async () => {
    const api = await h().newAccount();
    const chain = await makeChain({ intermediates: 1 });
    const c = await created(api, '/certificate_authorities', { ca_pem: chain.root.certPem, description: 'old', metadata: 'm0' });
    const other = await created(api, '/certificate_authorities', { ca_pem: chain.intermediates[0]!.certPem });
    assert.equal(other.description, '');
    assert.equal(other.metadata, '');

    const patched = await api.patch(`/certificate_authorities/${c.id}`, { description: 'new', metadata: '{"team":"edge"}' });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.json, { ...c, description: 'new', metadata: '{"team":"edge"}' });
    await assertError(
      await api.patch(`/certificate_authorities/${c.id}`, { description: 'x', ca_pem: chain.intermediates[0]!.certPem }),
      400,
      'ERR_EP_214',
      'ca_pem',
    );
    assert.deepEqual((await api.get(`/certificate_authorities/${c.id}`)).json, patched.json);

    const list = (await api.get('/certificate_authorities')).json.certificate_authorities as { id: string }[];
    assert.deepEqual(list.map((x) => x.id).sort(), [c.id, other.id].sort());
    assert.equal((await api.delete(`/certificate_authorities/${c.id}`)).status, 204);
    assert.equal((await api.get(`/certificate_authorities/${c.id}`)).status, 404);
    assert.deepEqual((await api.get(`/certificate_authorities/${other.id}`)).json, other, 'only that one');
    assert.equal(await count(api), 1);
  });

  // The fixtures the refusals share, made once.
  let shared: Promise<{ chain: Chain; digitalOnly: Issued; noConstraints: Issued; expired: Issued }> | undefined;
  const fixtures = () =>
    (shared ??= (async () => ({
      chain: await makeChain({ intermediates: 1 }),
      digitalOnly: await oddCa({ keyUsages: x509.KeyUsageFlags.digitalSignature }),
      noConstraints: await oddCa({ basicConstraints: 'absent' }),
      expired: await oddCa({ notBefore: new Date(Date.now() - 100 * DAY), notAfter: new Date(Date.now() - DAY) }),
    }))());
  type F = Awaited<ReturnType<typeof fixtures>>;
  const withHeader = (pem: string) => pem.replace('-----BEGIN CERTIFICATE-----\n', '-----BEGIN CERTIFICATE-----\nComment: hello\n\n');
  const refusals: [string, string, (f: F) => string, string | RegExp][] = [
    ['a leaf certificate (CA:FALSE)', 'ERR_EP_1913', (f) => f.chain.leaf.certPem, 'CA:FALSE'],
    ['a CA whose key usage lacks keyCertSign', 'ERR_EP_1913', (f) => f.digitalOnly.certPem, 'keyCertSign'],
    ['a certificate without basic constraints', 'ERR_EP_1913', (f) => f.noConstraints.certPem, 'no basic constraints'],
    ['two certificates', 'ERR_EP_1912', (f) => f.chain.root.certPem + f.chain.intermediates[0]!.certPem, '2 certificates'],
    ['eleven certificates, more than a chain may have', 'ERR_EP_1912', (f) => f.chain.root.certPem.repeat(11), '11 certificates'],
    ['garbage', 'ERR_EP_1900', () => `not a certificate ${randomBytes(4).toString('hex')}`, /^ca_pem /],
    ['a private key', 'ERR_EP_1911', (f) => f.chain.root.keyPem, 'ca_pem'],
    ['an expired CA', 'ERR_EP_1903', (f) => f.expired.certPem, 'expired at'],
    ['PEM headers', 'ERR_EP_1910', (f) => withHeader(f.chain.root.certPem), 'ca_pem'],
  ];
  for (const [what, code, make, mentions] of refusals) {
    it(`refuses ${what} with 400 ${code}; nothing is stored`, async () => {
      const api = await h().newAccount();
      await created(api, '/certificate_authorities', { ca_pem: (await fixtures()).chain.root.certPem });
      assert.equal(await count(api), 1);
      await assertError(await api.post('/certificate_authorities', { ca_pem: make(await fixtures()) }), 400, code, mentions);
      assert.equal(await count(api), 1);
    });
  }

  it('a read_only user may list but not upload (403 ERR_EP_635); nothing is stored', async () => {
    const api = await h().newAccount();
    const reader = await api.asNewUser('read_only');
    const chain = await makeChain();
    await assertError(await reader.post('/certificate_authorities', { ca_pem: chain.root.certPem }), 403, 'ERR_EP_635', 'read_only');
    assert.equal(await count(reader), 0);
    assert.equal(await count(api), 0);
  });
});
