// TLS edges: their fields and list key; hostports as reserved domains of the account (`<domain>:443`,
// case folded, wildcards), every refusal with nothing written, PATCH replacing the list, and a
// served domain that cannot be deleted; the mutual_tls module (CAs as Refs, 1957, deleting a named
// CA is 1958) and the tls_termination module (defaults, 224, 7107, 7108); the rule that mutual TLS
// needs TLS terminated at the edge (1694) through create, PATCH and PUT of either module; the
// backend, ip_restriction and traffic_policy modules (one check each: they are covered in depth by
// test/api/tcp-edges.test.ts); deleting an edge (its modules and domains freed); read-only users.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { it } from 'node:test';
import { makeChain } from '../helpers/certs.js';
import { describeEachStore, type Api, type Harness } from '../helpers/harness.js';
import { assertError, created } from '../helpers/assertions.js';

const MODULES = ['backend', 'ip_restriction', 'mutual_tls', 'tls_termination', 'policy', 'traffic_policy'] as const;
const KEYS = ['created_at', 'description', 'hostports', 'id', 'metadata', 'uri', ...MODULES].sort();
const name = () => `${randomBytes(4).toString('hex')}.example.com`;
/** Reserves a fresh domain for the account and returns it with its id. */
const domain = async (api: Api, value = name()) => {
  const rd = await created(api, '/reserved_domains', { domain: value });
  return { id: rd.id as string, hostport: `${rd.domain}:443` };
};
const edge = (api: Api, body: Record<string, unknown> = {}) => created(api, '/edges/tls', body);
const count = async (api: Api) => (await api.get('/edges/tls')).json.tls_edges.length as number;
let caPem: Promise<string> | undefined;
const ca = async (api: Api) => {
  caPem ??= makeChain().then((c) => c.root.certPem);
  return (await created(api, '/certificate_authorities', { ca_pem: await caPem })).id as string;
};
const UPSTREAM = { terminate_at: 'upstream' };

/** The rows the store holds for an edge in the module tables and the domains join table. */
async function storedFor(h: Harness, edgeId: string) {
  const db = h.deps.store.db;
  return {
    modules: await db.selectFrom('modules').select('name').where('owner_id', '=', edgeId).execute(),
    refs: await db.selectFrom('module_refs').select('target_id').where('owner_id', '=', edgeId).execute(),
    domains: await db.selectFrom('edge_domains').select('reserved_domain_id').where('edge_id', '=', edgeId).execute(),
  };
}

describeEachStore('TLS edges', (h) => {
  const ref = (path: string, id: string) => ({ id, uri: `${h().baseUrl}${path}/${id}` });

  it('creates, gets, lists (tls_edges), PATCHes and deletes an edge, every key present', async () => {
    const api = await h().newAccount();
    const e = await edge(api, { description: 'tls', metadata: '{"a":1}' });
    assert.match(e.id, /^edgtls_/);
    assert.deepEqual(Object.keys(e).sort(), KEYS);
    assert.equal(e.uri, `${h().baseUrl}/edges/tls/${e.id}`);
    assert.deepEqual([e.description, e.metadata, e.hostports], ['tls', '{"a":1}', null]);
    for (const m of MODULES) assert.equal(e[m], null, m);
    assert.deepEqual((await api.get(`/edges/tls/${e.id}`)).json, e);
    const list = (await api.get('/edges/tls')).json;
    assert.deepEqual(list.tls_edges, [e]);
    assert.equal(list.uri, `${h().baseUrl}/edges/tls`);
    const patched = await api.patch(`/edges/tls/${e.id}`, { description: 'tls 2' });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.json, { ...e, description: 'tls 2' });
    assert.equal((await api.delete(`/edges/tls/${e.id}`)).status, 204);
    await assertError(await api.get(`/edges/tls/${e.id}`), 404, 'ERR_EP_252', e.id);
    assert.equal(await count(api), 0);
  });

  it('serves reserved domains as <domain>:443 in order, upper case folded and wildcards included', async () => {
    const api = await h().newAccount();
    const plainName = name();
    const [a, wild] = [await domain(api, plainName), await domain(api, `*.${name()}`)];
    assert.match(wild.hostport, /^\*\..+:443$/);
    const e = await edge(api, { hostports: [wild.hostport, `${plainName.toUpperCase()}:443`] });
    assert.deepEqual(e.hostports, [wild.hostport, a.hostport]);
    assert.deepEqual((await api.get(`/edges/tls/${e.id}`)).json.hostports, [wild.hostport, a.hostport]);
  });

  it('refuses each bad hostport on create and PATCH with its own code, writing nothing', async () => {
    const api = await h().newAccount();
    const other = await h().newAccount();
    const [mine, free] = [await domain(api), await domain(api)];
    const theirs = await domain(other);
    const e = await edge(api, { hostports: [mine.hostport] });
    const eleven = [free.hostport, ...(await Promise.all(Array.from({ length: 10 }, async () => (await domain(api)).hostport)))];
    const host = free.hostport.replace(':443', '');
    const nowhere = `${name()}:443`;
    const cases: [unknown[], number, string, string][] = [
      [['foo'], 400, '7104', 'foo'],
      [[free.hostport, `${host}:80`], 400, '7116', `${host}:80`],
      [[`${host}:0`], 400, '7112', `${host}:0`],
      [[nowhere], 400, '7133', nowhere],
      [[free.hostport, theirs.hostport], 400, '7133', theirs.hostport],
      [[free.hostport, free.hostport], 400, '7123', free.hostport],
      [eleven, 400, '7129', '11'],
      [[free.hostport, mine.hostport], 409, '7122', e.id],
    ];
    const blank = await edge(api);
    for (const [hostports, status, code, mentions] of cases) {
      await assertError(await api.post('/edges/tls', { hostports }), status, `ERR_EP_${code}`, mentions);
      await assertError(await api.patch(`/edges/tls/${blank.id}`, { hostports, description: 'changed' }), status, `ERR_EP_${code}`, mentions);
    }
    assert.equal(await count(api), 2);
    assert.deepEqual((await api.get(`/edges/tls/${blank.id}`)).json, blank);
    assert.deepEqual((await api.get(`/edges/tls/${e.id}`)).json.hostports, [mine.hostport]);
    assert.deepEqual((await storedFor(h(), blank.id)).domains, []);
    assert.deepEqual((await edge(api, { hostports: [free.hostport] })).hostports, [free.hostport], 'free was not claimed by a refused request');
    assert.deepEqual((await edge(other, { hostports: [theirs.hostport] })).hostports, [theirs.hostport], 'theirs was not claimed');
  });

  it('PATCH replaces hostports ([] → null); a served domain cannot be deleted (446) until its edge is gone', async () => {
    const api = await h().newAccount();
    const [a, b] = [await domain(api), await domain(api)];
    const e = await edge(api, { hostports: [a.hostport, b.hostport] });
    assert.deepEqual((await api.patch(`/edges/tls/${e.id}`, { description: 'x' })).json.hostports, [a.hostport, b.hostport], 'absent: unchanged');
    assert.deepEqual((await api.patch(`/edges/tls/${e.id}`, { hostports: [b.hostport] })).json.hostports, [b.hostport]);
    assert.equal((await api.delete(`/reserved_domains/${a.id}`)).status, 204, 'a dropped domain is free');
    await assertError(await api.delete(`/reserved_domains/${b.id}`), 409, 'ERR_EP_446', e.id);
    assert.equal((await api.get(`/reserved_domains/${b.id}`)).status, 200);
    const emptied = await api.patch(`/edges/tls/${e.id}`, { hostports: [] });
    assert.equal(emptied.json.hostports, null, emptied.text);
    assert.deepEqual((await storedFor(h(), e.id)).domains, []);
    assert.deepEqual((await api.patch(`/edges/tls/${e.id}`, { hostports: [b.hostport] })).json.hostports, [b.hostport]);
    await assertError(await api.delete(`/reserved_domains/${b.id}`), 409, 'ERR_EP_446', e.id);
    assert.equal((await api.delete(`/edges/tls/${e.id}`)).status, 204);
    assert.equal((await api.delete(`/reserved_domains/${b.id}`)).status, 204);
  });

  it('mutual_tls: CAs of the account shown as Refs; unknown or another account’s CA is 1957; a named CA cannot be deleted (1958)', async () => {
    const api = await h().newAccount();
    const other = await h().newAccount();
    const [c1, c2, theirs] = [await ca(api), await ca(api), await ca(other)];
    const e = await edge(api, { mutual_tls: { certificate_authority_ids: [c2, c1] } });
    assert.deepEqual(e.mutual_tls, { enabled: true, certificate_authorities: [ref('/certificate_authorities', c2), ref('/certificate_authorities', c1)] });
    assert.deepEqual((await api.get(`/edges/tls/${e.id}/mutual_tls`)).json, e.mutual_tls);
    for (const id of [theirs, 'ca_000000000000000000000000000']) {
      await assertError(await api.post('/edges/tls', { mutual_tls: { certificate_authority_ids: [id] } }), 400, 'ERR_EP_1957', id);
      await assertError(await api.patch(`/edges/tls/${e.id}`, { mutual_tls: { certificate_authority_ids: [c1, id] } }), 400, 'ERR_EP_1957', id);
      await assertError(await api.put(`/edges/tls/${e.id}/mutual_tls`, { certificate_authority_ids: [id] }), 400, 'ERR_EP_1957', id);
    }
    assert.equal(await count(api), 1);
    assert.deepEqual((await api.get(`/edges/tls/${e.id}`)).json, e);
    await assertError(await api.delete(`/certificate_authorities/${c1}`), 409, 'ERR_EP_1958', e.id);
    assert.equal((await api.get(`/certificate_authorities/${c1}`)).status, 200);
    const put = await api.put(`/edges/tls/${e.id}/mutual_tls`, { enabled: false, certificate_authority_ids: [c2] });
    assert.deepEqual(put.json, { enabled: false, certificate_authorities: [ref('/certificate_authorities', c2)] });
    assert.equal((await api.delete(`/certificate_authorities/${c1}`)).status, 204, 'named no more');
  });

  it('tls_termination: defaults to edge with min_version null; 224, 7107 and 7108 store nothing', async () => {
    const api = await h().newAccount();
    const e = await edge(api, { tls_termination: {} });
    assert.deepEqual(e.tls_termination, { enabled: true, terminate_at: 'edge', min_version: null });
    const put = await api.put(`/edges/tls/${e.id}/tls_termination`, { enabled: false, min_version: '1.2' });
    assert.deepEqual(put.json, { enabled: false, terminate_at: 'edge', min_version: '1.2' });
    const bad: [Record<string, unknown>, string, string?][] = [
      [{ terminate_at: 'agent' }, 'ERR_EP_224', 'agent'],
      [{ min_version: '1.4' }, 'ERR_EP_7107', '1.4'],
      [{ terminate_at: 'upstream', min_version: '1.2' }, 'ERR_EP_7108'],
    ];
    for (const [module, code, mentions] of bad) {
      await assertError(await api.post('/edges/tls', { tls_termination: module }), 400, code, mentions);
      await assertError(await api.patch(`/edges/tls/${e.id}`, { tls_termination: module }), 400, code, mentions);
      await assertError(await api.put(`/edges/tls/${e.id}/tls_termination`, module), 400, code, mentions);
    }
    assert.equal(await count(api), 1);
    assert.deepEqual((await api.get(`/edges/tls/${e.id}/tls_termination`)).json, put.json);
    const upstream = await api.patch(`/edges/tls/${e.id}`, { tls_termination: UPSTREAM });
    assert.deepEqual(upstream.json.tls_termination, { enabled: true, terminate_at: 'upstream', min_version: null });
  });

  it('mutual TLS needs termination at the edge (1694) whichever module a create, PUT or PATCH changes, changing nothing', async () => {
    const api = await h().newAccount();
    const c = await ca(api);
    const mtls = { certificate_authority_ids: [c] };
    await assertError(await api.post('/edges/tls', { mutual_tls: mtls, tls_termination: UPSTREAM }), 400, 'ERR_EP_1694');
    assert.equal(await count(api), 0);

    const m = await edge(api, { mutual_tls: mtls, tls_termination: { min_version: '1.3' } });
    await assertError(await api.put(`/edges/tls/${m.id}/tls_termination`, UPSTREAM), 400, 'ERR_EP_1694');
    await assertError(await api.patch(`/edges/tls/${m.id}`, { description: 'x', tls_termination: UPSTREAM }), 400, 'ERR_EP_1694');
    assert.deepEqual((await api.get(`/edges/tls/${m.id}`)).json, m);

    const u = await edge(api, { tls_termination: UPSTREAM });
    await assertError(await api.put(`/edges/tls/${u.id}/mutual_tls`, mtls), 400, 'ERR_EP_1694');
    await assertError(await api.patch(`/edges/tls/${u.id}`, { mutual_tls: mtls }), 400, 'ERR_EP_1694');
    await assertError(await api.get(`/edges/tls/${u.id}/mutual_tls`), 404, 'ERR_EP_7200', 'mutual_tls');
    assert.deepEqual((await storedFor(h(), u.id)).refs, []);
    // A disabled mutual_tls checks nothing, so it may sit beside upstream termination.
    assert.equal((await api.put(`/edges/tls/${u.id}/mutual_tls`, { enabled: false, ...mtls })).status, 200);

    assert.equal((await api.delete(`/edges/tls/${m.id}/mutual_tls`)).status, 204);
    const now = await api.put(`/edges/tls/${m.id}/tls_termination`, UPSTREAM);
    assert.equal(now.status, 200, now.text);
    assert.deepEqual((await api.get(`/edges/tls/${m.id}`)).json, { ...m, mutual_tls: null, tls_termination: now.json });
  });

  it('backend, ip_restriction and traffic_policy (with the TCP connection phase) work on TLS edges', async () => {
    const api = await h().newAccount();
    const b = (await created(api, '/backends/tunnel_group', { labels: { app: 'tls' } })).id as string;
    const p = (await created(api, '/ip_policies', {})).id as string;
    const doc = '{"on_tcp_connect": [{"actions": [{"type": "deny"}]}]}';
    const e = await edge(api, { backend: { backend_id: b }, ip_restriction: { ip_policy_ids: [p] }, traffic_policy: { value: doc } });
    assert.deepEqual(e.backend, { enabled: true, backend: ref('/backends/tunnel_group', b) });
    assert.deepEqual(e.ip_restriction, { enabled: true, ip_policies: [ref('/ip_policies', p)] });
    assert.deepEqual(e.traffic_policy, { enabled: true, value: doc });
    await assertError(await api.delete(`/backends/tunnel_group/${b}`), 409, 'ERR_EP_6502', e.id);
    await assertError(await api.delete(`/ip_policies/${p}`), 409, 'ERR_EP_1420', e.id);
    const http = '{"on_http_request": [{"actions": [{"type": "deny"}]}]}';
    // An HTTP phase is not one of a TLS edge.
    await assertError(await api.put(`/edges/tls/${e.id}/traffic_policy`, { value: http }), 400, 'ERR_EP_2213', 'on_http_request');
    assert.deepEqual((await api.get(`/edges/tls/${e.id}`)).json, e);
  });

  it('deleting an edge removes its modules and frees its domains: what they named then deletes with 204', async () => {
    const api = await h().newAccount();
    const d = await domain(api);
    const c = await ca(api);
    const b = (await created(api, '/backends/tunnel_group', { labels: { app: 'tls' } })).id as string;
    const e = await edge(api, { hostports: [d.hostport], backend: { backend_id: b }, mutual_tls: { certificate_authority_ids: [c] }, tls_termination: {} });
    const before = await storedFor(h(), e.id);
    assert.deepEqual(before.modules.map((m) => m.name).sort(), ['backend', 'mutual_tls', 'tls_termination']);
    assert.deepEqual(before.refs.map((r) => r.target_id).sort(), [b, c].sort());
    assert.deepEqual(before.domains, [{ reserved_domain_id: d.id }]);
    assert.equal((await api.delete(`/edges/tls/${e.id}`)).status, 204);
    await assertError(await api.get(`/edges/tls/${e.id}/mutual_tls`), 404, 'ERR_EP_252');
    assert.deepEqual(await storedFor(h(), e.id), { modules: [], refs: [], domains: [] });
    assert.deepEqual((await edge(api, { hostports: [d.hostport] })).hostports, [d.hostport], 'the domain is free for another edge');
    assert.equal((await api.delete(`/certificate_authorities/${c}`)).status, 204);
    assert.equal((await api.delete(`/backends/tunnel_group/${b}`)).status, 204);
  });

  it('a read_only user may read edges and modules but every write is 403 635, module PUT and DELETE included', async () => {
    const api = await h().newAccount();
    const reader = await api.asNewUser('read_only');
    const c = await ca(api);
    const e = await edge(api, { hostports: [(await domain(api)).hostport], mutual_tls: { certificate_authority_ids: [c] } });
    assert.deepEqual((await reader.get(`/edges/tls/${e.id}`)).json, e);
    assert.deepEqual((await reader.get('/edges/tls')).json.tls_edges, [e]);
    assert.deepEqual((await reader.get(`/edges/tls/${e.id}/mutual_tls`)).json, e.mutual_tls);
    await assertError(await reader.post('/edges/tls', {}), 403, 'ERR_EP_635');
    await assertError(await reader.patch(`/edges/tls/${e.id}`, { description: 'x' }), 403, 'ERR_EP_635');
    await assertError(await reader.put(`/edges/tls/${e.id}/tls_termination`, {}), 403, 'ERR_EP_635');
    await assertError(await reader.put(`/edges/tls/${e.id}/mutual_tls`, { enabled: false, certificate_authority_ids: [c] }), 403, 'ERR_EP_635');
    for (const m of MODULES) await assertError(await reader.delete(`/edges/tls/${e.id}/${m}`), 403, 'ERR_EP_635');
    await assertError(await reader.delete(`/edges/tls/${e.id}`), 403, 'ERR_EP_635');
    assert.equal(await count(api), 1);
    assert.deepEqual((await api.get(`/edges/tls/${e.id}`)).json, e);
  });
});
