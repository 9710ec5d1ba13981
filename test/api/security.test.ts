// The shared security suite, run against every resource route: credentials, versions,
// isolation between accounts, unknown fields and size limits. Nothing refused is written.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachStore, type Api, type RequestOptions } from '../helpers/harness.js';
import { securedResources, type SecuredResource } from '../helpers/secured-resources.js';

type Call = { name: string; run: (api: Api, o?: RequestOptions) => Promise<{ status: number; json: { error_code?: string } }> };

/** The five operations of a resource, on an existing item. */
function calls(r: SecuredResource, id: string, createBody: Record<string, unknown>): Call[] {
  return [
    { name: 'create', run: (api, o) => api.post(r.path, createBody, o) },
    { name: 'list', run: (api, o) => api.get(r.path, o) },
    { name: 'get', run: (api, o) => api.get(`${r.path}/${id}`, o) },
    { name: 'update', run: (api, o) => api.patch(`${r.path}/${id}`, r.update, o) },
    ...(r.parts ?? []).map((part) => ({ name: `detach ${part}`, run: (api: Api, o?: RequestOptions) => api.delete(`${r.path}/${id}/${part}`, o) })),
    ...Object.entries(r.modules ?? {}).flatMap(([module, body]) => [
      { name: `put ${module}`, run: (api: Api, o?: RequestOptions) => api.put(`${r.path}/${id}/${module}`, body, o) },
      { name: `get ${module}`, run: (api: Api, o?: RequestOptions) => api.get(`${r.path}/${id}/${module}`, o) },
      { name: `delete ${module}`, run: (api: Api, o?: RequestOptions) => api.delete(`${r.path}/${id}/${module}`, o) },
    ]),
    { name: 'delete', run: (api, o) => api.delete(`${r.path}/${id}`, o) },
  ];
}

async function count(api: Api, path: string): Promise<number> {
  const res = await api.get(`${path}?limit=100`);
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
      .sort();
    assert.deepEqual(routed, covered);
  });

  for (const r of securedResources) {
    it(`${r.path}: refuses every operation without valid credentials`, async () => {
      const api = await h().newAccount();
      const body = await r.create(api);
      const item = await api.post(r.path, body);
      assert.equal(item.status, 201, JSON.stringify(item.json));
      const doomed = await api.post('/api_keys', {});
      await api.delete(`/api_keys/${doomed.json.id}`);

      const credentials: [string, Api, string][] = [
        ['no Authorization header', api.withToken(undefined), 'ERR_EP_200'],
        ['a malformed token', api.withToken('garbage'), 'ERR_EP_202'],
        ['a deleted key', api.withToken(doomed.json.token), 'ERR_EP_203'],
      ];
      for (const [what, client, code] of credentials) {
        for (const call of calls(r, item.json.id, await r.create(api))) {
          const res = await call.run(client);
          assert.equal(res.status, 401, `${call.name} with ${what}`);
          assert.equal(res.json.error_code, code, `${call.name} with ${what}`);
        }
      }
      const { token: _shownOnce, ...stored } = item.json;
      const after = (await api.get(`${r.path}/${item.json.id}`)).json;
      assert.deepEqual({ ...after, token: undefined }, { ...stored, token: undefined }, 'the item is unchanged');
    });

    it(`${r.path}: refuses every operation with a missing or wrong version`, async () => {
      const api = await h().newAccount();
      const item = await api.post(r.path, await r.create(api));
      for (const call of calls(r, item.json.id, await r.create(api))) {
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
      const item = await owner.post(r.path, await r.create(owner));
      const before = (await owner.get(`${r.path}/${item.json.id}`)).json;
      for (const call of calls(r, item.json.id, {}).filter((c) => c.name !== 'create' && c.name !== 'list')) {
        const res = await call.run(intruder);
        assert.equal(res.status, 404, call.name);
        assert.equal(res.json.error_code, 'ERR_EP_252', call.name);
      }
      assert.deepEqual((await owner.get(`${r.path}/${item.json.id}`)).json, before);
      const theirs = await intruder.get(r.path);
      assert.ok(!JSON.stringify(theirs.json).includes(item.json.id), "not in the intruder's list");
    });

    it(`${r.path}: refuses unknown fields on create and update, writing nothing`, async () => {
      const api = await h().newAccount();
      const item = await api.post(r.path, await r.create(api));
      const n = await count(api, r.path);
      const create = await api.post(r.path, { ...(await r.create(api)), sneaky: true });
      assert.equal(create.status, 400);
      assert.equal(create.json.error_code, 'ERR_EP_214');
      const update = await api.patch(`${r.path}/${item.json.id}`, { ...r.update, sneaky: true });
      assert.equal(update.json.error_code, 'ERR_EP_214');
      assert.equal(await count(api, r.path), n);
      const unchanged = (await api.get(`${r.path}/${item.json.id}`)).json;
      for (const [k, v] of Object.entries(r.update)) assert.notDeepEqual(unchanged[k], v, `${k} was not updated`);
    });

    if (r.describable) {
      it(`${r.path}: refuses oversized description (255 bytes) and metadata (4096 bytes)`, async () => {
        const api = await h().newAccount();
        const item = await api.post(r.path, await r.create(api));
        const n = await count(api, r.path);
        const cases: [Record<string, string>, string][] = [
          [{ description: 'd'.repeat(256) }, 'ERR_EP_101'],
          [{ description: 'ü'.repeat(128) }, 'ERR_EP_101'],
          [{ metadata: 'm'.repeat(4097) }, 'ERR_EP_100'],
        ];
        for (const [fields, code] of cases) {
          const created = await api.post(r.path, { ...(await r.create(api)), ...fields });
          assert.equal(created.status, 400);
          assert.equal(created.json.error_code, code);
          const updated = await api.patch(`${r.path}/${item.json.id}`, fields);
          assert.equal(updated.status, 400);
          assert.equal(updated.json.error_code, code);
        }
        assert.equal(await count(api, r.path), n);
      });
    }
  }
});
