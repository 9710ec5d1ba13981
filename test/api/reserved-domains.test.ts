// Reserved domains: how a name is stored and refused, uniqueness within and across accounts and
// through wildcards, CNAME targets, region, certificates (uploaded, by policy, and the policy's
// state), endpoint configurations by type, and read-only users.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { it } from 'node:test';
import { makeChain } from '../helpers/certs.js';
import { describeEachStore, type Api } from '../helpers/harness.js';
import { assertError, created } from '../helpers/assertions.js';

const rnd = () => randomBytes(4).toString('hex');
const base = () => `${rnd()}.example.com`;
const rd = (api: Api, domain: string, extra: Record<string, unknown> = {}) => created(api, '/reserved_domains', { domain, ...extra });
const count = async (api: Api) => (await api.get('/reserved_domains')).json.reserved_domains.length as number;
const ec = async (api: Api, type: string) => (await created(api, '/endpoint_configurations', { type })).id as string;
async function cert(api: Api, names: string[]): Promise<string> {
  const chain = await makeChain({ names });
  return (await created(api, '/tls_certificates', { certificate_pem: chain.chainPem, private_key_pem: chain.leaf.keyPem })).id;
}
/** Asserts that a 409 about another account's name reveals none of that account's identifiers. */
function revealsNothingOf(msg: string, owner: Api, ids: string[]) {
  for (const secret of [...ids, owner.info.accountId, owner.info.userId, owner.info.keyId, owner.token!]) assert.ok(!msg.includes(secret), msg);
}

const CNAME = /^[a-z0-9]{17}\.[a-z0-9]{17}\.edgeplane-cname\.app$/;
const ACME = /^[a-z0-9]{17}\.[a-z0-9]{17}\.edgeplane-acme\.app$/;
/** Every key of a reserved domain, in sorted order: always all present. */
const KEYS = (
  'acme_challenge_cname_target certificate certificate_management_policy certificate_management_status cname_target created_at description domain ' +
  'http_endpoint_configuration https_endpoint_configuration id metadata region uri'
).split(' ');

describeEachStore('reserved domains', (h) => {
  it('stores the name in lower case with A-labels and no trailing dot, with every key present', async () => {
    const api = await h().newAccount();
    const b = rnd();
    const d = await rd(api, `Bücher.${b}.Example.COM.`, { description: 'shop', metadata: '{"a":1}' });
    assert.match(d.id, /^rd_/);
    assert.equal(d.domain, `xn--bcher-kva.${b}.example.com`);
    assert.deepEqual(Object.keys(d).sort(), KEYS);
    assert.equal(d.uri, `${h().baseUrl}/reserved_domains/${d.id}`);
    assert.deepEqual((await api.get(`/reserved_domains/${d.id}`)).json, d);
    assert.equal((await rd(api, `WWW.${b}.example.com.`)).domain, `www.${b}.example.com`);
  });

  it('refuses each kind of bad name with its own code and writes nothing', async () => {
    const api = await h().newAccount();
    const label63 = 'a'.repeat(63);
    const cases: [string, string][] = [
      ['', '401'],
      ['a_b.example.com', '406'],
      ['-a.example.com', '407'],
      ['a-.example.com', '408'],
      ['example..com', '409'],
      ['ab--c.example.com', '410'],
      ['1.2.3.4', '411'],
      ['xn--zz.example.com', '429'],
      [`${'a'.repeat(64)}.example.com`, '513'],
      ['üöäéèêëìíîïðñòóôõøùúûýþÿāăąćĉċčďđēĕėęěĝğ.example.com', '513'], // 40 characters, an A-label of more than 63
      [[label63, label63, label63, label63].join('.'), '514'],
      ['a.'.repeat(150) + 'com', '215'],
      ['com', '448'],
      ['a.*.example.com', '402'],
      ['*.*.example.com', '402'],
      ['*a.example.com', '403'],
      ['*.com', '416'],
      ['edgeplane.app', '404'],
      ['*.edgeplane.app', '404'],
      ['edgeplane-cname.app', '404'],
      [`a.${rnd()}.edgeplane-cname.app`, '404'],
      [`*.${rnd()}.edgeplane-acme.app`, '404'],
    ];
    for (const [domain, code] of cases) {
      await assertError(await api.post('/reserved_domains', { domain }), 400, `ERR_EP_${code}`);
      assert.equal(await count(api), 0, domain);
    }
  });

  it('refuses a name the account already holds (413, naming its id), in any spelling', async () => {
    const api = await h().newAccount();
    const name = base();
    const first = await rd(api, name);
    await assertError(await api.post('/reserved_domains', { domain: name }), 409, 'ERR_EP_413', first.id);
    await assertError(await api.post('/reserved_domains', { domain: `${name.toUpperCase()}.` }), 409, 'ERR_EP_413', first.id);
    assert.equal(await count(api), 1);
  });

  it("refuses another account's name (414) without revealing that account, and frees it on delete", async () => {
    const a = await h().newAccount();
    const b = await h().newAccount();
    const name = base();
    const theirs = await rd(a, name);
    const res = await b.post('/reserved_domains', { domain: name });
    await assertError(res, 409, 'ERR_EP_414', name);
    revealsNothingOf(res.json.msg, a, [theirs.id]);
    assert.equal(await count(b), 0);
    assert.equal((await a.delete(`/reserved_domains/${theirs.id}`)).status, 204);
    assert.equal((await rd(b, name)).domain, name);
  });

  it('a wildcard of one account blocks the names under it for another account (417), but not for itself and not its base', async () => {
    const a = await h().newAccount();
    const b = await h().newAccount();
    const x = base();
    const wildcard = await rd(a, `*.${x}`);
    for (const domain of [`a.${x}`, `a.b.${x}`, `*.b.${x}`]) {
      const res = await b.post('/reserved_domains', { domain });
      await assertError(res, 409, 'ERR_EP_417');
      revealsNothingOf(res.json.msg, a, [wildcard.id]);
    }
    assert.equal(await count(b), 0);
    assert.equal((await rd(b, x)).domain, x);
    for (const domain of [`a.${x}`, `a.b.${x}`, `*.b.${x}`]) assert.equal((await rd(a, domain)).domain, domain);
  });

  it("a wildcard is refused (417) over another account's name however many names of its own sort before it", async () => {
    const a = await h().newAccount();
    const b = await h().newAccount();
    const x = base();
    await rd(a, `zz.${x}`);
    for (let i = 0; i < 120; i++) await rd(b, `a${String(i).padStart(3, '0')}.${x}`);
    assertError(await b.post('/reserved_domains', { domain: `*.${x}` }), 409, 'ERR_EP_417');
    const wildcards = await h().deps.store.db.selectFrom('reserved_domains').select('id').where('domain', '=', `*.${x}`).execute();
    assert.deepEqual(wildcards, [], 'the wildcard was not written');
  });

  it("a wildcard is refused (417) over another account's names under its base, not over its base or a sibling", async () => {
    const a = await h().newAccount();
    const b = await h().newAccount();
    const y = base();
    const z = base();
    const v = base();
    const held = [await rd(a, `a.${y}`), await rd(a, `a.b.${z}`), await rd(a, `*.q.${v}`)];
    for (const domain of [`*.${y}`, `*.${z}`, `*.b.${z}`, `*.${v}`]) {
      const res = await b.post('/reserved_domains', { domain });
      await assertError(res, 409, 'ERR_EP_417');
      revealsNothingOf(
        res.json.msg,
        a,
        held.map((d) => d.id),
      );
    }
    assert.equal(await count(b), 0);
    assert.equal((await rd(b, `*.c.${z}`)).domain, `*.c.${z}`);
    const w = base();
    await rd(a, w);
    assert.equal((await rd(b, `*.${w}`)).domain, `*.${w}`);
    assert.equal((await rd(a, `*.${y}`)).domain, `*.${y}`);
  });

  it("refuses a name at or under another account's agent ingress domain, or a wildcard at, under or over it (454), revealing nothing", async () => {
    const a = await h().newAccount();
    const b = await h().newAccount();
    const parent = base();
    const x = `connect.${parent}`;
    const ingress = await created(a, '/agent_ingresses', { domain: x });
    for (const domain of [x, `app.${x}`, `a.b.${x}`, `*.${x}`, `*.b.${x}`, `*.${parent}`]) {
      const res = await b.post('/reserved_domains', { domain });
      await assertError(res, 409, 'ERR_EP_454', domain);
      revealsNothingOf(res.json.msg, a, [ingress.id]);
    }
    assert.equal(await count(b), 0, 'nothing written');
    // Its parent (a plain name holds only itself) and a sibling stay free.
    assert.equal((await rd(b, parent)).domain, parent);
    assert.equal((await rd(b, `other.${parent}`)).domain, `other.${parent}`);
    // The ingress's own account reserves under it as before.
    for (const domain of [x, `app.${x}`, `*.${x}`]) assert.equal((await rd(a, domain)).domain, domain);
  });

  it("frees the names under another account's agent ingress domain when the ingress is deleted", async () => {
    const a = await h().newAccount();
    const b = await h().newAccount();
    const x = base();
    const ingress = await created(a, '/agent_ingresses', { domain: x });
    await assertError(await b.post('/reserved_domains', { domain: `app.${x}` }), 409, 'ERR_EP_454');
    assert.equal((await a.delete(`/agent_ingresses/${ingress.id}`)).status, 204);
    assert.equal((await rd(b, `app.${x}`)).domain, `app.${x}`);
  });

  it('gives own names a CNAME target, own wildcards an ACME one too, and service-owned names neither', async () => {
    const api = await h().newAccount();
    const own = await rd(api, base());
    assert.match(own.cname_target, CNAME);
    assert.equal(own.acme_challenge_cname_target, null);
    const wild = await rd(api, `*.${base()}`);
    assert.match(wild.cname_target, CNAME);
    assert.match(wild.acme_challenge_cname_target, ACME);
    assert.notEqual(wild.cname_target, own.cname_target);
    for (const domain of [`foo-${rnd()}.edgeplane.app`, `*.${rnd()}.edgeplane.app`]) {
      const d = await rd(api, domain);
      assert.equal(d.cname_target, null, domain);
      assert.equal(d.acme_challenge_cname_target, null, domain);
    }
  });

  it('echoes a known region, null when absent, refuses another (400), and PATCH of region or domain (251)', async () => {
    const api = await h().newAccount();
    const d = await rd(api, base(), { region: 'eu' });
    assert.equal(d.region, 'eu');
    assert.equal((await rd(api, base())).region, null);
    await assertError(await api.post('/reserved_domains', { domain: base(), region: 'mars' }), 400, 'ERR_EP_400', 'mars');
    assert.equal(await count(api), 2);
    await assertError(await api.patch(`/reserved_domains/${d.id}`, { region: 'us' }), 400, 'ERR_EP_251', 'region');
    await assertError(await api.patch(`/reserved_domains/${d.id}`, { domain: base() }), 400, 'ERR_EP_251', 'domain');
    assert.deepEqual((await api.get(`/reserved_domains/${d.id}`)).json, d);
  });

  it('takes "" for region, certificate_id and configuration ids on create as none, as the official Python client sends them', async () => {
    const api = await h().newAccount();
    const d = await rd(api, base(), {
      region: '',
      description: '',
      metadata: '',
      certificate_id: '',
      http_endpoint_configuration_id: '',
      https_endpoint_configuration_id: '',
    });
    assert.equal(d.region, '');
    assert.equal(d.certificate, null);
    assert.equal(d.http_endpoint_configuration, null);
    assert.equal(d.https_endpoint_configuration, null);
  });

  it('attaches an uploaded certificate that names the domain, by create and by PATCH; refuses others (452, 1927)', async () => {
    const api = await h().newAccount();
    const other = await h().newAccount();
    const name = base();
    const c = await cert(api, [name]);
    const d = await rd(api, name, { certificate_id: c });
    assert.deepEqual(d.certificate, { id: c, uri: `${h().baseUrl}/tls_certificates/${c}` });
    await assertError(await api.post('/reserved_domains', { domain: base(), certificate_id: c }), 400, 'ERR_EP_452', c);
    const theirs = await cert(other, [name]);
    for (const id of [theirs, 'cert_000000000000000000000000000']) {
      await assertError(await api.post('/reserved_domains', { domain: `a.${name}`, certificate_id: id }), 400, 'ERR_EP_1927', id);
    }
    assert.equal(await count(api), 1);
    const later = await rd(api, `b.${name}`);
    const covering = await cert(api, [`b.${name}`]);
    await assertError(await api.patch(`/reserved_domains/${later.id}`, { certificate_id: c }), 400, 'ERR_EP_452');
    await assertError(await api.patch(`/reserved_domains/${later.id}`, { certificate_id: theirs }), 400, 'ERR_EP_1927');
    assert.deepEqual((await api.get(`/reserved_domains/${later.id}`)).json, later);
    assert.equal((await api.patch(`/reserved_domains/${later.id}`, { certificate_id: covering })).json.certificate.id, covering);
  });

  it('a wildcard certificate covers one label only, and a wildcard domain needs the wildcard in the certificate', async () => {
    const api = await h().newAccount();
    const w = base();
    const star = await cert(api, [`*.${w}`]);
    assert.equal((await rd(api, `a.${w}`, { certificate_id: star })).certificate.id, star);
    for (const domain of [`a.b.${w}`, w]) await assertError(await api.post('/reserved_domains', { domain, certificate_id: star }), 400, 'ERR_EP_452');
    const plain = await cert(api, [`a.${w}`, w]);
    await assertError(await api.post('/reserved_domains', { domain: `*.${w}`, certificate_id: plain }), 400, 'ERR_EP_452');
    assert.equal(await count(api), 1);
    assert.equal((await rd(api, `*.${w}`, { certificate_id: star })).certificate.id, star);
  });

  it('refuses both certificate sources (434), and any certificate source under a service domain (439, 440)', async () => {
    const api = await h().newAccount();
    const name = base();
    const c = await cert(api, [name, `x.${name}`]);
    const both = { certificate_id: c, certificate_management_policy: {} };
    await assertError(await api.post('/reserved_domains', { domain: name, ...both }), 400, 'ERR_EP_434');
    const service = `s-${rnd()}.edgeplane.app`;
    await assertError(await api.post('/reserved_domains', { domain: service, certificate_management_policy: {} }), 400, 'ERR_EP_439', service);
    await assertError(await api.post('/reserved_domains', { domain: service, certificate_id: c }), 400, 'ERR_EP_440', service);
    assert.equal(await count(api), 0);
    const d = await rd(api, name);
    const s = await rd(api, service);
    await assertError(await api.patch(`/reserved_domains/${d.id}`, both), 400, 'ERR_EP_434');
    await assertError(await api.patch(`/reserved_domains/${s.id}`, { certificate_management_policy: {} }), 400, 'ERR_EP_439');
    await assertError(await api.patch(`/reserved_domains/${s.id}`, { certificate_id: c }), 400, 'ERR_EP_440');
    assert.deepEqual((await api.get(`/reserved_domains/${d.id}`)).json, d);
    assert.deepEqual((await api.get(`/reserved_domains/${s.id}`)).json, s);
  });

  it('certificate management: none by default, then the exact policy and status when set on create', async () => {
    const api = await h().newAccount();
    const plain = await rd(api, base());
    assert.equal(plain.certificate_management_policy, null);
    assert.equal(plain.certificate_management_status, null);
    const before = Date.now() - 1000;
    const d = await rd(api, base(), { certificate_management_policy: {} });
    assert.deepEqual(d.certificate_management_policy, { authority: 'letsencrypt', private_key_type: 'rsa' });
    const job = d.certificate_management_status.provisioning_job;
    assert.deepEqual(d.certificate_management_status, {
      renews_at: null,
      provisioning_job: { error_code: null, msg: 'Managed certificate provisioning in progress.', started_at: job.started_at, retries_at: null },
    });
    assert.match(job.started_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.ok(Date.parse(job.started_at) >= before && Date.parse(job.started_at) <= Date.now(), job.started_at);
    assert.equal(d.certificate, null);
    assert.deepEqual((await api.get(`/reserved_domains/${d.id}`)).json, d);
    const ecdsa = await rd(api, base(), { certificate_management_policy: { authority: 'letsencrypt', private_key_type: 'ecdsa' } });
    assert.deepEqual(ecdsa.certificate_management_policy, { authority: 'letsencrypt', private_key_type: 'ecdsa' });
  });

  it('certificate management by PATCH: the same policy keeps the job, a new key type restarts it', async () => {
    const api = await h().newAccount();
    const d = await rd(api, base());
    const set = (await api.patch(`/reserved_domains/${d.id}`, { certificate_management_policy: { private_key_type: 'rsa' } })).json;
    assert.deepEqual(set.certificate_management_policy, { authority: 'letsencrypt', private_key_type: 'rsa' });
    const started = set.certificate_management_status.provisioning_job.started_at;
    await sleep(1100);
    const again = await api.patch(`/reserved_domains/${d.id}`, { certificate_management_policy: { authority: 'letsencrypt' }, description: 'x' });
    assert.equal(again.json.certificate_management_status.provisioning_job.started_at, started);
    assert.equal(again.json.description, 'x');
    const changed = (await api.patch(`/reserved_domains/${d.id}`, { certificate_management_policy: { private_key_type: 'ecdsa' } })).json;
    assert.deepEqual(changed.certificate_management_policy, { authority: 'letsencrypt', private_key_type: 'ecdsa' });
    assert.ok(Date.parse(changed.certificate_management_status.provisioning_job.started_at) > Date.parse(started));
    assert.deepEqual((await api.get(`/reserved_domains/${d.id}`)).json, changed);
  });

  it('refuses an unknown authority (1908) or key type (1909) on create and PATCH', async () => {
    const api = await h().newAccount();
    const d = await rd(api, base());
    for (const [policy, code, value] of [
      [{ authority: 'zerossl' }, 'ERR_EP_1908', 'zerossl'],
      [{ private_key_type: 'ed25519' }, 'ERR_EP_1909', 'ed25519'],
    ] as const) {
      await assertError(await api.post('/reserved_domains', { domain: base(), certificate_management_policy: policy }), 400, code, value);
      await assertError(await api.patch(`/reserved_domains/${d.id}`, { certificate_management_policy: policy }), 400, code, value);
    }
    assert.equal(await count(api), 1);
    assert.deepEqual((await api.get(`/reserved_domains/${d.id}`)).json, d);
  });

  it('a managed certificate cannot be replaced or detached (436) until the policy is detached; detaching is idempotent', async () => {
    const api = await h().newAccount();
    const name = base();
    const c = await cert(api, [name]);
    const d = await rd(api, name, { certificate_id: c });
    const managed = (await api.patch(`/reserved_domains/${d.id}`, { certificate_management_policy: {} })).json;
    assert.equal(managed.certificate.id, c);
    assert.notEqual(managed.certificate_management_policy, null);
    await assertError(await api.patch(`/reserved_domains/${d.id}`, { certificate_id: c }), 400, 'ERR_EP_436');
    await assertError(await api.delete(`/reserved_domains/${d.id}/certificate`), 400, 'ERR_EP_436', 'certificate_management_policy');
    assert.deepEqual((await api.get(`/reserved_domains/${d.id}`)).json, managed);
    const del = await api.delete(`/tls_certificates/${c}`);
    await assertError(del, 409, 'ERR_EP_1966', d.id);
    assert.equal((await api.delete(`/reserved_domains/${d.id}/certificate_management_policy`)).status, 204);
    const unmanaged = (await api.get(`/reserved_domains/${d.id}`)).json;
    assert.equal(unmanaged.certificate_management_policy, null);
    assert.equal(unmanaged.certificate_management_status, null);
    assert.equal(unmanaged.certificate.id, c);
    assert.equal((await api.delete(`/reserved_domains/${d.id}/certificate`)).status, 204);
    assert.equal((await api.get(`/reserved_domains/${d.id}`)).json.certificate, null);
    for (const part of ['certificate', 'certificate_management_policy', 'http_endpoint_configuration', 'https_endpoint_configuration']) {
      assert.equal((await api.delete(`/reserved_domains/${d.id}/${part}`)).status, 204, part);
    }
    assert.deepEqual((await api.get(`/reserved_domains/${d.id}`)).json, { ...unmanaged, certificate: null });
    assert.equal((await api.delete(`/tls_certificates/${c}`)).status, 204);
  });

  it('attaches endpoint configurations of the right type by create and PATCH, and detaches them', async () => {
    const api = await h().newAccount();
    const http = await ec(api, 'http');
    const https = await ec(api, 'https');
    const d = await rd(api, base(), { http_endpoint_configuration_id: http, https_endpoint_configuration_id: https });
    assert.deepEqual(d.http_endpoint_configuration, { id: http, uri: `${h().baseUrl}/endpoint_configurations/${http}` });
    assert.deepEqual(d.https_endpoint_configuration, { id: https, uri: `${h().baseUrl}/endpoint_configurations/${https}` });
    const later = await rd(api, base());
    const patched = (await api.patch(`/reserved_domains/${later.id}`, { http_endpoint_configuration_id: http })).json;
    assert.equal(patched.http_endpoint_configuration.id, http);
    assert.equal(patched.https_endpoint_configuration, null);
    assert.equal((await api.patch(`/reserved_domains/${later.id}`, { https_endpoint_configuration_id: https })).json.https_endpoint_configuration.id, https);
    assert.equal((await api.delete(`/reserved_domains/${d.id}/http_endpoint_configuration`)).status, 204);
    const half = (await api.get(`/reserved_domains/${d.id}`)).json;
    assert.equal(half.http_endpoint_configuration, null);
    assert.equal(half.https_endpoint_configuration.id, https);
    assert.equal((await api.delete(`/reserved_domains/${d.id}/https_endpoint_configuration`)).status, 204);
    assert.equal((await api.get(`/reserved_domains/${d.id}`)).json.https_endpoint_configuration, null);
  });

  it('refuses an endpoint configuration of the wrong type (428) or unknown (1600), and keeps an attached one (409 1619)', async () => {
    const api = await h().newAccount();
    const other = await h().newAccount();
    const http = await ec(api, 'http');
    const https = await ec(api, 'https');
    const tcp = await ec(api, 'tcp');
    const theirs = await ec(other, 'http');
    const bad: [Record<string, string>, string][] = [
      [{ http_endpoint_configuration_id: https }, 'ERR_EP_428'],
      [{ http_endpoint_configuration_id: tcp }, 'ERR_EP_428'],
      [{ https_endpoint_configuration_id: http }, 'ERR_EP_428'],
      [{ http_endpoint_configuration_id: theirs }, 'ERR_EP_1600'],
      [{ https_endpoint_configuration_id: 'ec_000000000000000000000000000' }, 'ERR_EP_1600'],
    ];
    const d = await rd(api, base(), { http_endpoint_configuration_id: http });
    for (const [body, code] of bad) {
      await assertError(await api.post('/reserved_domains', { domain: base(), ...body }), 400, code, Object.values(body)[0]);
      await assertError(await api.patch(`/reserved_domains/${d.id}`, body), 400, code, Object.values(body)[0]);
    }
    assert.equal(await count(api), 1);
    assert.deepEqual((await api.get(`/reserved_domains/${d.id}`)).json, d);
    await assertError(await api.delete(`/endpoint_configurations/${http}`), 409, 'ERR_EP_1619', d.id);
    assert.equal((await api.get(`/endpoint_configurations/${http}`)).status, 200);
    assert.equal((await api.delete(`/reserved_domains/${d.id}/http_endpoint_configuration`)).status, 204);
    assert.equal((await api.delete(`/endpoint_configurations/${http}`)).status, 204);
  });

  it('a read_only user may read but not create, change, detach or delete (403 635)', async () => {
    const api = await h().newAccount();
    const reader = await api.asNewUser('read_only');
    const name = base();
    const c = await cert(api, [name]);
    const d = await rd(api, name, { certificate_id: c, http_endpoint_configuration_id: await ec(api, 'http') });
    assert.deepEqual((await reader.get(`/reserved_domains/${d.id}`)).json, d);
    assert.equal((await reader.get('/reserved_domains')).json.reserved_domains.length, 1);
    await assertError(await reader.post('/reserved_domains', { domain: base() }), 403, 'ERR_EP_635');
    await assertError(await reader.patch(`/reserved_domains/${d.id}`, { description: 'x' }), 403, 'ERR_EP_635');
    for (const part of ['certificate', 'certificate_management_policy', 'http_endpoint_configuration', 'https_endpoint_configuration']) {
      await assertError(await reader.delete(`/reserved_domains/${d.id}/${part}`), 403, 'ERR_EP_635');
    }
    await assertError(await reader.delete(`/reserved_domains/${d.id}`), 403, 'ERR_EP_635');
    assert.equal(await count(api), 1);
    assert.deepEqual((await api.get(`/reserved_domains/${d.id}`)).json, d);
  });
});
