// Endpoint configurations (legacy): the three types and nothing else, every module field present
// and null, a type fixed at creation, description and metadata changed by PATCH, the list key,
// and the 409 while a reserved domain still has one attached, until it is detached.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { it } from 'node:test';
import { describeEachStore, type Api } from '../helpers/harness.js';
import { assertError, created } from '../helpers/assertions.js';

const MODULES = [
  'basic_auth',
  'backend',
  'circuit_breaker',
  'compression',
  'ip_policy',
  'logging',
  'mutual_tls',
  'oauth',
  'oidc',
  'request_headers',
  'response_headers',
  'saml',
  'tls_termination',
  'webhook_validation',
];

const count = async (api: Api) => (await api.get('/endpoint_configurations')).json.endpoint_configurations.length as number;
const stored = async (api: Api, id: string) => (await api.get(`/endpoint_configurations/${id}`)).json;
const domain = () => `${randomBytes(4).toString('hex')}.example.com`;

describeEachStore('endpoint configurations', (h) => {
  for (const type of ['http', 'https', 'tcp']) {
    it(`${type}: created with its type, description and metadata, and every module field present and null`, async () => {
      const api = await h().newAccount();
      const ec = await created(api, '/endpoint_configurations', { type, description: `${type} config`, metadata: '{"v":1}' });
      assert.match(ec.id, /^ec_/);
      assert.equal(ec.uri, `${h().baseUrl}/endpoint_configurations/${ec.id}`);
      assert.equal(ec.type, type);
      assert.equal(ec.description, `${type} config`);
      assert.equal(ec.metadata, '{"v":1}');
      assert.match(ec.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.deepEqual(Object.keys(ec).sort(), [...MODULES, 'created_at', 'description', 'id', 'metadata', 'type', 'uri'].sort());
      for (const m of MODULES) assert.equal(ec[m], null, `${m} is null`);
      assert.deepEqual(await stored(api, ec.id), ec);
    });
  }

  it('refuses a type other than http, https or tcp (1622) and a missing one; nothing written', async () => {
    const api = await h().newAccount();
    for (const type of ['ftp', 'HTTP', 'tls', '']) {
      await assertError(await api.post('/endpoint_configurations', { type }), 400, 'ERR_EP_1622', `'${type}'`);
    }
    await assertError(await api.post('/endpoint_configurations', {}), 400, 'ERR_EP_215', 'type');
    await assertError(await api.post('/endpoint_configurations', { type: 1 }), 400, 'ERR_EP_215', 'type');
    assert.equal(await count(api), 0);
  });

  it('PATCH: description and metadata change; the type is fixed (251) and unchanged', async () => {
    const api = await h().newAccount();
    const ec = await created(api, '/endpoint_configurations', { type: 'http', description: 'a', metadata: 'm1' });
    await assertError(await api.patch(`/endpoint_configurations/${ec.id}`, { type: 'https' }), 400, 'ERR_EP_251', 'type');
    await assertError(await api.patch(`/endpoint_configurations/${ec.id}`, { type: 'https', description: 'b' }), 400, 'ERR_EP_251', 'type');
    assert.deepEqual(await stored(api, ec.id), ec, 'the refused PATCHes changed nothing');

    const patched = await api.patch(`/endpoint_configurations/${ec.id}`, { description: 'b' });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.json.description, 'b');
    assert.equal(patched.json.metadata, 'm1', 'an absent field is unchanged');
    assert.equal(patched.json.type, 'http');
    const remetadata = await api.patch(`/endpoint_configurations/${ec.id}`, { metadata: '{"v":2}' });
    assert.equal(remetadata.json.metadata, '{"v":2}');
    assert.deepEqual(await stored(api, ec.id), { ...ec, description: 'b', metadata: '{"v":2}' });
  });

  it('list: under endpoint_configurations, newest first, only the caller’s own', async () => {
    const api = await h().newAccount();
    const other = await h().newAccount();
    const a = await created(api, '/endpoint_configurations', { type: 'http' });
    const b = await created(api, '/endpoint_configurations', { type: 'tcp' });
    await created(other, '/endpoint_configurations', { type: 'https' });
    const list = await api.get('/endpoint_configurations');
    assert.deepEqual(Object.keys(list.json).sort(), ['endpoint_configurations', 'next_page_uri', 'uri']);
    assert.equal(list.json.uri, `${h().baseUrl}/endpoint_configurations`);
    assert.deepEqual(
      list.json.endpoint_configurations.map((e: { id: string }) => e.id),
      [b.id, a.id],
    );
    assert.equal((await other.get(`/endpoint_configurations/${a.id}`)).status, 404);
  });

  it('delete: 409 (1619) naming the reserved domain while attached; 204 once detached', async () => {
    const api = await h().newAccount();
    const http = await created(api, '/endpoint_configurations', { type: 'http' });
    const https = await created(api, '/endpoint_configurations', { type: 'https' });
    const rd = await created(api, '/reserved_domains', {
      domain: domain(),
      http_endpoint_configuration_id: http.id,
      https_endpoint_configuration_id: https.id,
    });
    assert.equal(rd.http_endpoint_configuration.id, http.id);

    for (const ec of [http, https]) {
      await assertError(await api.delete(`/endpoint_configurations/${ec.id}`), 409, 'ERR_EP_1619', rd.id);
      assert.deepEqual(await stored(api, ec.id), ec, 'still there');
    }

    const detached = await api.delete(`/reserved_domains/${rd.id}/http_endpoint_configuration`);
    assert.equal(detached.status, 204, detached.text);
    const after = (await api.get(`/reserved_domains/${rd.id}`)).json;
    assert.equal(after.http_endpoint_configuration, null);
    assert.equal(after.https_endpoint_configuration.id, https.id, 'only the http one is detached');

    assert.equal((await api.delete(`/endpoint_configurations/${http.id}`)).status, 204);
    assert.equal((await api.get(`/endpoint_configurations/${http.id}`)).status, 404);
    await assertError(await api.delete(`/endpoint_configurations/${https.id}`), 409, 'ERR_EP_1619', rd.id);
    assert.equal((await api.delete(`/reserved_domains/${rd.id}`)).status, 204);
    assert.equal((await api.delete(`/endpoint_configurations/${https.id}`)).status, 204, 'free once its domain is gone');
  });
});
