// The shared security suite, run against every resource route: credentials, versions,
// isolation between accounts, unknown fields and size limits. Nothing refused is written.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachStore, type Api, type RequestOptions } from '../helpers/harness.js';
import { readOnlyResources, securedResources, type SecuredResource } from '../helpers/secured-resources.js';

type Call = { name: string; run: (api: Api, o?: RequestOptions) => Promise<{ status: number; json: { error_code?: string } }> };

/** The collection of `r` in the account of `api`: its path, or, for a kind under a parent, a new parent's. */
async function collectionOf(r: SecuredResource, api: Api): Promise<string> {
  return r.parent ? r.parent(api) : r.path;
}

/** The operations of a resource in the collection `base`, on an existing item (no list for a kind without one). */
function calls(r: SecuredResource, base: string, id: string, createBody: Record<string, unknown>): Call[] {
  return [
    { name: 'create', run: (api, o) => api.post(base, createBody, o) },
    ...(r.list === false ? [] : [{ name: 'list', run: (api: Api, o?: RequestOptions) => api.get(base, o) }]),
    { name: 'get', run: (api, o) => api.get(`${base}/${id}`, o) },
    { name: 'update', run: (api, o) => api.patch(`${base}/${id}`, r.update, o) },
    ...(r.parts ?? []).map((part) => ({ name: `detach ${part}`, run: (api: Api, o?: RequestOptions) => api.delete(`${base}/${id}/${part}`, o) })),
    ...Object.entries(r.modules ?? {}).flatMap(([module, body]) => [
      { name: `put ${module}`, run: (api: Api, o?: RequestOptions) => api.put(`${base}/${id}/${module}`, body, o) },
      { name: `get ${module}`, run: (api: Api, o?: RequestOptions) => api.get(`${base}/${id}/${module}`, o) },
      { name: `delete ${module}`, run: (api: Api, o?: RequestOptions) => api.delete(`${base}/${id}/${module}`, o) },
    ]),
    { name: 'delete', run: (api, o) => api.delete(`${base}/${id}`, o) },
  ];
}

/** The number of items in the collection `base` of `api`'s account. */
async function count(r: SecuredResource, api: Api, base: string): Promise<number> {
  if (r.count) return r.count(api, base);
  const res = await api.get(`${base}?limit=100`);
  assert.equal(res.status, 200);
  const key = Object.keys(res.json).find((k) => Array.isArray(res.json[k]))!;
  return res.json[key].length;
}

describeEachStore('security suite', (h) => {
  it('covers every routed resource path', async () => {
    const doc = (await (await h().newAccount()).get('/openapi.json', { noVersion: true })).json;
    const routed = Object.keys(doc.paths)
      .filter((p) => p !== '/openapi.json')
      .sort();
    const covered = securedResources
      .flatMap((r) => [r.path, `${r.path}/{id}`, ...[...(r.parts ?? []), ...Object.keys(r.modules ?? {})].map((part) => `${r.path}/{id}/${part}`)])
      .concat(readOnlyResources.flatMap((r) => [r.path, `${r.path}/{id}`, ...(r.actions ?? []).map((action) => `${r.path}/{id}/${action}`)]))
      .sort();
    assert.deepEqual(routed, covered);
  });

  for (const r of securedResources) {
    it(`${r.path}: refuses every operation without valid credentials`, async () => {
      const api = await h().newAccount();
      const base = await collectionOf(r, api);
      const body = await r.create(api);
      const item = await api.post(base, body);
      assert.equal(item.status, 201, JSON.stringify(item.json));
      const doomed = await api.post('/api_keys', {});
      await api.delete(`/api_keys/${doomed.json.id}`);

      const credentials: [string, Api, string][] = [
        ['no Authorization header', api.withToken(undefined), 'ERR_EP_200'],
        ['a malformed token', api.withToken('garbage'), 'ERR_EP_202'],
        ['a deleted key', api.withToken(doomed.json.token), 'ERR_EP_203'],
      ];
      for (const [what, client, code] of credentials) {
        for (const call of calls(r, base, item.json.id, await r.create(api))) {
          const res = await call.run(client);
          assert.equal(res.status, 401, `${call.name} with ${what}`);
          assert.equal(res.json.error_code, code, `${call.name} with ${what}`);
        }
      }
      const { token: _shownOnce, ...stored } = item.json;
      const after = (await api.get(`${base}/${item.json.id}`)).json;
      assert.deepEqual({ ...after, token: undefined }, { ...stored, token: undefined }, 'the item is unchanged');
    });

    it(`${r.path}: refuses every operation with a missing or wrong version`, async () => {
      const api = await h().newAccount();
      const base = await collectionOf(r, api);
      const item = await api.post(base, await r.create(api));
      assert.equal(item.status, 201, JSON.stringify(item.json));
      for (const call of calls(r, base, item.json.id, await r.create(api))) {
        const missing = await call.run(api, { noVersion: true });
        assert.equal(missing.status, 400, call.name);
        assert.equal(missing.json.error_code, 'ERR_EP_218', call.name);
        const wrong = await call.run(api, { headers: { 'Service-Version': '1' } });
        assert.equal(wrong.status, 400, call.name);
        assert.equal(wrong.json.error_code, 'ERR_EP_217', call.name);
      }
    });

    it(`${r.path}: answers another account's id with 404 and changes nothing`, async () => {
      const owner = await h().newAccount();
      const intruder = await h().newAccount();
      const base = await collectionOf(r, owner);
      const item = await owner.post(base, await r.create(owner));
      assert.equal(item.status, 201, JSON.stringify(item.json));
      const before = (await owner.get(`${base}/${item.json.id}`)).json;
      const n = await count(r, owner, base);
      // Under the owner's parent, creating is refused too: the parent is another account's.
      const attempts = calls(r, base, item.json.id, r.parent ? await r.create(intruder) : {}).filter(
        (c) => c.name !== 'list' && (c.name !== 'create' || r.parent),
      );
      // And the owner's item under a parent of the intruder's own is not found either.
      if (r.parent) {
        const own = await collectionOf(r, intruder);
        attempts.push(
          ...calls(r, own, item.json.id, {})
            .filter((c) => c.name !== 'create' && c.name !== 'list')
            .map((c) => ({ ...c, name: `${c.name} under own parent` })),
        );
      }
      for (const call of attempts) {
        const res = await call.run(intruder);
        assert.equal(res.status, 404, call.name);
        assert.equal(res.json.error_code, 'ERR_EP_252', call.name);
      }
      assert.deepEqual((await owner.get(`${base}/${item.json.id}`)).json, before);
      assert.equal(await count(r, owner, base), n, 'nothing was created');
      const theirs = await intruder.get(r.listedIn ?? r.path);
      assert.equal(theirs.status, 200);
      assert.ok(!JSON.stringify(theirs.json).includes(item.json.id), "not in the intruder's list");
    });

    it(`${r.path}: refuses unknown fields on create and update, writing nothing`, async () => {
      const api = await h().newAccount();
      const base = await collectionOf(r, api);
      const item = await api.post(base, await r.create(api));
      assert.equal(item.status, 201, JSON.stringify(item.json));
      const n = await count(r, api, base);
      const create = await api.post(base, { ...(await r.create(api)), sneaky: true });
      assert.equal(create.status, 400);
      assert.equal(create.json.error_code, 'ERR_EP_214');
      const update = await api.patch(`${base}/${item.json.id}`, { ...r.update, sneaky: true });
      assert.equal(update.json.error_code, 'ERR_EP_214');
      assert.equal(await count(r, api, base), n);
      const unchanged = (await api.get(`${base}/${item.json.id}`)).json;
      for (const [k, v] of Object.entries(r.update)) assert.notDeepEqual(unchanged[k], v, `${k} was not updated`);
    });

    if (r.describable) {
      it(`${r.path}: refuses oversized description (255 bytes) and metadata (4096 bytes)`, async () => {
        const api = await h().newAccount();
        const base = await collectionOf(r, api);
        const item = await api.post(base, await r.create(api));
        assert.equal(item.status, 201, JSON.stringify(item.json));
        const n = await count(r, api, base);
        const cases: [Record<string, string>, string][] = [
          [{ description: 'd'.repeat(256) }, 'ERR_EP_101'],
          [{ description: 'ü'.repeat(128) }, 'ERR_EP_101'],
          [{ metadata: 'm'.repeat(4097) }, 'ERR_EP_100'],
        ];
        for (const [fields, code] of cases) {
          const created = await api.post(base, { ...(await r.create(api)), ...fields });
          assert.equal(created.status, 400);
          assert.equal(created.json.error_code, code);
          const updated = await api.patch(`${base}/${item.json.id}`, fields);
          assert.equal(updated.status, 400);
          assert.equal(updated.json.error_code, code);
        }
        assert.equal(await count(r, api, base), n);
      });
    }
  }

  for (const r of readOnlyResources) {
    const reads = (id: string): Call[] => [
      { name: 'list', run: (api, o) => api.get(r.path, o) },
      { name: 'get', run: (api, o) => api.get(`${r.path}/${id}`, o) },
      ...(r.actions ?? []).map((action) => ({ name: action, run: (api: Api, o?: RequestOptions) => api.post(`${r.path}/${id}/${action}`, {}, o) })),
    ];

    it(`${r.path}: refuses every read without valid credentials or with a missing or wrong version`, async () => {
      const api = await h().newAccount();
      const id = await r.item(api);
      for (const call of reads(id)) {
        for (const [what, client, code] of [
          ['no Authorization header', api.withToken(undefined), 'ERR_EP_200'],
          ['a malformed token', api.withToken('garbage'), 'ERR_EP_202'],
        ] as const) {
          const res = await call.run(client);
          assert.equal(res.status, 401, `${call.name} with ${what}`);
          assert.equal(res.json.error_code, code, `${call.name} with ${what}`);
        }
        assert.equal((await call.run(api, { noVersion: true })).json.error_code, 'ERR_EP_218', call.name);
        assert.equal((await call.run(api, { headers: { 'Service-Version': '1' } })).json.error_code, 'ERR_EP_217', call.name);
      }
    });

    it(`${r.path}: answers another account's id with 404 and lists none of its items`, async () => {
      const owner = await h().newAccount();
      const intruder = await h().newAccount();
      const id = await r.item(owner);
      const res = await intruder.get(`${r.path}/${id}`);
      assert.equal(res.status, 404);
      assert.equal(res.json.error_code, 'ERR_EP_252');
      for (const action of r.actions ?? []) {
        const acted = await intruder.post(`${r.path}/${id}/${action}`, {});
        assert.equal(acted.status, 404, action);
        assert.equal(acted.json.error_code, 'ERR_EP_252', action);
      }
      const theirs = await intruder.get(r.path);
      assert.equal(theirs.status, 200);
      assert.ok(!theirs.text.includes(id), "not in the intruder's list");
    });
  }
});
