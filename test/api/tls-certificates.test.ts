// TLS certificates (/tls_certificates): uploads of RSA, ECDSA and Ed25519 chains with their keys in
// PKCS#8, PKCS#1 and SEC1 and every field derived from the leaf; the private key never in a response
// and sealed at rest; each refused upload with its code and nothing written; PATCH of description
// and metadata only; and a certificate attached to a reserved domain that cannot be deleted until
// it is detached.
import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { it } from 'node:test';
import { describeEachStore, type Api } from '../helpers/harness.js';
import { assertError, created } from '../helpers/assertions.js';
import { encryptedPkcs8Pem, legacyEncryptedPem, makeChain, pkcs1Pem, sec1Pem, type Chain, type KeyKind } from '../helpers/certs.js';

const DAY = 24 * 60 * 60 * 1000;
const host = () => `${randomBytes(4).toString('hex')}.example.com`;
const count = async (api: Api) => (await api.get('/tls_certificates')).json.tls_certificates.length as number;
const upload = (api: Api, certificate_pem: string, private_key_pem: string) => api.post('/tls_certificates', { certificate_pem, private_key_pem });
const whole = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
const pkcs8 = (key: KeyObject) => key.export({ type: 'pkcs8', format: 'pem' }) as string;
const spki = (key: KeyObject) => createPublicKey(key).export({ type: 'spki', format: 'pem' }) as string;
/** The base64 lines of a PEM (long enough not to turn up by chance), and its whole base64 body. */
const secrets = (pem: string) => [...pem.split(/\r?\n/).filter((l) => l.length >= 32 && !l.startsWith('-----')), pem.replace(/-----[^-]+-----|\s/g, '')];

const FIELDS = [
  'certificate_pem',
  'created_at',
  'description',
  'extended_key_usages',
  'id',
  'issued_at',
  'issuer_common_name',
  'key_usages',
  'metadata',
  'not_after',
  'not_before',
  'private_key_type',
  'serial_number',
  'subject_alternative_names',
  'subject_common_name',
  'subject_country',
  'subject_locality',
  'subject_organization',
  'subject_organizational_unit',
  'subject_province',
  'uri',
];

/** No key material and no field named like a private key (but private_key_type) anywhere in a response. */
function assertNoKey(res: { text: string; json: unknown }, keyPems: string[]) {
  assert.doesNotMatch(res.text, /PRIVATE KEY/);
  for (const pem of keyPems) for (const s of secrets(pem)) assert.ok(!res.text.includes(s), `the response holds key material: ${s}`);
  const names: string[] = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object')
      for (const [k, child] of Object.entries(v)) {
        names.push(k);
        walk(child);
      }
  };
  walk(res.json);
  assert.deepEqual([...new Set(names.filter((n) => /private|key_pem|secret|sealed/i.test(n)))], names.includes('private_key_type') ? ['private_key_type'] : []);
}

const UPLOADS: { kind: KeyKind; form: 'pkcs8' | 'pkcs1' | 'sec1'; intermediates: 0 | 1; crlf?: boolean; ips?: string[]; subject?: Record<string, string> }[] = [
  { kind: 'rsa', form: 'pkcs8', intermediates: 0 },
  { kind: 'rsa', form: 'pkcs1', intermediates: 1, subject: { O: 'Acme Ltd', OU: 'Edge', L: 'Utrecht', ST: 'Utrecht', C: 'NL' } },
  { kind: 'ecdsa', form: 'pkcs8', intermediates: 1, ips: ['10.1.2.3', '2001:db8::1'] },
  { kind: 'ecdsa', form: 'sec1', intermediates: 0, crlf: true, subject: { O: 'Only Org' } },
  { kind: 'ed25519', form: 'pkcs8', intermediates: 1, ips: ['192.0.2.7'], subject: { C: 'DE', L: 'Berlin' } },
];

describeEachStore('TLS certificates', (h) => {
  for (const u of UPLOADS) {
    it(`upload: ${u.kind} leaf, ${u.form} key, ${u.intermediates} intermediate(s); every field from the leaf, no key in any response`, async () => {
      const api = await h().newAccount();
      const names = [host(), `*.${host()}`];
      const chain = await makeChain({ keyKind: u.kind, intermediates: u.intermediates, names, ips: u.ips, subject: u.subject });
      const keyPem = u.form === 'pkcs1' ? pkcs1Pem(chain.leaf.key) : u.form === 'sec1' ? sec1Pem(chain.leaf.key) : chain.leaf.keyPem;
      assert.match(keyPem, u.form === 'pkcs1' ? /BEGIN RSA PRIVATE KEY/ : u.form === 'sec1' ? /BEGIN EC PRIVATE KEY/ : /BEGIN PRIVATE KEY/);
      const sent = u.crlf ? chain.chainPem.replace(/\n/g, '\r\n') : chain.chainPem;
      const res = await upload(api, sent, keyPem);
      assert.equal(res.status, 201, res.text);
      const c = res.json;
      assert.deepEqual(Object.keys(c).sort(), FIELDS);
      assert.match(c.id, /^cert_/);
      assert.equal(c.uri, `${h().baseUrl}/tls_certificates/${c.id}`);
      assert.equal(c.certificate_pem, chain.chainPem, 'the chain re-armored with LF, leaf first');
      assert.equal(c.certificate_pem.match(/BEGIN CERTIFICATE/g).length, 1 + u.intermediates);
      assert.equal(c.subject_common_name, names[0]);
      assert.deepEqual(c.subject_alternative_names, { dns_names: names, ips: u.ips ?? [] });
      const s = u.subject ?? {};
      assert.deepEqual(
        [c.subject_organization, c.subject_organizational_unit, c.subject_locality, c.subject_province, c.subject_country],
        [s.O ?? '', s.OU ?? '', s.L ?? '', s.ST ?? '', s.C ?? ''],
      );
      assert.equal(c.issuer_common_name, u.intermediates === 1 ? 'Test Intermediate CA' : 'Test Root CA');
      assert.equal(c.serial_number, chain.leaf.cert.serialNumber.toLowerCase());
      assert.match(c.serial_number, /^[0-9a-f]+$/);
      assert.equal(c.not_before, whole(chain.leaf.cert.notBefore));
      assert.equal(c.not_after, whole(chain.leaf.cert.notAfter));
      assert.match(c.not_after, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.deepEqual(c.key_usages, u.kind === 'rsa' ? ['digital_signature', 'key_encipherment'] : ['digital_signature']);
      assert.deepEqual(c.extended_key_usages, ['server_auth', 'client_auth']);
      assert.equal(c.private_key_type, u.kind);
      assert.equal(c.issued_at, null);

      const keys = [keyPem, chain.leaf.keyPem];
      assertNoKey(res, keys);
      const got = await api.get(`/tls_certificates/${c.id}`);
      assert.deepEqual(got.json, c);
      assertNoKey(got, keys);
      const list = await api.get('/tls_certificates');
      assert.deepEqual(list.json.tls_certificates, [c]);
      assertNoKey(list, keys);
    });
  }

  it('seals the private key at rest: v1 sealed value bound to the id, never the key in plain text', async () => {
    const api = await h().newAccount();
    const chain = await makeChain({ keyKind: 'rsa', names: [host()] });
    const uploaded = pkcs1Pem(chain.leaf.key);
    const c = await created(api, '/tls_certificates', { certificate_pem: chain.chainPem, private_key_pem: uploaded });
    const row = await h().deps.store.db.selectFrom('tls_certificates').selectAll().where('id', '=', c.id).executeTakeFirstOrThrow();
    const sealed = row.private_key_sealed;
    assert.ok(sealed.startsWith('v1:'), sealed.slice(0, 10));
    assert.doesNotMatch(sealed, /PRIVATE KEY/);
    for (const s of [...secrets(uploaded), ...secrets(chain.leaf.keyPem)]) assert.ok(!sealed.includes(s), 'the column holds the key in plain text');
    // It is the leaf's key (as PKCS#8), and opens only for its own row.
    assert.equal(h().deps.sealer.open(sealed, c.id), chain.leaf.keyPem);
    assert.throws(() => h().deps.sealer.open(sealed, 'cert_someotherrow'));
  });

  // The fixtures the refusals share, made once: an ECDSA chain with an intermediate, an RSA chain,
  // an unrelated chain and an expired leaf.
  let shared: Promise<{ ec: Chain; rsa: Chain; other: Chain; expired: Chain }> | undefined;
  const fixtures = () =>
    (shared ??= (async () => ({
      ec: await makeChain({ intermediates: 1, names: ['bad.example.com'] }),
      rsa: await makeChain({ keyKind: 'rsa', names: ['bad.example.com'] }),
      other: await makeChain({ names: ['bad.example.com'] }),
      expired: await makeChain({ names: ['bad.example.com'], notBefore: new Date(Date.now() - 100 * DAY), notAfter: new Date(Date.now() - DAY) }),
    }))());
  type F = Awaited<ReturnType<typeof fixtures>>;
  const block = (type: string, body: Buffer) => `-----BEGIN ${type}-----\n${body.toString('base64')}\n-----END ${type}-----\n`;
  const withHeader = (pem: string) => pem.replace('-----BEGIN CERTIFICATE-----\n', '-----BEGIN CERTIFICATE-----\nComment: hello\n\n');
  const refusals: [string, number, string, (f: F) => [string, string], string | RegExp | undefined][] = [
    ['garbage certificate_pem', 400, 'ERR_EP_1900', (f) => ['not a certificate', f.ec.leaf.keyPem], 'no PEM block'],
    ['a CERTIFICATE block that is not X.509', 400, 'ERR_EP_1900', (f) => [block('CERTIFICATE', randomBytes(300)), f.ec.leaf.keyPem], 'number 1'],
    ['garbage private_key_pem', 400, 'ERR_EP_1901', (f) => [f.ec.chainPem, 'not a key'], undefined],
    ['a PRIVATE KEY block that is no key', 400, 'ERR_EP_1901', (f) => [f.ec.chainPem, block('PRIVATE KEY', randomBytes(100))], undefined],
    ['two key blocks', 400, 'ERR_EP_1901', (f) => [f.ec.chainPem, f.ec.leaf.keyPem + sec1Pem(f.ec.leaf.key)], '2 PEM blocks'],
    ['an ENCRYPTED PRIVATE KEY', 400, 'ERR_EP_1902', (f) => [f.ec.chainPem, encryptedPkcs8Pem(f.ec.leaf.key)], undefined],
    ['a Proc-Type: 4,ENCRYPTED key', 400, 'ERR_EP_1902', (f) => [f.rsa.chainPem, legacyEncryptedPem(f.rsa.leaf.key)], undefined],
    ['an expired leaf', 400, 'ERR_EP_1903', (f) => [f.expired.chainPem, f.expired.leaf.keyPem], 'expired at'],
    ['an Ed448 key', 400, 'ERR_EP_1904', (f) => [f.ec.chainPem, pkcs8(generateKeyPairSync('ed448').privateKey)], 'ed448'],
    ['a DSA key', 400, 'ERR_EP_1904', (f) => [f.ec.chainPem, pkcs8(generateKeyPairSync('dsa', { modulusLength: 2048, divisorLength: 256 }).privateKey)], 'dsa'],
    ['headers in a CERTIFICATE block', 400, 'ERR_EP_1910', (f) => [withHeader(f.ec.chainPem), f.ec.leaf.keyPem], 'certificate_pem'],
    ['a PUBLIC KEY block in the chain', 400, 'ERR_EP_1911', (f) => [f.ec.chainPem + spki(f.ec.leaf.key), f.ec.leaf.keyPem], 'PUBLIC KEY'],
    ['the key of another certificate', 400, 'ERR_EP_1923', (f) => [f.ec.chainPem, f.other.leaf.keyPem], undefined],
    ['a private key as certificate_pem', 400, 'ERR_EP_1924', (f) => [f.ec.leaf.keyPem, f.ec.leaf.keyPem], undefined],
    ['a key after the chain in certificate_pem', 400, 'ERR_EP_1924', (f) => [f.ec.chainPem + sec1Pem(f.ec.leaf.key), f.ec.leaf.keyPem], undefined],
    ['a certificate as private_key_pem', 400, 'ERR_EP_1925', (f) => [f.ec.chainPem, f.ec.leaf.certPem], undefined],
    ['intermediate before the leaf', 400, 'ERR_EP_1926', (f) => [f.ec.intermediates[0]!.certPem + f.ec.leaf.certPem, f.ec.leaf.keyPem], 'certificate 1 of'],
    ['a foreign root after the intermediate', 400, 'ERR_EP_1926', (f) => [f.ec.chainPem + f.other.root.certPem, f.ec.leaf.keyPem], 'certificate 2 of'],
  ];
  for (const [what, status, code, make, mentions] of refusals) {
    it(`refuses ${what} with ${code}; nothing is stored`, async () => {
      const api = await h().newAccount();
      const [certificatePem, keyPem] = make(await fixtures());
      assert.equal(await count(api), 0);
      await assertError(await upload(api, certificatePem, keyPem), status, code, mentions);
      assert.equal(await count(api), 0);
    });
  }

  it('PATCH changes description and metadata only; certificate_pem or private_key_pem in a PATCH is 214 and changes nothing', async () => {
    const api = await h().newAccount();
    const chain = await makeChain({ names: [host()] });
    const c = await created(api, '/tls_certificates', {
      certificate_pem: chain.chainPem,
      private_key_pem: chain.leaf.keyPem,
      description: 'old',
      metadata: 'm0',
    });
    const patched = await api.patch(`/tls_certificates/${c.id}`, { description: 'new', metadata: '{"team":"edge"}' });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.json, { ...c, description: 'new', metadata: '{"team":"edge"}' });
    assertNoKey(patched, [chain.leaf.keyPem]);

    const other = await makeChain({ names: [host()] });
    await assertError(await api.patch(`/tls_certificates/${c.id}`, { certificate_pem: other.chainPem }), 400, 'ERR_EP_214', 'certificate_pem');
    await assertError(
      await api.patch(`/tls_certificates/${c.id}`, { description: 'x', private_key_pem: other.leaf.keyPem }),
      400,
      'ERR_EP_214',
      'private_key_pem',
    );
    assert.deepEqual((await api.get(`/tls_certificates/${c.id}`)).json, patched.json);
  });

  it('refuses to delete a certificate attached to a reserved domain (409 naming it); once detached it deletes', async () => {
    const api = await h().newAccount();
    const domain = host();
    const chain = await makeChain({ names: [domain] });
    const c = await created(api, '/tls_certificates', { certificate_pem: chain.chainPem, private_key_pem: chain.leaf.keyPem });
    const rd = await created(api, '/reserved_domains', { domain, certificate_id: c.id });
    assert.equal(rd.certificate.id, c.id);

    await assertError(await api.delete(`/tls_certificates/${c.id}`), 409, 'ERR_EP_1966', rd.id);
    assert.deepEqual((await api.get(`/tls_certificates/${c.id}`)).json, c);
    assert.equal((await api.get(`/reserved_domains/${rd.id}`)).json.certificate.id, c.id);

    assert.equal((await api.delete(`/reserved_domains/${rd.id}/certificate`)).status, 204);
    assert.equal((await api.get(`/reserved_domains/${rd.id}`)).json.certificate, null);
    assert.equal((await api.delete(`/tls_certificates/${c.id}`)).status, 204);
    assert.equal((await api.get(`/tls_certificates/${c.id}`)).status, 404);
    assert.equal(await count(api), 0);
  });
});
