// TCP edges: their fields and list key, hostports (every refusal, with nothing written; PATCH
// replacing the list), the backend and ip_restriction modules through create, PATCH and PUT (bare
// and wrapped), GET and DELETE of a module, the update rules of modules, the policy and
// traffic_policy modules as modules (set, echo, exclusivity, a refused one stores nothing),
// deleting what a module names, deleting an edge (which frees everything), and read-only users.
// Deep validation of traffic policies is covered by test/unit/traffic-policy.test.ts.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachStore, type Api, type Harness } from '../helpers/harness.js';
import { assertError, created } from '../helpers/assertions.js';

const MODULES = ['backend', 'ip_restriction', 'policy', 'traffic_policy'] as const;
const KEYS = ['created_at', 'description', 'hostports', 'id', 'metadata', 'uri', ...MODULES].sort();
const addr = async (api: Api) => (await created(api, '/reserved_addrs', {})).addr as string;
const raOf = async (api: Api, hostport: string) =>
  ((await api.get('/reserved_addrs')).json.reserved_addrs as { id: string; addr: string }[]).find((r) => r.addr === hostport)!.id;
const edge = (api: Api, body: Record<string, unknown> = {}) => created(api, '/edges/tcp', body);
const count = async (api: Api) => (await api.get('/edges/tcp')).json.tcp_edges.length as number;
const backend = async (api: Api) => (await created(api, '/backends/tunnel_group', { labels: { app: 'db' } })).id as string;
const ipp = async (api: Api) => (await created(api, '/ip_policies', {})).id as string;
const restrictIps = (id: string) => ({
  inbound: [{ name: 'only office', expressions: [], actions: [{ type: 'restrict-ips', config: { ip_policies: [id] } }] }],
});
const documentNaming = (id: string) => JSON.stringify({ on_tcp_connect: [{ actions: [{ type: 'restrict-ips', config: { ip_policies: [id] } }] }] });
const DENY_ALL = { inbound: [{ name: 'deny all', expressions: [], actions: [{ type: 'deny' }] }] };
const YAML_DOC = 'on_tcp_connect:\n  - name: log\n    actions:\n      - type: log\n';

/** The rows the store holds for an owner in the module tables and the hostports join table. */
async function storedFor(h: Harness, ownerId: string) {
  const db = h.deps.store.db;
  return {
    modules: await db.selectFrom('modules').select('name').where('owner_id', '=', ownerId).execute(),
    refs: await db.selectFrom('module_refs').select('target_id').where('owner_id', '=', ownerId).execute(),
    hostports: await db.selectFrom('tcp_edge_hostports').select('reserved_addr_id').where('tcp_edge_id', '=', ownerId).execute(),
  };
}

describeEachStore('TCP edges', (h) => {
  const ref = (path: string, id: string) => ({ id, uri: `${h().baseUrl}${path}/${id}` });

  it('creates an edge with every key present (hostports and modules null when unset), listed under tcp_edges', async () => {
    const api = await h().newAccount();
    const e = await edge(api, { description: 'db', metadata: '{"a":1}' });
    assert.match(e.id, /^edgtcp_/);
    assert.deepEqual(Object.keys(e).sort(), KEYS);
    assert.equal(e.uri, `${h().baseUrl}/edges/tcp/${e.id}`);
    assert.deepEqual([e.description, e.metadata, e.hostports], ['db', '{"a":1}', null]);
    for (const m of MODULES) assert.equal(e[m], null, m);
    assert.deepEqual((await api.get(`/edges/tcp/${e.id}`)).json, e);
    const list = (await api.get('/edges/tcp')).json;
    assert.deepEqual(list.tcp_edges, [e]);
    assert.equal(list.uri, `${h().baseUrl}/edges/tcp`);
  });

  it('creates an edge serving hostports in order with backend, ip_restriction and policy modules, shown by GET and module GET', async () => {
    const api = await h().newAccount();
    const [a1, a2] = [await addr(api), await addr(api)];
    const [b, p1, p2] = [await backend(api), await ipp(api), await ipp(api)];
    const e = await edge(api, {
      hostports: [a2, a1],
      backend: { backend_id: b },
      ip_restriction: { enabled: false, ip_policy_ids: [p2, p1] },
      policy: DENY_ALL,
    });
    assert.deepEqual(e.hostports, [a2, a1]);
    assert.deepEqual(e.backend, { enabled: true, backend: ref('/backends/tunnel_group', b) });
    assert.deepEqual(e.ip_restriction, { enabled: false, ip_policies: [ref('/ip_policies', p2), ref('/ip_policies', p1)] });
    assert.deepEqual(e.policy, { enabled: true, inbound: [{ name: 'deny all', expressions: [], actions: [{ type: 'deny', config: null }] }], outbound: null });
    assert.equal(e.traffic_policy, null);
    assert.deepEqual((await api.get(`/edges/tcp/${e.id}`)).json, e);
    for (const m of ['backend', 'ip_restriction', 'policy']) assert.deepEqual((await api.get(`/edges/tcp/${e.id}/${m}`)).json, e[m], m);
    await assertError(await api.get(`/edges/tcp/${e.id}/traffic_policy`), 404, 'ERR_EP_7200', 'traffic_policy');
  });

  it('refuses each bad hostport on create and PATCH with its own code, writing nothing', async () => {
    const api = await h().newAccount();
    const other = await h().newAccount();
    const [mine, free, withEc] = [await addr(api), await addr(api), await addr(api)];
    const tcp = (await created(api, '/endpoint_configurations', { type: 'tcp' })).id;
    assert.equal((await api.patch(`/reserved_addrs/${await raOf(api, withEc)}`, { endpoint_configuration_id: tcp })).status, 200);
    const theirs = await addr(other);
    const theirsId = await raOf(other, theirs);
    const e = await edge(api, { hostports: [mine] });
    const eleven = [free, ...(await Promise.all(Array.from({ length: 10 }, () => addr(api))))];
    const cases: [unknown[], number, string, string?][] = [
      [['foo'], 400, '7104', 'foo'],
      [[free, 'foo'], 400, '7104', 'foo'],
      [['foo:0'], 400, '7112', 'foo:0'],
      [['foo:70000'], 400, '7112', 'foo:70000'],
      [['nothing.tcp.test:12345'], 400, '7113', 'nothing.tcp.test:12345'],
      [[free, theirs], 400, '7113', theirs],
      [[withEc], 400, '7115', withEc],
      [[free, free], 400, '7123', free],
      [eleven, 400, '7129', '11'],
    ];
    const blank = await edge(api);
    for (const [hostports, status, code, mentions] of cases) {
      await assertError(await api.post('/edges/tcp', { hostports }), status, `ERR_EP_${code}`, mentions);
      await assertError(await api.patch(`/edges/tcp/${blank.id}`, { hostports }), status, `ERR_EP_${code}`, mentions);
    }
    const res = await api.post('/edges/tcp', { hostports: [free, mine] });
    await assertError(res, 409, 'ERR_EP_7122', e.id);
    await assertError(await api.patch(`/edges/tcp/${blank.id}`, { hostports: [free, mine] }), 409, 'ERR_EP_7122', e.id);
    const msg = (await api.post('/edges/tcp', { hostports: [theirs] })).json.msg as string;
    for (const secret of [theirsId, other.info.accountId, other.info.userId, other.info.keyId]) assert.ok(!msg.includes(secret), msg);
    // A refused hostport undoes the module written before it in the same PATCH.
    const b = await backend(api);
    await assertError(await api.patch(`/edges/tcp/${blank.id}`, { hostports: [free, theirs], backend: { backend_id: b } }), 400, 'ERR_EP_7113', theirs);
    assert.deepEqual(await storedFor(h(), blank.id), { modules: [], refs: [], hostports: [] });
    assert.equal(await count(api), 2);
    assert.deepEqual((await api.get(`/edges/tcp/${blank.id}`)).json, blank);
    assert.deepEqual((await api.get(`/edges/tcp/${e.id}`)).json.hostports, [mine]);
    assert.equal((await edge(other, { hostports: [theirs] })).hostports[0], theirs, 'their address was not claimed');
    assert.deepEqual((await edge(api, { hostports: [free] })).hostports, [free], 'free was not claimed by a refused request');
  });

  it('PATCH replaces hostports (reordered, fewer, [] → null), leaves them when absent or null, and frees the ones dropped', async () => {
    const api = await h().newAccount();
    const [a1, a2, a3] = [await addr(api), await addr(api), await addr(api)];
    const e = await edge(api, { hostports: [a1, a2] });
    const patch = async (body: Record<string, unknown>) => {
      const res = await api.patch(`/edges/tcp/${e.id}`, body);
      assert.equal(res.status, 200, res.text);
      return res.json.hostports;
    };
    assert.deepEqual(await patch({ hostports: [a2, a1] }), [a2, a1]);
    assert.deepEqual(await patch({ description: 'x' }), [a2, a1]);
    assert.deepEqual(await patch({ description: 'y', hostports: null }), [a2, a1]);
    assert.deepEqual(await patch({ hostports: [a3] }), [a3]);
    assert.deepEqual((await edge(api, { hostports: [a1] })).hostports, [a1], 'a dropped address can be served by another edge');
    assert.equal((await api.delete(`/reserved_addrs/${await raOf(api, a2)}`)).status, 204);
    assert.equal(await patch({ hostports: [] }), null);
    assert.deepEqual((await api.get(`/edges/tcp/${e.id}`)).json.hostports, null);
    assert.deepEqual((await storedFor(h(), e.id)).hostports, []);
    assert.equal((await api.delete(`/reserved_addrs/${await raOf(api, a3)}`)).status, 204);
  });

  it('backend module: PATCH replaces it whole, null or absent leaves it; PUT bare or wrapped; 6501 and 256 store nothing', async () => {
    const api = await h().newAccount();
    const other = await h().newAccount();
    const [b1, b2] = [await backend(api), await backend(api)];
    const e = await edge(api, { backend: { enabled: false, backend_id: b1 } });
    assert.deepEqual(e.backend, { enabled: false, backend: ref('/backends/tunnel_group', b1) });
    const patched = (await api.patch(`/edges/tcp/${e.id}`, { backend: { backend_id: b2 } })).json;
    assert.deepEqual(patched.backend, { enabled: true, backend: ref('/backends/tunnel_group', b2) }, 'replaced whole: enabled is true again');
    assert.deepEqual((await api.patch(`/edges/tcp/${e.id}`, { description: 'd', backend: null })).json.backend, patched.backend);
    assert.deepEqual((await api.patch(`/edges/tcp/${e.id}`, { metadata: 'm' })).json.backend, patched.backend);
    for (const id of [await backend(other), 'bkdtg_000000000000000000000000000', await ipp(api)]) {
      await assertError(await api.post('/edges/tcp', { backend: { backend_id: id } }), 400, 'ERR_EP_6501', id);
      await assertError(await api.patch(`/edges/tcp/${e.id}`, { backend: { backend_id: id } }), 400, 'ERR_EP_6501', id);
      await assertError(await api.put(`/edges/tcp/${e.id}/backend`, { backend_id: id }), 400, 'ERR_EP_6501', id);
    }
    assert.equal(await count(api), 1);
    const put = await api.put(`/edges/tcp/${e.id}/backend`, { enabled: false, backend_id: b1 });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.json, { enabled: false, backend: ref('/backends/tunnel_group', b1) });
    const wrapped = await api.put(`/edges/tcp/${e.id}/backend`, { id: e.id, module: { backend_id: b2 } });
    assert.deepEqual(wrapped.json, { enabled: true, backend: ref('/backends/tunnel_group', b2) });
    const elsewhere = await edge(api);
    await assertError(await api.put(`/edges/tcp/${e.id}/backend`, { id: elsewhere.id, module: { backend_id: b1 } }), 400, 'ERR_EP_256', elsewhere.id);
    assert.deepEqual((await api.get(`/edges/tcp/${e.id}/backend`)).json, wrapped.json);
    assert.deepEqual((await api.get(`/edges/tcp/${e.id}`)).json, { ...patched, description: 'd', metadata: 'm', backend: wrapped.json });
    assert.equal((await api.delete(`/edges/tcp/${e.id}/backend`)).status, 204);
    await assertError(await api.get(`/edges/tcp/${e.id}/backend`), 404, 'ERR_EP_7200', 'backend');
    assert.equal((await api.get(`/edges/tcp/${e.id}`)).json.backend, null);
    assert.equal((await api.delete(`/edges/tcp/${e.id}/backend`)).status, 204, 'deleting an unset module is a 204 too');
    assert.equal((await api.delete(`/backends/tunnel_group/${b2}`)).status, 204, 'the module no longer names it');
  });

  it('ip_restriction module: set by create, PATCH and PUT; an unknown policy (1402) stores nothing', async () => {
    const api = await h().newAccount();
    const [p1, p2] = [await ipp(api), await ipp(api)];
    const missing = 'ipp_000000000000000000000000000';
    await assertError(await api.post('/edges/tcp', { ip_restriction: { ip_policy_ids: [p1, missing] } }), 400, 'ERR_EP_1402', missing);
    assert.equal(await count(api), 0);
    const e = await edge(api, { ip_restriction: { ip_policy_ids: [p1] } });
    assert.deepEqual(e.ip_restriction, { enabled: true, ip_policies: [ref('/ip_policies', p1)] });
    await assertError(await api.patch(`/edges/tcp/${e.id}`, { ip_restriction: { ip_policy_ids: [missing] } }), 400, 'ERR_EP_1402', missing);
    await assertError(await api.put(`/edges/tcp/${e.id}/ip_restriction`, { ip_policy_ids: [p2, missing] }), 400, 'ERR_EP_1402', missing);
    assert.deepEqual((await api.get(`/edges/tcp/${e.id}/ip_restriction`)).json, e.ip_restriction);
    const patched = (await api.patch(`/edges/tcp/${e.id}`, { ip_restriction: { enabled: false, ip_policy_ids: [p2, p1] } })).json;
    assert.deepEqual(patched.ip_restriction, { enabled: false, ip_policies: [ref('/ip_policies', p2), ref('/ip_policies', p1)] });
    const put = await api.put(`/edges/tcp/${e.id}/ip_restriction`, { id: e.id, module: { ip_policy_ids: [p2] } });
    assert.deepEqual(put.json, { enabled: true, ip_policies: [ref('/ip_policies', p2)] });
    assert.equal((await api.delete(`/ip_policies/${p1}`)).status, 204, 'p1 is named no more');
    assert.equal((await api.delete(`/edges/tcp/${e.id}/ip_restriction`)).status, 204);
    await assertError(await api.get(`/edges/tcp/${e.id}/ip_restriction`), 404, 'ERR_EP_7200');
  });

  it('policy and traffic_policy: set and echoed, exclusive (7201 on PUT and PATCH, 7202 in one request), a refused one stores nothing', async () => {
    const api = await h().newAccount();
    const json = '{ "on_tcp_connect": [ {"actions": [{"type": "deny"}]} ] }';
    const t = await edge(api, { traffic_policy: { value: json } });
    assert.deepEqual(t.traffic_policy, { enabled: true, value: json });
    const yaml = await api.put(`/edges/tcp/${t.id}/traffic_policy`, { enabled: false, value: YAML_DOC });
    assert.deepEqual(yaml.json, { enabled: false, value: YAML_DOC });
    assert.deepEqual((await api.get(`/edges/tcp/${t.id}/traffic_policy`)).json, yaml.json);
    await assertError(await api.put(`/edges/tcp/${t.id}/policy`, DENY_ALL), 409, 'ERR_EP_7201', 'traffic_policy');
    await assertError(await api.patch(`/edges/tcp/${t.id}`, { policy: DENY_ALL }), 409, 'ERR_EP_7201', 'traffic_policy');
    const both = { policy: DENY_ALL, traffic_policy: { value: json } };
    await assertError(await api.post('/edges/tcp', both), 400, 'ERR_EP_7202');
    await assertError(await api.patch(`/edges/tcp/${t.id}`, both), 400, 'ERR_EP_7202');
    assert.equal(await count(api), 1);
    assert.deepEqual((await api.get(`/edges/tcp/${t.id}`)).json, { ...t, traffic_policy: yaml.json });

    const p = await edge(api, { policy: { enabled: false, ...DENY_ALL, outbound: [{ name: 'log', actions: [{ type: 'log', config: {} }] }] } });
    assert.deepEqual(p.policy, {
      enabled: false,
      inbound: [{ name: 'deny all', expressions: [], actions: [{ type: 'deny', config: null }] }],
      outbound: [{ name: 'log', expressions: [], actions: [{ type: 'log', config: {} }] }],
    });
    await assertError(await api.put(`/edges/tcp/${p.id}/traffic_policy`, { value: json }), 409, 'ERR_EP_7201', 'policy');
    assert.equal((await api.delete(`/edges/tcp/${p.id}/policy`)).status, 204);
    assert.deepEqual((await api.put(`/edges/tcp/${p.id}/traffic_policy`, { value: json })).json, { enabled: true, value: json });

    const invalid: [Record<string, unknown>, string][] = [
      [{ policy: { inbound: [{ name: 'x', actions: [{ type: 'no-such-action' }] }] } }, 'ERR_EP_2201'],
      [{ traffic_policy: { value: '{"on_tcp_connect": [' } }, 'ERR_EP_2212'],
    ];
    const plain = await edge(api);
    for (const [body, code] of invalid) {
      await assertError(await api.post('/edges/tcp', body), 400, code);
      await assertError(await api.patch(`/edges/tcp/${plain.id}`, body), 400, code);
      const [name, value] = Object.entries(body)[0]!;
      await assertError(await api.put(`/edges/tcp/${plain.id}/${name}`, value), 400, code);
      await assertError(await api.get(`/edges/tcp/${plain.id}/${name}`), 404, 'ERR_EP_7200');
    }
    assert.equal(await count(api), 3);
    assert.deepEqual((await storedFor(h(), plain.id)).modules, []);
  });

  it('refuses deleting a backend (6502) or an IP policy (1420) a module names, naming the edge, in every module that names one', async () => {
    const api = await h().newAccount();
    const b = await backend(api);
    const [p1, p2, p3] = [await ipp(api), await ipp(api), await ipp(api)];
    const e1 = await edge(api, { backend: { backend_id: b }, ip_restriction: { ip_policy_ids: [p1] } });
    const e2 = await edge(api, { policy: restrictIps(p2) });
    const e3 = await edge(api, { traffic_policy: { value: documentNaming(p3) } });
    await assertError(await api.delete(`/backends/tunnel_group/${b}`), 409, 'ERR_EP_6502', e1.id);
    for (const [p, e] of [
      [p1, e1],
      [p2, e2],
      [p3, e3],
    ] as const) {
      await assertError(await api.delete(`/ip_policies/${p}`), 409, 'ERR_EP_1420', e.id);
      assert.equal((await api.get(`/ip_policies/${p}`)).status, 200);
    }
    assert.equal((await api.get(`/backends/tunnel_group/${b}`)).status, 200);
    const missing = 'ipp_000000000000000000000000000';
    await assertError(await api.put(`/edges/tcp/${e2.id}/policy`, restrictIps(missing)), 400, 'ERR_EP_1402', missing);
    await assertError(await api.put(`/edges/tcp/${e3.id}/traffic_policy`, { value: documentNaming(missing) }), 400, 'ERR_EP_1402', missing);
    assert.deepEqual((await api.get(`/edges/tcp/${e3.id}`)).json, e3);
  });

  it('deleting an edge removes its modules and hostports: the backend, IP policies and address then delete with 204', async () => {
    const api = await h().newAccount();
    const a = await addr(api);
    const b = await backend(api);
    const [p1, p2] = [await ipp(api), await ipp(api)];
    const e = await edge(api, { hostports: [a], backend: { backend_id: b }, ip_restriction: { ip_policy_ids: [p1] }, policy: restrictIps(p2) });
    const before = await storedFor(h(), e.id);
    assert.deepEqual(before.modules.map((m) => m.name).sort(), ['backend', 'ip_restriction', 'policy']);
    assert.deepEqual(before.refs.map((r) => r.target_id).sort(), [b, p1, p2].sort());
    assert.equal(before.hostports.length, 1);
    assert.equal((await api.delete(`/edges/tcp/${e.id}`)).status, 204);
    await assertError(await api.get(`/edges/tcp/${e.id}`), 404, 'ERR_EP_252');
    await assertError(await api.get(`/edges/tcp/${e.id}/backend`), 404, 'ERR_EP_252');
    assert.deepEqual(await storedFor(h(), e.id), { modules: [], refs: [], hostports: [] });
    assert.equal((await api.delete(`/backends/tunnel_group/${b}`)).status, 204);
    for (const p of [p1, p2]) assert.equal((await api.delete(`/ip_policies/${p}`)).status, 204);
    assert.equal((await api.delete(`/reserved_addrs/${await raOf(api, a)}`)).status, 204);
    assert.equal(await count(api), 0);
  });

  it('a read_only user may read edges and modules but not create, change or delete them, nor PUT or DELETE a module (403 635)', async () => {
    const api = await h().newAccount();
    const reader = await api.asNewUser('read_only');
    const b = await backend(api);
    const a = await addr(api);
    const e = await edge(api, { hostports: [a], backend: { backend_id: b } });
    assert.deepEqual((await reader.get(`/edges/tcp/${e.id}`)).json, e);
    assert.deepEqual((await reader.get('/edges/tcp')).json.tcp_edges, [e]);
    assert.deepEqual((await reader.get(`/edges/tcp/${e.id}/backend`)).json, e.backend);
    await assertError(await reader.post('/edges/tcp', {}), 403, 'ERR_EP_635');
    await assertError(await reader.patch(`/edges/tcp/${e.id}`, { description: 'x' }), 403, 'ERR_EP_635');
    await assertError(await reader.put(`/edges/tcp/${e.id}/backend`, { enabled: false, backend_id: b }), 403, 'ERR_EP_635');
    await assertError(await reader.put(`/edges/tcp/${e.id}/policy`, DENY_ALL), 403, 'ERR_EP_635');
    for (const m of MODULES) await assertError(await reader.delete(`/edges/tcp/${e.id}/${m}`), 403, 'ERR_EP_635');
    await assertError(await reader.delete(`/edges/tcp/${e.id}`), 403, 'ERR_EP_635');
    assert.equal(await count(api), 1);
    assert.deepEqual((await api.get(`/edges/tcp/${e.id}`)).json, e);
  });
});
