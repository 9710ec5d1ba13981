// HTTPS edges and their routes. Edges: fields, list key, every key present (`routes: []`, modules
// null); hostports as reserved domains of the account (7116, 7133; one domain served by one TLS or
// HTTPS edge, 7122; a served domain cannot be deleted, 446); the mutual_tls module (1957, 1958)
// and the HTTPS tls_termination module (`terminate_at` refused with 7109, shown as "edge"; 7107).
// Routes: create, get, PATCH and delete, no list; shown whole in the edge, oldest first; match and
// match_type (7130, 7131, 7135), a match used once per edge (7126), at most 100 routes (7128);
// answered only under their own edge and account. Every route module through PUT (bare and
// wrapped), GET and DELETE, and the bad inputs of each with nothing written; OAuth, OIDC and SAML
// on one route of an edge (7155) and one per route (7201, 7202); client secrets never shown nor
// stored in plain text; what route modules name cannot be deleted (6502, 1420); deleting an edge
// deletes everything under it; read-only users; and the rules under concurrent requests.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { it } from 'node:test';
import { makeChain } from '../helpers/certs.js';
import { describeEachStore, type Api, type Harness, type Response } from '../helpers/harness.js';
import { assertError, created } from '../helpers/assertions.js';

const EDGE_MODULES = ['mutual_tls', 'tls_termination'] as const;
const EDGE_KEYS = ['created_at', 'description', 'hostports', 'id', 'metadata', 'routes', 'uri', ...EDGE_MODULES].sort();
const ROUTE_MODULES = [
  'backend',
  'ip_restriction',
  'circuit_breaker',
  'compression',
  'request_headers',
  'response_headers',
  'webhook_verification',
  'oauth',
  'saml',
  'oidc',
  'websocket_tcp_converter',
  'user_agent_filter',
  'policy',
  'traffic_policy',
] as const;
const ROUTE_KEYS = ['created_at', 'description', 'edge_id', 'id', 'match', 'match_type', 'metadata', 'uri', ...ROUTE_MODULES].sort();

const name = () => `${randomBytes(4).toString('hex')}.example.com`;
/** Reserves a fresh domain for the account and returns it with its id. */
const domain = async (api: Api, value = name()) => {
  const rd = await created(api, '/reserved_domains', { domain: value });
  return { id: rd.id as string, hostport: `${rd.domain}:443` };
};
const edge = (api: Api, body: Record<string, unknown> = {}) => created(api, '/edges/https', body);
const count = async (api: Api) => (await api.get('/edges/https')).json.https_edges.length as number;
const routes = (edgeId: string) => `/edges/https/${edgeId}/routes`;
const route = (api: Api, edgeId: string, match: string, body: Record<string, unknown> = {}) =>
  created(api, routes(edgeId), { match_type: 'path_prefix', match, ...body });
let caPem: Promise<string> | undefined;
const ca = async (api: Api) => {
  caPem ??= makeChain().then((c) => c.root.certPem);
  return (await created(api, '/certificate_authorities', { ca_pem: await caPem })).id as string;
};
const backend = async (api: Api) => (await created(api, '/backends/tunnel_group', { labels: { app: 'web' } })).id as string;
const ipp = async (api: Api) => (await created(api, '/ip_policies', {})).id as string;

const OAUTH = { provider: { google: {} } };
const OIDC = { issuer: 'https://accounts.example.com', client_id: 'edgeplane-web', client_secret: 'oidc-secret' };
const IDP_METADATA =
  '<?xml version="1.0"?><md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.example.com/metadata">' +
  '<md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">' +
  '<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.example.com/sso"/>' +
  '</md:IDPSSODescriptor></md:EntityDescriptor>';
const SAML = { idp_metadata: IDP_METADATA };
const AUTH: [string, Record<string, unknown>][] = [
  ['oauth', OAUTH],
  ['oidc', OIDC],
  ['saml', SAML],
];
const SESSION = { enabled: true, options_passthrough: false, cookie_prefix: 'edgeplane.', inactivity_timeout: 0, maximum_duration: 0 };
const HTTP_DOC = '{"on_http_request": [{"actions": [{"type": "custom-response", "config": {"status_code": 403, "content": "no"}}]}]}';
const TCP_DOC = '{"on_tcp_connect": [{"actions": [{"type": "deny"}]}]}';
const restrictIpsDoc = (id: string) => JSON.stringify({ on_http_request: [{ actions: [{ type: 'restrict-ips', config: { ip_policies: [id] } }] }] });

/**
 * What the store holds for an edge and its routes: the routes (those of the edge now, and the ids
 * given, which a deleted edge no longer lists), their and the edge's modules and module refs, and
 * the edge's domains.
 */
async function storedFor(h: Harness, edgeId: string, routeIds: readonly string[] = []) {
  const db = h.deps.store.db;
  const current = await db.selectFrom('https_edge_routes').select('id').where('edge_id', '=', edgeId).execute();
  const owners = [...new Set([edgeId, ...routeIds, ...current.map((r) => r.id)])];
  return {
    routes: await db.selectFrom('https_edge_routes').select(['id', 'match']).where('id', 'in', owners).orderBy('id').execute(),
    modules: await db.selectFrom('modules').select(['owner_id', 'name']).where('owner_id', 'in', owners).orderBy('owner_id').orderBy('name').execute(),
    refs: await db
      .selectFrom('module_refs')
      .select(['owner_id', 'target_id'])
      .where('owner_id', 'in', owners)
      .orderBy('owner_id')
      .orderBy('name')
      .orderBy('position')
      .execute(),
    domains: await db.selectFrom('edge_domains').select('reserved_domain_id').where('edge_id', '=', edgeId).execute(),
  };
}

/** The names of the modules stored for one owner. */
async function modulesOf(h: Harness, ownerId: string): Promise<string[]> {
  const rows = await h.deps.store.db.selectFrom('modules').select('name').where('owner_id', '=', ownerId).orderBy('name').execute();
  return rows.map((r) => r.name);
}

/** The ids of the routes stored for an edge. */
async function routeIds(h: Harness, edgeId: string): Promise<string[]> {
  const rows = await h.deps.store.db.selectFrom('https_edge_routes').select('id').where('edge_id', '=', edgeId).orderBy('id').execute();
  return rows.map((r) => r.id);
}

const statuses = (results: readonly Response[]) => results.map((r) => `${r.status} ${r.text}`).join('\n');

describeEachStore('HTTPS edges', (h) => {
  const ref = (path: string, id: string) => ({ id, uri: `${h().baseUrl}${path}/${id}` });

  // ---------------------------------------------------------------------------------------------
  // Edges

  it('creates, gets, lists (https_edges), PATCHes and deletes an edge: every key present, routes [] and modules null', async () => {
    const api = await h().newAccount();
    const e = await edge(api, { description: 'web', metadata: '{"a":1}' });
    assert.match(e.id, /^edghts_/);
    assert.deepEqual(Object.keys(e).sort(), EDGE_KEYS);
    assert.equal(e.uri, `${h().baseUrl}/edges/https/${e.id}`);
    assert.match(e.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.deepEqual([e.description, e.metadata, e.hostports, e.routes], ['web', '{"a":1}', null, []]);
    for (const m of EDGE_MODULES) assert.equal(e[m], null, m);
    assert.deepEqual((await api.get(`/edges/https/${e.id}`)).json, e);
    const list = (await api.get('/edges/https')).json;
    assert.deepEqual(Object.keys(list).sort(), ['https_edges', 'next_page_uri', 'uri']);
    assert.deepEqual(list.https_edges, [e]);
    assert.equal(list.uri, `${h().baseUrl}/edges/https`);
    assert.equal(list.next_page_uri, null);
    const patched = await api.patch(`/edges/https/${e.id}`, { description: 'web 2' });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.json, { ...e, description: 'web 2' });
    assert.equal((await api.delete(`/edges/https/${e.id}`)).status, 204);
    await assertError(await api.get(`/edges/https/${e.id}`), 404, 'ERR_EP_252', e.id);
    await assertError(await api.delete(`/edges/https/${e.id}`), 404, 'ERR_EP_252', e.id);
    assert.equal(await count(api), 0);
  });

  it('hostports: reserved domains as <domain>:443 in order; another port (7116) or a name that is no reserved domain of the account (7133) writes nothing', async () => {
    const api = await h().newAccount();
    const other = await h().newAccount();
    const [mine, free, second] = [await domain(api), await domain(api), await domain(api)];
    const theirs = await domain(other);
    const e = await edge(api, { hostports: [mine.hostport] });
    assert.deepEqual(e.hostports, [mine.hostport]);
    const host = free.hostport.replace(':443', '');
    const nowhere = `${name()}:443`;
    const cases: [unknown[], string, string][] = [
      [[free.hostport, `${host}:80`], '7116', `${host}:80`],
      [[`${host}:8443`], '7116', `${host}:8443`],
      [[nowhere], '7133', nowhere],
      [[free.hostport, theirs.hostport], '7133', theirs.hostport],
    ];
    const blank = await edge(api);
    for (const [hostports, code, mentions] of cases) {
      await assertError(await api.post('/edges/https', { hostports }), 400, `ERR_EP_${code}`, mentions);
      await assertError(await api.patch(`/edges/https/${blank.id}`, { hostports, description: 'changed' }), 400, `ERR_EP_${code}`, mentions);
    }
    assert.equal(await count(api), 2);
    assert.deepEqual((await api.get(`/edges/https/${blank.id}`)).json, blank);
    assert.deepEqual((await storedFor(h(), blank.id)).domains, []);
    assert.deepEqual((await api.get(`/edges/https/${e.id}`)).json.hostports, [mine.hostport]);
    const both = await edge(api, { hostports: [second.hostport, free.hostport.toUpperCase()] });
    assert.deepEqual(both.hostports, [second.hostport, free.hostport], 'in order, the name folded to lower case');
    assert.deepEqual((await edge(other, { hostports: [theirs.hostport] })).hostports, [theirs.hostport], 'theirs was not claimed');
  });

  it('a domain is served by one TLS or HTTPS edge (7122 naming it, either way); a served domain cannot be deleted (446 naming the edge)', async () => {
    const api = await h().newAccount();
    const [a, b] = [await domain(api), await domain(api)];
    const tls = await created(api, '/edges/tls', { hostports: [a.hostport] });
    const e = await edge(api, { hostports: [b.hostport] });
    await assertError(await api.post('/edges/https', { hostports: [a.hostport] }), 409, 'ERR_EP_7122', tls.id);
    await assertError(await api.post('/edges/https', { hostports: [b.hostport] }), 409, 'ERR_EP_7122', e.id);
    await assertError(await api.patch(`/edges/https/${e.id}`, { hostports: [b.hostport, a.hostport] }), 409, 'ERR_EP_7122', tls.id);
    await assertError(await api.post('/edges/tls', { hostports: [b.hostport] }), 409, 'ERR_EP_7122', e.id);
    await assertError(await api.patch(`/edges/tls/${tls.id}`, { hostports: [b.hostport] }), 409, 'ERR_EP_7122', e.id);
    assert.equal(await count(api), 1);
    assert.deepEqual((await api.get(`/edges/https/${e.id}`)).json.hostports, [b.hostport]);
    assert.deepEqual((await api.get(`/edges/tls/${tls.id}`)).json.hostports, [a.hostport]);

    await assertError(await api.delete(`/reserved_domains/${b.id}`), 409, 'ERR_EP_446', e.id);
    assert.equal((await api.get(`/reserved_domains/${b.id}`)).status, 200);
    const emptied = await api.patch(`/edges/https/${e.id}`, { hostports: [] });
    assert.equal(emptied.json.hostports, null, emptied.text);
    assert.deepEqual((await storedFor(h(), e.id)).domains, []);
    assert.deepEqual((await api.patch(`/edges/https/${e.id}`, { hostports: [b.hostport] })).json.hostports, [b.hostport]);
    await assertError(await api.delete(`/reserved_domains/${b.id}`), 409, 'ERR_EP_446', e.id);
    assert.equal((await api.delete(`/edges/https/${e.id}`)).status, 204);
    assert.equal((await api.delete(`/reserved_domains/${b.id}`)).status, 204, 'free once its edge is gone');
    assert.equal((await api.delete(`/edges/tls/${tls.id}`)).status, 204);
    assert.deepEqual((await edge(api, { hostports: [a.hostport] })).hostports, [a.hostport], 'the TLS edge freed it for an HTTPS edge');
  });

  it('mutual_tls: CAs as Refs through create, PATCH and PUT (bare and wrapped); 1957 writes nothing; a named CA cannot be deleted (1958)', async () => {
    const api = await h().newAccount();
    const other = await h().newAccount();
    const [c1, c2, theirs] = [await ca(api), await ca(api), await ca(other)];
    const e = await edge(api, { mutual_tls: { certificate_authority_ids: [c2, c1] } });
    assert.deepEqual(e.mutual_tls, { enabled: true, certificate_authorities: [ref('/certificate_authorities', c2), ref('/certificate_authorities', c1)] });
    assert.deepEqual((await api.get(`/edges/https/${e.id}/mutual_tls`)).json, e.mutual_tls);
    assert.deepEqual((await storedFor(h(), e.id)).refs, [
      { owner_id: e.id, target_id: c2 },
      { owner_id: e.id, target_id: c1 },
    ]);
    for (const id of [theirs, 'ca_000000000000000000000000000']) {
      await assertError(await api.post('/edges/https', { mutual_tls: { certificate_authority_ids: [id] } }), 400, 'ERR_EP_1957', id);
      await assertError(await api.patch(`/edges/https/${e.id}`, { mutual_tls: { certificate_authority_ids: [c1, id] } }), 400, 'ERR_EP_1957', id);
      await assertError(await api.put(`/edges/https/${e.id}/mutual_tls`, { certificate_authority_ids: [id] }), 400, 'ERR_EP_1957', id);
    }
    assert.equal(await count(api), 1);
    assert.deepEqual((await api.get(`/edges/https/${e.id}`)).json, e);
    await assertError(await api.delete(`/certificate_authorities/${c1}`), 409, 'ERR_EP_1958', e.id);
    assert.equal((await api.get(`/certificate_authorities/${c1}`)).status, 200);

    const wrapped = await api.put(`/edges/https/${e.id}/mutual_tls`, { id: e.id, module: { enabled: false, certificate_authority_ids: [c2] } });
    assert.equal(wrapped.status, 200, wrapped.text);
    assert.deepEqual(wrapped.json, { enabled: false, certificate_authorities: [ref('/certificate_authorities', c2)] });
    assert.equal((await api.delete(`/certificate_authorities/${c1}`)).status, 204, 'named no more');
    const patched = await api.patch(`/edges/https/${e.id}`, { mutual_tls: { certificate_authority_ids: [c2] } });
    assert.deepEqual(patched.json.mutual_tls, { enabled: true, certificate_authorities: [ref('/certificate_authorities', c2)] }, 'replaced whole');
    await assertError(await api.delete(`/certificate_authorities/${c2}`), 409, 'ERR_EP_1958', e.id);
    assert.equal((await api.delete(`/edges/https/${e.id}/mutual_tls`)).status, 204);
    await assertError(await api.get(`/edges/https/${e.id}/mutual_tls`), 404, 'ERR_EP_7200', 'mutual_tls');
    assert.equal((await api.get(`/edges/https/${e.id}`)).json.mutual_tls, null);
    assert.equal((await api.delete(`/certificate_authorities/${c2}`)).status, 204);
  });

  it('tls_termination: shown with terminate_at "edge"; sending terminate_at is 7109 and a bad min_version 7107, on create, PATCH and PUT, writing nothing', async () => {
    const api = await h().newAccount();
    const e = await edge(api, { tls_termination: {} });
    assert.deepEqual(e.tls_termination, { enabled: true, terminate_at: 'edge', min_version: null });
    const put = await api.put(`/edges/https/${e.id}/tls_termination`, { enabled: false, min_version: '1.2' });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.json, { enabled: false, terminate_at: 'edge', min_version: '1.2' });
    const patched = await api.patch(`/edges/https/${e.id}`, { tls_termination: { min_version: '1.3' } });
    assert.deepEqual(patched.json.tls_termination, { enabled: true, terminate_at: 'edge', min_version: '1.3' });
    const bad: [Record<string, unknown>, string, string][] = [
      [{ terminate_at: 'edge' }, 'ERR_EP_7109', 'terminate_at'],
      [{ terminate_at: 'upstream' }, 'ERR_EP_7109', 'terminate_at'],
      [{ terminate_at: 'upstream', min_version: '1.2' }, 'ERR_EP_7109', 'terminate_at'],
      [{ min_version: '1.4' }, 'ERR_EP_7107', '1.4'],
      [{ min_version: 'TLSv1.2' }, 'ERR_EP_7107', 'TLSv1.2'],
    ];
    for (const [module, code, mentions] of bad) {
      await assertError(await api.post('/edges/https', { tls_termination: module }), 400, code, mentions);
      await assertError(await api.patch(`/edges/https/${e.id}`, { description: 'changed', tls_termination: module }), 400, code, mentions);
      await assertError(await api.put(`/edges/https/${e.id}/tls_termination`, module), 400, code, mentions);
      await assertError(await api.put(`/edges/https/${e.id}/tls_termination`, { id: e.id, module }), 400, code, mentions);
    }
    assert.equal(await count(api), 1);
    assert.deepEqual((await api.get(`/edges/https/${e.id}`)).json, patched.json);
    assert.deepEqual((await api.get(`/edges/https/${e.id}/tls_termination`)).json, patched.json.tls_termination);
    const cleared = await api.put(`/edges/https/${e.id}/tls_termination`, { min_version: null });
    assert.deepEqual(cleared.json, { enabled: true, terminate_at: 'edge', min_version: null });
    // Mutual TLS beside it: an HTTPS edge always terminates at the edge, so nothing conflicts.
    const mtls = await api.put(`/edges/https/${e.id}/mutual_tls`, { certificate_authority_ids: [await ca(api)] });
    assert.equal(mtls.status, 200, mtls.text);
    assert.equal((await api.delete(`/edges/https/${e.id}/tls_termination`)).status, 204);
    await assertError(await api.get(`/edges/https/${e.id}/tls_termination`), 404, 'ERR_EP_7200', 'tls_termination');
    assert.deepEqual(await modulesOf(h(), e.id), ['mutual_tls']);
  });

  // ---------------------------------------------------------------------------------------------
  // Routes

  it('creates, gets, PATCHes and deletes a route: every key present, edge_id, uri under the edge; the collection has no list (GET is 405 254)', async () => {
    const api = await h().newAccount();
    const e = await edge(api);
    const r = await created(api, routes(e.id), { match_type: 'exact_path', match: '/blog', description: 'blog', metadata: '{"r":1}' });
    assert.match(r.id, /^edghtsrt_/);
    assert.deepEqual(Object.keys(r).sort(), ROUTE_KEYS);
    assert.equal(r.edge_id, e.id);
    assert.equal(r.uri, `${h().baseUrl}/edges/https/${e.id}/routes/${r.id}`);
    assert.match(r.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.deepEqual([r.match_type, r.match, r.description, r.metadata], ['exact_path', '/blog', 'blog', '{"r":1}']);
    for (const m of ROUTE_MODULES) assert.equal(r[m], null, m);
    assert.deepEqual((await api.get(`${routes(e.id)}/${r.id}`)).json, r);

    const patched = await api.patch(`${routes(e.id)}/${r.id}`, { match_type: 'path_prefix', match: '/news', description: 'news' });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.json, { ...r, match_type: 'path_prefix', match: '/news', description: 'news' });
    const kept = await api.patch(`${routes(e.id)}/${r.id}`, { id: r.id, metadata: 'm' });
    assert.deepEqual(kept.json, { ...patched.json, metadata: 'm' }, 'absent fields are unchanged; the id in the body is accepted');
    // The official clients send the edge's id in the body too: the path's is accepted, another is 256.
    const sameEdge = await api.patch(`${routes(e.id)}/${r.id}`, { edge_id: e.id, metadata: 'm2' });
    assert.equal(sameEdge.status, 200, sameEdge.text);
    assert.deepEqual(sameEdge.json, { ...kept.json, metadata: 'm2' });
    const f = await edge(api);
    await assertError(await api.patch(`${routes(e.id)}/${r.id}`, { edge_id: f.id, metadata: 'x' }), 400, 'ERR_EP_256', f.id);
    await assertError(await api.post(routes(e.id), { edge_id: f.id, match_type: 'path_prefix', match: '/x' }), 400, 'ERR_EP_256', f.id);
    assert.deepEqual(await routeIds(h(), f.id), []);
    await assertError(await api.post(routes(e.id), { match_type: 'path_prefix', match: '/x', host: 'example.com' }), 400, 'ERR_EP_214', 'host');
    await assertError(await api.post(routes(e.id), { match_type: 'path_prefix' }), 400, 'ERR_EP_215', 'match');
    await assertError(await api.post(routes(e.id), { match: '/x' }), 400, 'ERR_EP_215', 'match_type');

    const list = await api.get(routes(e.id));
    assertError(list, 405, 'ERR_EP_254', 'GET');
    assert.match(list.headers.get('allow') ?? '', /POST/);
    assert.ok(!(list.headers.get('allow') ?? '').includes('GET'), 'no list');
    assert.deepEqual(await routeIds(h(), e.id), [r.id]);

    assert.equal((await api.delete(`${routes(e.id)}/${r.id}`)).status, 204);
    await assertError(await api.get(`${routes(e.id)}/${r.id}`), 404, 'ERR_EP_252', r.id);
    await assertError(await api.delete(`${routes(e.id)}/${r.id}`), 404, 'ERR_EP_252', r.id);
    assert.deepEqual((await api.get(`/edges/https/${e.id}`)).json.routes, []);
    assert.deepEqual(await routeIds(h(), e.id), []);
  });

  it('the edge shows its routes whole, oldest first, in GET and the list, with their changes', async () => {
    const api = await h().newAccount();
    const e = await edge(api);
    // Created in the reverse of the matches' order, so the order shown is by age, not by match.
    const r1 = await route(api, e.id, '/c');
    const r2 = await route(api, e.id, '/b', { compression: {} });
    const r3 = await route(api, e.id, '/a', { match_type: 'exact_path', edge_id: e.id });
    assert.equal(r3.edge_id, e.id, 'the edge id of the path may be sent in the body');
    assert.deepEqual(r2.compression, { enabled: true });
    assert.deepEqual((await api.get(`/edges/https/${e.id}`)).json.routes, [r1, r2, r3]);
    const p1 = (await api.patch(`${routes(e.id)}/${r1.id}`, { description: 'first' })).json;
    const m3 = (await api.put(`${routes(e.id)}/${r3.id}/websocket_tcp_converter`, {})).json;
    assert.deepEqual(m3, { enabled: true });
    const shown = (await api.get(`/edges/https/${e.id}`)).json;
    assert.deepEqual(shown.routes, [p1, r2, { ...r3, websocket_tcp_converter: m3 }]);
    assert.deepEqual((await api.get('/edges/https')).json.https_edges, [shown]);
    assert.equal((await api.delete(`${routes(e.id)}/${r2.id}`)).status, 204);
    assert.deepEqual(
      (await api.get(`/edges/https/${e.id}`)).json.routes.map((r: { id: string }) => r.id),
      [r1.id, r3.id],
    );
  });

  it('match and match_type: 7131 (not a path), 7130, 7135 (1025 characters; 1024 is fine) on create and PATCH, writing nothing', async () => {
    const api = await h().newAccount();
    const e = await edge(api);
    const r = await route(api, e.id, '/ok');
    const cases: [Record<string, string>, string, string?][] = [
      [{ match: 'blog' }, 'ERR_EP_7131', "'blog'"],
      [{ match: 'example.com/blog' }, 'ERR_EP_7131', 'example.com/blog'],
      [{ match: '' }, 'ERR_EP_7131'],
      [{ match: '/a b' }, 'ERR_EP_7131'],
      [{ match: '/a\nb' }, 'ERR_EP_7131'],
      [{ match: '/a\tb' }, 'ERR_EP_7131'],
      [{ match_type: 'regex' }, 'ERR_EP_7130', "'regex'"],
      [{ match_type: 'PATH_PREFIX' }, 'ERR_EP_7130', 'PATH_PREFIX'],
      [{ match_type: '' }, 'ERR_EP_7130'],
      [{ match: `/${'a'.repeat(1024)}` }, 'ERR_EP_7135', '1025'],
    ];
    for (const [fields, code, mentions] of cases) {
      await assertError(await api.post(routes(e.id), { match_type: 'path_prefix', match: '/new', ...fields }), 400, code, mentions);
      await assertError(await api.patch(`${routes(e.id)}/${r.id}`, { description: 'changed', ...fields }), 400, code, mentions);
    }
    assert.deepEqual(await routeIds(h(), e.id), [r.id]);
    assert.deepEqual((await api.get(`${routes(e.id)}/${r.id}`)).json, r);
    const longest = await route(api, e.id, `/${'a'.repeat(1023)}`);
    assert.equal(longest.match.length, 1024);
    const patched = await api.patch(`${routes(e.id)}/${r.id}`, { match: `/${'b'.repeat(1023)}` });
    assert.equal(patched.status, 200, patched.text);
  });

  it('a match is used by one route of an edge (409 7126 naming it) on create and PATCH, whatever the match types; another edge may use it', async () => {
    const api = await h().newAccount();
    const [e, f] = [await edge(api), await edge(api)];
    const r1 = await route(api, e.id, '/api', { match_type: 'exact_path' });
    const r2 = await route(api, e.id, '/web');
    await assertError(await api.post(routes(e.id), { match_type: 'path_prefix', match: '/api' }), 409, 'ERR_EP_7126', r1.id);
    await assertError(await api.post(routes(e.id), { match_type: 'exact_path', match: '/api', compression: {} }), 409, 'ERR_EP_7126', r1.id);
    await assertError(await api.patch(`${routes(e.id)}/${r2.id}`, { match: '/api', description: 'x' }), 409, 'ERR_EP_7126', r1.id);
    assert.deepEqual(await routeIds(h(), e.id), [r1.id, r2.id].sort());
    assert.deepEqual((await api.get(`${routes(e.id)}/${r2.id}`)).json, r2);
    assert.deepEqual((await storedFor(h(), e.id)).modules, []);
    const same = await api.patch(`${routes(e.id)}/${r1.id}`, { match: '/api', match_type: 'path_prefix' });
    assert.equal(same.status, 200, `a route keeps its own match: ${same.text}`);
    const elsewhere = await route(api, f.id, '/api');
    assert.equal(elsewhere.edge_id, f.id);
    const moved = await api.patch(`${routes(e.id)}/${r2.id}`, { match: '/web2' });
    assert.equal(moved.status, 200, moved.text);
    assert.equal((await route(api, e.id, '/web')).match, '/web', 'a match given up is free again');
  });

  it('a route answers only under its own edge: another edge of the account, or another account’s edge or route, is 404 for every operation', async () => {
    const api = await h().newAccount();
    const other = await h().newAccount();
    const [e, f] = [await edge(api), await edge(api)];
    const r = await route(api, e.id, '/x', { compression: {} });
    const oe = await edge(other);
    const or = await route(other, oe.id, '/x', { compression: {} });
    const paths = [
      `${routes(f.id)}/${r.id}`,
      `${routes(oe.id)}/${r.id}`,
      `${routes(e.id)}/${or.id}`,
      `${routes(oe.id)}/${or.id}`,
      `${routes('edghts_000000000000000000000000000')}/${r.id}`,
    ];
    for (const path of paths) {
      for (const res of [
        await api.get(path),
        await api.patch(path, { description: 'x' }),
        await api.get(`${path}/compression`),
        await api.put(`${path}/compression`, { enabled: false }),
        await api.delete(`${path}/compression`),
        await api.delete(path),
      ]) {
        assertError(res, 404, 'ERR_EP_252');
      }
    }
    await assertError(await api.post(routes(oe.id), { match_type: 'path_prefix', match: '/mine' }), 404, 'ERR_EP_252', oe.id);
    assert.deepEqual((await api.get(`${routes(e.id)}/${r.id}`)).json, r);
    assert.deepEqual((await other.get(`${routes(oe.id)}/${or.id}`)).json, or);
    assert.deepEqual(await routeIds(h(), oe.id), [or.id]);
    assert.deepEqual(await routeIds(h(), f.id), []);
    assert.deepEqual(await modulesOf(h(), or.id), ['compression']);
  });

  it('an edge has at most 100 routes: the 101st is 409 7128 and writes nothing; after a delete there is room for one', async () => {
    const api = await h().newAccount();
    const [e, f] = [await edge(api), await edge(api)];
    for (let i = 0; i < 100; i++) await route(api, e.id, `/r${i}`);
    await assertError(await api.post(routes(e.id), { match_type: 'path_prefix', match: '/r100' }), 409, 'ERR_EP_7128', e.id);
    await assertError(await api.post(routes(e.id), { match_type: 'path_prefix', match: '/r101', compression: {} }), 409, 'ERR_EP_7128', '100');
    const ids = await routeIds(h(), e.id);
    assert.equal(ids.length, 100);
    assert.deepEqual((await storedFor(h(), e.id)).modules, []);
    assert.equal((await api.get(`/edges/https/${e.id}`)).json.routes.length, 100);
    assert.equal((await api.patch(`${routes(e.id)}/${ids[0]}`, { description: 'still writable' })).status, 200);
    assert.equal((await route(api, f.id, '/r0')).edge_id, f.id, 'another edge has its own limit');
    assert.equal((await api.delete(`${routes(e.id)}/${ids[99]}`)).status, 204);
    assert.equal((await route(api, e.id, '/r100')).match, '/r100');
    await assertError(await api.post(routes(e.id), { match_type: 'path_prefix', match: '/r101' }), 409, 'ERR_EP_7128');
    assert.equal((await routeIds(h(), e.id)).length, 100);
  });

  // ---------------------------------------------------------------------------------------------
  // Route modules

  it('every route module: PUT bare and wrapped ({edge_id, id, module}), GET, shown in the route and the edge, DELETE (then 7200)', async () => {
    const api = await h().newAccount();
    const e = await edge(api);
    const r = await route(api, e.id, '/');
    const rp = `${routes(e.id)}/${r.id}`;
    const [b, p] = [await backend(api), await ipp(api)];
    const cases: [string, Record<string, unknown>, Record<string, unknown> | undefined][] = [
      ['backend', { backend_id: b }, { enabled: true, backend: ref('/backends/tunnel_group', b) }],
      ['ip_restriction', { ip_policy_ids: [p] }, { enabled: true, ip_policies: [ref('/ip_policies', p)] }],
      [
        'circuit_breaker',
        { error_threshold_percentage: 0.25, num_buckets: 5 },
        { enabled: true, tripped_duration: 10, rolling_window: 10, num_buckets: 5, volume_threshold: 20, error_threshold_percentage: 0.25 },
      ],
      ['compression', {}, { enabled: true }],
      ['request_headers', { add: { 'X-Env': 'prod' }, remove: ['x-secret'] }, { enabled: true, add: { 'x-env': 'prod' }, remove: ['x-secret'] }],
      ['response_headers', { add: { 'Cache-Control': 'no-store' } }, { enabled: true, add: { 'cache-control': 'no-store' }, remove: [] }],
      ['webhook_verification', { provider: 'github', secret: 'whsec' }, { enabled: true, provider: 'github', secret: 'whsec' }],
      [
        'oauth',
        OAUTH,
        {
          ...SESSION,
          auth_check_interval: 0,
          provider: { google: { client_id: null, client_secret: null, scopes: [], email_addresses: [], email_domains: [] } },
        },
      ],
      ['saml', SAML, undefined],
      [
        'oidc',
        { ...OIDC, scopes: ['openid', 'email'] },
        { ...SESSION, issuer: OIDC.issuer, client_id: OIDC.client_id, client_secret: null, scopes: ['openid', 'email'] },
      ],
      ['websocket_tcp_converter', {}, { enabled: true }],
      ['user_agent_filter', { allow: ['(?i)curl/.*'], deny: ['^bot'] }, { enabled: true, allow: ['(?i)curl/.*'], deny: ['^bot'] }],
      [
        'policy',
        { inbound: [{ name: 'teapot', actions: [{ type: 'custom-response', config: { status_code: 418 } }] }] },
        { enabled: true, inbound: [{ name: 'teapot', expressions: [], actions: [{ type: 'custom-response', config: { status_code: 418 } }] }], outbound: null },
      ],
      ['traffic_policy', { value: HTTP_DOC }, { enabled: true, value: HTTP_DOC }],
    ];
    assert.deepEqual(cases.map(([m]) => m).sort(), [...ROUTE_MODULES].sort(), 'every module is covered');
    for (const [m, body, expected] of cases) {
      const put = await api.put(`${rp}/${m}`, body);
      assert.equal(put.status, 200, `${m}: ${put.text}`);
      if (expected) assert.deepEqual(put.json, expected, m);
      assert.deepEqual((await api.get(`${rp}/${m}`)).json, put.json, m);
      const shown = (await api.get(rp)).json;
      for (const o of ROUTE_MODULES) assert.deepEqual(shown[o], o === m ? put.json : null, `${m}: ${o}`);
      assert.deepEqual((await api.get(`/edges/https/${e.id}`)).json.routes, [shown], m);

      const wrapped = await api.put(`${rp}/${m}`, { edge_id: e.id, id: r.id, module: { ...body, enabled: false } });
      assert.equal(wrapped.status, 200, `${m} wrapped: ${wrapped.text}`);
      if (m === 'saml') {
        assert.equal(wrapped.json.enabled, false);
        assert.notEqual(wrapped.json.entity_id, put.json.entity_id, 'a new service provider on each replace');
      } else assert.deepEqual(wrapped.json, { ...put.json, enabled: false }, m);
      assert.deepEqual((await api.get(`${rp}/${m}`)).json, wrapped.json, m);
      assert.deepEqual(await modulesOf(h(), r.id), [m]);

      assert.equal((await api.delete(`${rp}/${m}`)).status, 204, m);
      await assertError(await api.get(`${rp}/${m}`), 404, 'ERR_EP_7200', m);
      assert.equal((await api.get(rp)).json[m], null, m);
      assert.deepEqual(await modulesOf(h(), r.id), [], m);
      assert.equal((await api.delete(`${rp}/${m}`)).status, 204, `${m}: deleting an unset module is a 204 too`);
    }
    assert.deepEqual((await storedFor(h(), e.id)).refs, [], 'the refs went with their modules');

    // The saml response: what the identity provider needs to know of this route.
    const saml = (await api.put(`${rp}/saml`, { ...SAML, authorized_groups: ['eng'] })).json;
    assert.deepEqual(
      { ...saml, entity_id: '', assertion_consumer_service_url: '', single_logout_url: '', metadata_url: '', request_signing_certificate_pem: '' },
      {
        ...SESSION,
        idp_metadata: IDP_METADATA,
        force_authn: false,
        allow_idp_initiated: false,
        authorized_groups: ['eng'],
        nameid_format: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
        entity_id: '',
        assertion_consumer_service_url: '',
        single_logout_url: '',
        metadata_url: '',
        request_signing_certificate_pem: '',
      },
    );
    assert.ok(saml.entity_id.startsWith(`${h().baseUrl}/saml/`), saml.entity_id);
    assert.match(saml.request_signing_certificate_pem, /^-----BEGIN CERTIFICATE-----/);

    // A wrapper without ids is the module; one naming another route or edge is 256, writing nothing.
    assert.deepEqual((await api.put(`${rp}/compression`, { module: { enabled: false } })).json, { enabled: false });
    const other = await route(api, e.id, '/other');
    for (const wrapper of [
      { edge_id: e.id, id: other.id, module: {} },
      { edge_id: (await edge(api)).id, id: r.id, module: {} },
      { id: e.id, module: {} },
    ]) {
      await assertError(await api.put(`${rp}/compression`, wrapper), 400, 'ERR_EP_256');
    }
    assert.deepEqual((await api.get(`${rp}/compression`)).json, { enabled: false });
    await assertError(await api.put(`${rp}/compression`, { enabled: true, extra: 1 }), 400, 'ERR_EP_214', 'extra');
    await assertError(await api.put(`${rp}/compression`, { edge_id: e.id, id: r.id, module: { enabled: 'yes' } }), 400, 'ERR_EP_215', 'enabled');
  });

  it('route modules set by route create and PATCH: a PATCH replaces a module whole and leaves absent or null ones', async () => {
    const api = await h().newAccount();
    const e = await edge(api);
    const r = await route(api, e.id, '/', {
      compression: {},
      request_headers: { add: { 'X-A': '1' } },
      circuit_breaker: { volume_threshold: 5 },
    });
    assert.deepEqual(r.request_headers, { enabled: true, add: { 'x-a': '1' }, remove: [] });
    assert.equal(r.circuit_breaker.volume_threshold, 5);
    const patched = await api.patch(`${routes(e.id)}/${r.id}`, {
      circuit_breaker: { enabled: false },
      request_headers: null,
      user_agent_filter: { deny: ['bot'] },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.json.circuit_breaker, {
      enabled: false,
      tripped_duration: 10,
      rolling_window: 10,
      num_buckets: 10,
      volume_threshold: 20,
      error_threshold_percentage: 0.5,
    });
    assert.deepEqual(patched.json.request_headers, r.request_headers, 'null leaves it');
    assert.deepEqual(patched.json.compression, { enabled: true }, 'absent leaves it');
    assert.deepEqual(patched.json.user_agent_filter, { enabled: true, allow: [], deny: ['bot'] });
    assert.deepEqual(await modulesOf(h(), r.id), ['circuit_breaker', 'compression', 'request_headers', 'user_agent_filter']);
  });

  it('request and response headers: a name that is no token (6518), a value with CR or LF (6519), a name twice (6520) write nothing', async () => {
    const api = await h().newAccount();
    const e = await edge(api);
    const r = await route(api, e.id, '/');
    const rp = `${routes(e.id)}/${r.id}`;
    const bad: [Record<string, unknown>, string, string][] = [
      [{ add: { 'bad name': 'x' } }, 'ERR_EP_6518', 'bad name'],
      [{ add: { 'X-Ok': '1', 'bad:name': 'x' } }, 'ERR_EP_6518', 'bad:name'],
      [{ remove: ['bad name'] }, 'ERR_EP_6518', 'bad name'],
      [{ add: { 'X-Split': 'a\r\nSet-Cookie: stolen=1' } }, 'ERR_EP_6519', 'X-Split'],
      [{ add: { 'X-Split': 'a\nb' } }, 'ERR_EP_6519', 'X-Split'],
      [{ add: { 'X-Split': 'a\rb' } }, 'ERR_EP_6519', 'X-Split'],
      [{ add: { 'X-Twice': '1', 'x-twice': '2' } }, 'ERR_EP_6520', 'x-twice'],
    ];
    for (const m of ['request_headers', 'response_headers']) {
      for (const [module, code, mentions] of bad) {
        await assertError(await api.post(routes(e.id), { match_type: 'path_prefix', match: '/new', [m]: module }), 400, code, mentions);
        await assertError(await api.patch(rp, { description: 'changed', [m]: module }), 400, code, mentions);
        await assertError(await api.put(`${rp}/${m}`, module), 400, code, mentions);
        await assertError(await api.put(`${rp}/${m}`, { edge_id: e.id, id: r.id, module }), 400, code, mentions);
      }
      await assertError(await api.get(`${rp}/${m}`), 404, 'ERR_EP_7200');
    }
    assert.deepEqual(await routeIds(h(), e.id), [r.id]);
    assert.deepEqual(await modulesOf(h(), r.id), []);
    assert.deepEqual((await api.get(rp)).json, r);
    const tab = await api.put(`${rp}/request_headers`, { add: { 'X-Tab': 'a\tb' } });
    assert.deepEqual(tab.json, { enabled: true, add: { 'x-tab': 'a\tb' }, remove: [] }, 'a tab is part of a field value');
  });

  it('webhook_verification: unknown provider (7030), sns with a secret (7026), github without one (7027), none (7029) write nothing; TWILIO is echoed as sent', async () => {
    const api = await h().newAccount();
    const e = await edge(api);
    const r = await route(api, e.id, '/hooks');
    const rp = `${routes(e.id)}/${r.id}`;
    const bad: [Record<string, unknown>, string, string?][] = [
      [{ provider: 'nope', secret: 's' }, 'ERR_EP_7030', "'nope'"],
      [{ provider: 'sns', secret: 'shh' }, 'ERR_EP_7026', 'SNS'],
      [{ provider: 'SNS', secret: 'shh' }, 'ERR_EP_7026'],
      [{ provider: 'github' }, 'ERR_EP_7027', 'github'],
      [{ provider: 'github', secret: '' }, 'ERR_EP_7027', 'github'],
      [{ secret: 's' }, 'ERR_EP_7029', 'provider'],
      [{ provider: '', secret: 's' }, 'ERR_EP_7029'],
      [{ provider: 'sendgrid', secret: 'not-a-key' }, 'ERR_EP_7028'],
      [{ provider: 'github', secret: 'x'.repeat(4097) }, 'ERR_EP_7154', '4097'],
    ];
    for (const [module, code, mentions] of bad) {
      await assertError(await api.post(routes(e.id), { match_type: 'path_prefix', match: '/new', webhook_verification: module }), 400, code, mentions);
      await assertError(await api.patch(rp, { description: 'changed', webhook_verification: module }), 400, code, mentions);
      await assertError(await api.put(`${rp}/webhook_verification`, module), 400, code, mentions);
    }
    assert.deepEqual(await routeIds(h(), e.id), [r.id]);
    assert.deepEqual(await modulesOf(h(), r.id), []);
    assert.deepEqual((await api.get(rp)).json, r);
    const twilio = await api.put(`${rp}/webhook_verification`, { provider: 'TWILIO', secret: 'twilio-token' });
    assert.equal(twilio.status, 200, twilio.text);
    assert.deepEqual(twilio.json, { enabled: true, provider: 'TWILIO', secret: 'twilio-token' });
    assert.deepEqual((await api.get(`${rp}/webhook_verification`)).json, twilio.json);
    const sns = await api.put(`${rp}/webhook_verification`, { provider: 'sns' });
    assert.deepEqual(sns.json, { enabled: true, provider: 'sns', secret: '' });
    const longest = await api.put(`${rp}/webhook_verification`, { provider: 'stripe', secret: 'x'.repeat(4096) });
    assert.equal(longest.status, 200, 'a secret of 4096 characters is fine');
  });

  it('circuit_breaker: error_threshold_percentage outside 0.0 to 1.0 (7011) and out-of-range integers (215) write nothing; 0 and 1 are fine', async () => {
    const api = await h().newAccount();
    const e = await edge(api);
    const r = await route(api, e.id, '/');
    const rp = `${routes(e.id)}/${r.id}`;
    const bad: [Record<string, unknown>, string, string][] = [
      [{ error_threshold_percentage: 2 }, 'ERR_EP_7011', '2'],
      [{ error_threshold_percentage: 50 }, 'ERR_EP_7011', '50'],
      [{ error_threshold_percentage: -0.1 }, 'ERR_EP_7011', '-0.1'],
      [{ num_buckets: 0 }, 'ERR_EP_215', 'num_buckets'],
      [{ tripped_duration: 1.5 }, 'ERR_EP_215', 'tripped_duration'],
      [{ volume_threshold: 'many' }, 'ERR_EP_215', 'volume_threshold'],
    ];
    for (const [module, code, mentions] of bad) {
      await assertError(await api.post(routes(e.id), { match_type: 'path_prefix', match: '/new', circuit_breaker: module }), 400, code, mentions);
      await assertError(await api.patch(rp, { circuit_breaker: module }), 400, code, mentions);
      await assertError(await api.put(`${rp}/circuit_breaker`, module), 400, code, mentions);
    }
    assert.deepEqual(await routeIds(h(), e.id), [r.id]);
    assert.deepEqual(await modulesOf(h(), r.id), []);
    for (const threshold of [0, 1]) {
      const put = await api.put(`${rp}/circuit_breaker`, { error_threshold_percentage: threshold });
      assert.equal(put.status, 200, put.text);
      assert.equal(put.json.error_threshold_percentage, threshold);
    }
  });

  it('user_agent_filter: a pattern that could take exponential time such as (a+)+$, or does not compile, is 2090 naming it; nothing written', async () => {
    const api = await h().newAccount();
    const e = await edge(api);
    const r = await route(api, e.id, '/');
    const rp = `${routes(e.id)}/${r.id}`;
    const bad: [Record<string, unknown>, string][] = [
      [{ deny: ['(a+)+$'] }, 'deny[0]'],
      [{ allow: ['^ok$', '(x+x+)+y'] }, 'allow[1]'],
      [{ allow: ['(.*a){30}'] }, 'allow[0]'],
      [{ deny: ['[unclosed'] }, 'deny[0]'],
      // RE2 caps a count at 1000; JavaScript would compile it.
      [{ deny: ['bot/a{1001}'] }, 'deny[0] repeats more than 1000 times ({1001})'],
    ];
    for (const [module, mentions] of bad) {
      await assertError(await api.post(routes(e.id), { match_type: 'path_prefix', match: '/new', user_agent_filter: module }), 400, 'ERR_EP_2090', mentions);
      await assertError(await api.patch(rp, { user_agent_filter: module }), 400, 'ERR_EP_2090', mentions);
      await assertError(await api.put(`${rp}/user_agent_filter`, module), 400, 'ERR_EP_2090', mentions);
    }
    assert.deepEqual(await routeIds(h(), e.id), [r.id]);
    assert.deepEqual(await modulesOf(h(), r.id), []);
    const good = await api.put(`${rp}/user_agent_filter`, { allow: ['(?i)^Mozilla/5\\.0', 'curl/\\d+'] });
    assert.deepEqual(good.json, { enabled: true, allow: ['(?i)^Mozilla/5\\.0', 'curl/\\d+'], deny: [] });
  });

  it('traffic_policy on a route takes the HTTP phases and refuses on_tcp_connect (2213); policy takes HTTP actions; the two exclude each other', async () => {
    const api = await h().newAccount();
    const e = await edge(api);
    const r = await route(api, e.id, '/', { traffic_policy: { value: HTTP_DOC } });
    const rp = `${routes(e.id)}/${r.id}`;
    assert.deepEqual(r.traffic_policy, { enabled: true, value: HTTP_DOC });
    const yaml = 'on_http_response:\n  - actions:\n      - type: add-headers\n        config:\n          headers:\n            x-served-by: edgeplane\n';
    assert.deepEqual((await api.put(`${rp}/traffic_policy`, { value: yaml })).json, { enabled: true, value: yaml });
    await assertError(await api.put(`${rp}/traffic_policy`, { value: TCP_DOC }), 400, 'ERR_EP_2213', 'on_tcp_connect');
    await assertError(await api.patch(rp, { traffic_policy: { value: TCP_DOC } }), 400, 'ERR_EP_2213', 'on_tcp_connect');
    await assertError(await api.post(routes(e.id), { match_type: 'path_prefix', match: '/tcp', traffic_policy: { value: TCP_DOC } }), 400, 'ERR_EP_2213');
    assert.deepEqual((await api.get(`${rp}/traffic_policy`)).json, { enabled: true, value: yaml });

    const policy = {
      inbound: [{ name: 'teapot', expressions: ["req.path.startsWith('/tea')"], actions: [{ type: 'custom-response', config: { status_code: 418 } }] }],
      outbound: [{ name: 'served by', actions: [{ type: 'add-headers', config: { headers: { 'x-served-by': 'edgeplane' } } }] }],
    };
    const withPolicy = await route(api, e.id, '/policy', { policy });
    assert.deepEqual(withPolicy.policy, {
      enabled: true,
      inbound: policy.inbound,
      outbound: [{ name: 'served by', expressions: [], actions: policy.outbound[0]!.actions }],
    });
    const pp = `${routes(e.id)}/${withPolicy.id}`;
    await assertError(
      await api.put(`${pp}/policy`, { inbound: [{ name: 'x', actions: [{ type: 'compress-response' }] }] }),
      400,
      'ERR_EP_2202',
      'compress-response',
    );
    await assertError(await api.put(`${pp}/policy`, { inbound: [{ name: 'x', actions: [{ type: 'no-such-action' }] }] }), 400, 'ERR_EP_2201', 'no-such-action');
    assert.deepEqual((await api.get(`${pp}/policy`)).json, withPolicy.policy);

    await assertError(await api.put(`${pp}/traffic_policy`, { value: HTTP_DOC }), 409, 'ERR_EP_7201', 'policy');
    await assertError(await api.put(`${rp}/policy`, policy), 409, 'ERR_EP_7201', 'traffic_policy');
    await assertError(await api.patch(rp, { policy, traffic_policy: { value: HTTP_DOC } }), 400, 'ERR_EP_7202');
    assert.deepEqual(await modulesOf(h(), r.id), ['traffic_policy']);
    assert.deepEqual(await modulesOf(h(), withPolicy.id), ['policy']);
  });

  it('traffic_policy and policy on a route: a regular expression RE2 refuses (a count above 1000, nested counts past 1000, a CEL matches pattern) is 400; nothing written', async () => {
    const api = await h().newAccount();
    const e = await edge(api);
    const r = await route(api, e.id, '/');
    const rp = `${routes(e.id)}/${r.id}`;
    const rewrite = (from: string) => ({ type: 'url-rewrite', config: { from, to: '/x' } });
    const cases: [string, Record<string, unknown>, unknown, string, string[]][] = [
      [
        'count',
        { policy: { inbound: [{ name: 'r', actions: [rewrite('/a{1001}')] }] } },
        'policy',
        'ERR_EP_2203',
        ["'/a{1001}'", 'repeats more than 1000 times'],
      ],
      [
        'nested counts',
        { traffic_policy: { value: JSON.stringify({ on_http_request: [{ actions: [rewrite('(/a{100}){11}')] }] }) } },
        'traffic_policy',
        'ERR_EP_2203',
        ['{100} inside {11}'],
      ],
      [
        'CEL matches',
        { traffic_policy: { value: JSON.stringify({ on_http_request: [{ expressions: ["req.path.matches('^/v{1001}')"], actions: [{ type: 'deny' }] }] }) } },
        'traffic_policy',
        'ERR_EP_2200',
        ['repeats more than 1000 times', 'line 1, column 18'],
      ],
    ];
    for (const [what, body, module, code, mentions] of cases) {
      for (const res of [
        await api.post(routes(e.id), { match_type: 'path_prefix', match: '/new', ...body }),
        await api.patch(rp, body),
        await api.put(`${rp}/${module}`, body[module as string]),
      ]) {
        assertError(res, 400, code);
        for (const m of mentions) assert.ok(res.json.msg.includes(m), `${what}: ${res.json.msg} should mention ${m}`);
      }
    }
    assert.deepEqual(await routeIds(h(), e.id), [r.id]);
    assert.deepEqual(await modulesOf(h(), r.id), []);
  });

  it('OIDC issuer and SAML nameid_format: a refused value is echoed without the user and password of a URL in it', async () => {
    const api = await h().newAccount();
    const e = await edge(api);
    const r = await route(api, e.id, '/');
    const rp = `${routes(e.id)}/${r.id}`;
    for (const issuer of ['https://alice:s3cret-pw@idp.example.com', 'http://alice:s3cret-pw@idp.example.com', 'alice:s3cret-pw@idp.example.com']) {
      for (const res of [await api.put(`${rp}/oidc`, { ...OIDC, issuer }), await api.patch(rp, { oidc: { ...OIDC, issuer } })]) {
        assertError(res, 400, 'ERR_EP_215', 'oidc.issuer');
        assert.ok(!res.text.includes('s3cret-pw') && !res.text.includes('alice'), res.text);
        assert.ok(res.json.msg.includes('***@idp.example.com'), res.json.msg);
      }
    }
    const saml = await api.put(`${rp}/saml`, { ...SAML, nameid_format: 'https://bob:s3cret-pw@[idp' });
    assertError(saml, 400, 'ERR_EP_215', 'saml.nameid_format');
    assert.ok(!saml.text.includes('s3cret-pw') && !saml.text.includes('bob'), saml.text);
    assert.deepEqual(await modulesOf(h(), r.id), []);
  });

  it('OAuth, OIDC and SAML: on one route of an edge (409 7155 naming it, on create, PATCH and PUT) and one per route (7201; 7202 in one request); another edge is fine', async () => {
    const api = await h().newAccount();
    const [e, f] = [await edge(api), await edge(api)];
    const r1 = await route(api, e.id, '/a');
    const r2 = await route(api, e.id, '/b');
    const rf = await route(api, f.id, '/a');
    const path = (r: Record<string, string>) => `${routes(r.edge_id!)}/${r.id}`;
    assert.equal((await api.put(`${path(r1)}/oauth`, OAUTH)).status, 200);
    for (const [m, body] of AUTH) {
      await assertError(await api.put(`${path(r2)}/${m}`, body), 409, 'ERR_EP_7155', r1.id);
      await assertError(await api.patch(path(r2), { description: 'x', [m]: body }), 409, 'ERR_EP_7155', r1.id);
      await assertError(await api.post(routes(e.id), { match_type: 'path_prefix', match: '/c', [m]: body }), 409, 'ERR_EP_7155', r1.id);
    }
    assert.deepEqual(await routeIds(h(), e.id), [r1.id, r2.id].sort());
    assert.deepEqual(await modulesOf(h(), r2.id), []);
    assert.deepEqual((await api.get(path(r2))).json, r2);
    assert.equal((await api.put(`${path(rf)}/oauth`, OAUTH)).status, 200, 'a route of another edge may have one');

    for (const [m, body] of AUTH.slice(1)) {
      await assertError(await api.put(`${path(r1)}/${m}`, body), 409, 'ERR_EP_7201', 'oauth');
      await assertError(await api.patch(path(r1), { [m]: body }), 409, 'ERR_EP_7201', 'oauth');
    }
    await assertError(await api.patch(path(r1), { oauth: OAUTH, oidc: OIDC }), 400, 'ERR_EP_7202');
    await assertError(await api.post(routes(f.id), { match_type: 'path_prefix', match: '/z', oidc: OIDC, saml: SAML }), 400, 'ERR_EP_7202');
    await assertError(await api.put(`${path(r1)}/oidc`, { edge_id: e.id, id: r1.id, module: OIDC }), 409, 'ERR_EP_7201');
    assert.deepEqual(await modulesOf(h(), r1.id), ['oauth']);
    assert.deepEqual(await routeIds(h(), f.id), [rf.id]);
    const replaced = await api.put(`${path(r1)}/oauth`, { provider: { github: {} } });
    assert.equal(replaced.status, 200, `replacing its own is fine: ${replaced.text}`);

    assert.equal((await api.delete(`${path(r1)}/oauth`)).status, 204);
    const moved = await api.put(`${path(r2)}/oidc`, OIDC);
    assert.equal(moved.status, 200, moved.text);
    await assertError(await api.put(`${path(r1)}/saml`, SAML), 409, 'ERR_EP_7155', r2.id);
    const withSaml = await api.post(routes(e.id), { match_type: 'path_prefix', match: '/c' });
    assert.equal(withSaml.status, 201, 'a route without a sign-in module is fine');
  });

  it('OAuth and OIDC client secrets are never in a response and not stored in plain text; nor is the SAML signing key', async () => {
    const api = await h().newAccount();
    const oauthSecret = `oauth-secret-${randomBytes(8).toString('hex')}`;
    const oidcSecret = `oidc-secret-${randomBytes(8).toString('hex')}`;
    const [e, f, g] = [await edge(api), await edge(api), await edge(api)];
    const oauth = {
      provider: { github: { client_id: 'gh-client', client_secret: oauthSecret, teams: ['ops'], organizations: ['acme'], email_domains: ['example.com'] } },
    };
    const create = await api.post(routes(e.id), { match_type: 'path_prefix', match: '/', oauth });
    assert.equal(create.status, 201, create.text);
    assert.deepEqual(create.json.oauth.provider, {
      github: {
        client_id: 'gh-client',
        client_secret: null,
        scopes: [],
        email_addresses: [],
        email_domains: ['example.com'],
        teams: ['ops'],
        organizations: ['acme'],
      },
    });
    const r1 = create.json;
    const r2 = await route(api, f.id, '/');
    const put = await api.put(`${routes(f.id)}/${r2.id}/oidc`, { ...OIDC, client_secret: oidcSecret });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.json.client_secret, null);
    const r3 = await route(api, g.id, '/', { saml: SAML });
    const replacedOauth = await api.put(`${routes(e.id)}/${r1.id}/oauth`, { edge_id: e.id, id: r1.id, module: oauth });
    const reads = [
      create,
      put,
      replacedOauth,
      await api.get(`${routes(e.id)}/${r1.id}`),
      await api.get(`${routes(e.id)}/${r1.id}/oauth`),
      await api.get(`${routes(f.id)}/${r2.id}`),
      await api.get(`${routes(f.id)}/${r2.id}/oidc`),
      await api.get(`${routes(g.id)}/${r3.id}/saml`),
      await api.get(`/edges/https/${e.id}`),
      await api.get('/edges/https'),
    ];
    for (const res of reads) {
      assert.equal(res.status < 300, true, res.text);
      for (const secret of [oauthSecret, oidcSecret, 'PRIVATE KEY', 'sealed'])
        assert.ok(!res.text.includes(secret), `${secret} shown: ${res.text.slice(0, 200)}`);
    }
    const rows = await h().deps.store.db.selectFrom('modules').select(['owner_id', 'name', 'value']).where('account_id', '=', api.info.accountId).execute();
    assert.deepEqual(rows.map((row) => row.name).sort(), ['oauth', 'oidc', 'saml']);
    for (const row of rows) {
      for (const secret of [oauthSecret, oidcSecret, 'PRIVATE KEY']) assert.ok(!row.value.includes(secret), `${row.name} stores ${secret} in plain text`);
    }
    assert.ok(rows.find((row) => row.name === 'oauth')!.value.includes('gh-client'), 'the module is there');
  });

  // ---------------------------------------------------------------------------------------------
  // References and deletion

  it('a backend or IP policy a route module names cannot be deleted (6502, 1420 naming the route); unknown ones store nothing; all delete once the edge is gone', async () => {
    const api = await h().newAccount();
    const other = await h().newAccount();
    const b = await backend(api);
    const [p1, p2, p3] = [await ipp(api), await ipp(api), await ipp(api)];
    const e = await edge(api);
    const r1 = await route(api, e.id, '/a', { backend: { backend_id: b }, ip_restriction: { ip_policy_ids: [p1] } });
    const r2 = await route(api, e.id, '/b', { traffic_policy: { value: restrictIpsDoc(p2) } });
    const r3 = await route(api, e.id, '/c', {
      policy: { inbound: [{ name: 'office', actions: [{ type: 'restrict-ips', config: { ip_policies: [p3] } }] }] },
    });
    assert.deepEqual(r1.backend, { enabled: true, backend: ref('/backends/tunnel_group', b) });
    assert.deepEqual(r1.ip_restriction, { enabled: true, ip_policies: [ref('/ip_policies', p1)] });
    await assertError(await api.delete(`/backends/tunnel_group/${b}`), 409, 'ERR_EP_6502', r1.id);
    for (const [p, r] of [
      [p1, r1],
      [p2, r2],
      [p3, r3],
    ] as const) {
      await assertError(await api.delete(`/ip_policies/${p}`), 409, 'ERR_EP_1420', r.id);
      assert.equal((await api.get(`/ip_policies/${p}`)).status, 200);
    }
    assert.equal((await api.get(`/backends/tunnel_group/${b}`)).status, 200);

    const rp = `${routes(e.id)}/${r2.id}`;
    for (const id of [await backend(other), 'bkdtg_000000000000000000000000000']) {
      await assertError(await api.put(`${rp}/backend`, { backend_id: id }), 400, 'ERR_EP_6501', id);
      await assertError(await api.post(routes(e.id), { match_type: 'path_prefix', match: '/new', backend: { backend_id: id } }), 400, 'ERR_EP_6501', id);
    }
    for (const id of [await ipp(other), 'ipp_000000000000000000000000000']) {
      await assertError(await api.patch(rp, { ip_restriction: { ip_policy_ids: [id] } }), 400, 'ERR_EP_1402', id);
      await assertError(await api.put(`${rp}/traffic_policy`, { value: restrictIpsDoc(id) }), 400, 'ERR_EP_1402', id);
    }
    assert.deepEqual((await api.get(rp)).json, r2);
    assert.equal((await routeIds(h(), e.id)).length, 3);

    assert.equal((await api.delete(`${routes(e.id)}/${r1.id}/backend`)).status, 204);
    assert.equal((await api.delete(`/backends/tunnel_group/${b}`)).status, 204, 'named no more');
    await assertError(await api.delete(`/ip_policies/${p1}`), 409, 'ERR_EP_1420', r1.id);
    assert.equal((await api.delete(`/edges/https/${e.id}`)).status, 204);
    for (const p of [p1, p2, p3]) assert.equal((await api.delete(`/ip_policies/${p}`)).status, 204, p);
  });

  it('deleting an edge deletes its routes and every module of the edge and its routes, and frees its domains, leaving no rows', async () => {
    const api = await h().newAccount();
    const d = await domain(api);
    const c = await ca(api);
    const b = await backend(api);
    const p = await ipp(api);
    const e = await edge(api, { hostports: [d.hostport], mutual_tls: { certificate_authority_ids: [c] }, tls_termination: { min_version: '1.2' } });
    const r1 = await route(api, e.id, '/a', { backend: { backend_id: b }, compression: {}, oauth: OAUTH });
    const r2 = await route(api, e.id, '/b', { ip_restriction: { ip_policy_ids: [p] }, request_headers: { add: { a: 'b' } } });
    const keep = await edge(api);
    const kept = await route(api, keep.id, '/a', { backend: { backend_id: b } });

    const before = await storedFor(h(), e.id);
    assert.deepEqual(before.routes.map((r) => r.id).sort(), [r1.id, r2.id].sort());
    assert.deepEqual(before.modules.map((m) => `${m.owner_id}/${m.name}`).sort(), [
      `${e.id}/mutual_tls`,
      `${e.id}/tls_termination`,
      `${r1.id}/backend`,
      `${r1.id}/compression`,
      `${r1.id}/oauth`,
      `${r2.id}/ip_restriction`,
      `${r2.id}/request_headers`,
    ]);
    assert.deepEqual(before.refs.map((r) => r.target_id).sort(), [b, c, p].sort());
    assert.deepEqual(before.domains, [{ reserved_domain_id: d.id }]);

    assert.equal((await api.delete(`/edges/https/${e.id}`)).status, 204);
    await assertError(await api.get(`/edges/https/${e.id}`), 404, 'ERR_EP_252', e.id);
    for (const r of [r1, r2]) {
      assertError(await api.get(`${routes(e.id)}/${r.id}`), 404, 'ERR_EP_252');
      assertError(await api.get(`${routes(e.id)}/${r.id}/compression`), 404, 'ERR_EP_252');
    }
    assert.deepEqual(await storedFor(h(), e.id, [r1.id, r2.id]), { routes: [], modules: [], refs: [], domains: [] });

    assert.deepEqual((await api.get(`${routes(keep.id)}/${kept.id}`)).json, kept, 'another edge keeps its routes');
    await assertError(await api.delete(`/backends/tunnel_group/${b}`), 409, 'ERR_EP_6502', kept.id);
    assert.equal((await api.delete(`/certificate_authorities/${c}`)).status, 204);
    assert.equal((await api.delete(`/ip_policies/${p}`)).status, 204);
    assert.equal((await api.delete(`/reserved_domains/${d.id}`)).status, 204);
    assert.equal((await api.delete(`/edges/https/${keep.id}`)).status, 204);
    assert.equal((await api.delete(`/backends/tunnel_group/${b}`)).status, 204);
  });

  it('a read_only user may read edges, routes and modules but every write is 403 635, module PUT and DELETE included', async () => {
    const api = await h().newAccount();
    const reader = await api.asNewUser('read_only');
    const e = await edge(api, { hostports: [(await domain(api)).hostport], tls_termination: {} });
    const r = await route(api, e.id, '/', { compression: {} });
    const rp = `${routes(e.id)}/${r.id}`;
    const shown = (await api.get(`/edges/https/${e.id}`)).json;
    assert.deepEqual((await reader.get(`/edges/https/${e.id}`)).json, shown);
    assert.deepEqual((await reader.get('/edges/https')).json.https_edges, [shown]);
    assert.deepEqual((await reader.get(`/edges/https/${e.id}/tls_termination`)).json, e.tls_termination);
    assert.deepEqual((await reader.get(rp)).json, r);
    assert.deepEqual((await reader.get(`${rp}/compression`)).json, { enabled: true });
    for (const res of [
      await reader.post('/edges/https', {}),
      await reader.patch(`/edges/https/${e.id}`, { description: 'x' }),
      await reader.put(`/edges/https/${e.id}/tls_termination`, {}),
      await reader.delete(`/edges/https/${e.id}/tls_termination`),
      await reader.post(routes(e.id), { match_type: 'path_prefix', match: '/x' }),
      await reader.patch(rp, { description: 'x' }),
      await reader.put(`${rp}/compression`, { enabled: false }),
      await reader.put(`${rp}/oauth`, OAUTH),
      await reader.delete(`${rp}/compression`),
      await reader.delete(rp),
      await reader.delete(`/edges/https/${e.id}`),
    ]) {
      assertError(res, 403, 'ERR_EP_635');
    }
    assert.deepEqual((await api.get(`/edges/https/${e.id}`)).json, shown);
    assert.deepEqual(await routeIds(h(), e.id), [r.id]);
    assert.deepEqual(await modulesOf(h(), r.id), ['compression']);
  });

  // ---------------------------------------------------------------------------------------------
  // Concurrent requests (on PostgreSQL they really overlap: a pool of connections)

  it('concurrent creates of one match on one edge: exactly one 201, the rest 409 7126 naming it, one row', async () => {
    const api = await h().newAccount();
    for (let round = 0; round < 5; round++) {
      const e = await edge(api);
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => api.post(routes(e.id), { match_type: i % 2 === 0 ? 'path_prefix' : 'exact_path', match: '/same' })),
      );
      const winners = results.filter((r) => r.status === 201);
      assert.equal(winners.length, 1, statuses(results));
      for (const res of results) if (res.status !== 201) assertError(res, 409, 'ERR_EP_7126', winners[0]!.json.id);
      assert.deepEqual(await routeIds(h(), e.id), [winners[0]!.json.id]);
    }
  });

  it('concurrent PUTs of oauth on two routes of one edge: exactly one 200 and one 409 7155', async () => {
    const api = await h().newAccount();
    for (let round = 0; round < 5; round++) {
      const e = await edge(api);
      const [r1, r2] = [await route(api, e.id, '/a'), await route(api, e.id, '/b')];
      const results = await Promise.all([r1, r2].map((r) => api.put(`${routes(e.id)}/${r.id}/oauth`, OAUTH)));
      assert.deepEqual(results.map((r) => r.status).sort(), [200, 409], statuses(results));
      const winner = results[0]!.status === 200 ? r1 : r2;
      assertError(
        results.find((r) => r.status === 409)!,
        409,
        'ERR_EP_7155',
        winner.id,
      );
      const stored = (await storedFor(h(), e.id)).modules;
      assert.deepEqual(stored, [{ owner_id: winner.id, name: 'oauth' }]);
    }
  });

  it('concurrent creates near the limit: with 98 routes, 5 at once make 2 (the rest 409 7128); with 97, 6 at once make 3; never more than 100', async () => {
    const api = await h().newAccount();
    const e = await edge(api);
    for (let i = 0; i < 98; i++) await route(api, e.id, `/r${i}`);
    const burst = async (size: number, tag: string) =>
      Promise.all(Array.from({ length: size }, (_, i) => api.post(routes(e.id), { match_type: 'path_prefix', match: `/${tag}${i}`, compression: {} })));
    const first = await burst(5, 'x');
    assert.equal(first.filter((r) => r.status === 201).length, 2, statuses(first));
    for (const res of first) if (res.status !== 201) assertError(res, 409, 'ERR_EP_7128', e.id);
    assert.equal((await routeIds(h(), e.id)).length, 100);

    const ids = await routeIds(h(), e.id);
    for (const id of ids.slice(0, 3)) assert.equal((await api.delete(`${routes(e.id)}/${id}`)).status, 204);
    const second = await burst(6, 'y');
    assert.equal(second.filter((r) => r.status === 201).length, 3, statuses(second));
    for (const res of second) if (res.status !== 201) assertError(res, 409, 'ERR_EP_7128', e.id);
    assert.equal((await routeIds(h(), e.id)).length, 100);
    assert.equal((await storedFor(h(), e.id)).modules.length, 5, 'a module for each route made, none for those refused');
  });

  it('no request of this suite was answered with a 5xx', (t) => {
    const answered = h().logs.filter((l) => l.msg === 'request');
    if (answered.length === 0) return t.skip('the request log is off (EDGEPLANE_TEST_LOG_LEVEL)');
    assert.deepEqual(
      answered.filter((l) => typeof l.status !== 'number' || l.status >= 500),
      [],
    );
  });
});
