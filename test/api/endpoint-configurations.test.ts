// Endpoint configurations (legacy): the three types and nothing else, every module field present
// (null until set), a type fixed at creation, description and metadata changed by PATCH, the list
// key, and the 409 while a reserved domain still has one attached, until it is detached. Their
// modules: each the type allows set by create, PATCH and PUT (bare and wrapped), shown, read and
// deleted; any other 1621 naming the allowed ones, with nothing written; webhook_validation's
// rules; ip_policy naming IP policies (1402, and 1420 on deleting one named); logging with an
// empty list only (1623); OAuth, OIDC and SAML one at a time; and deleting a configuration
// removes its module rows.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { it } from 'node:test';
import { makeChain } from '../helpers/certs.js';
import { describeEachStore, type Api, type Harness } from '../helpers/harness.js';
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

/** The modules each type allows (docs/api.md, "Endpoint configurations"). */
const HTTP_MODULES = [
  'circuit_breaker',
  'compression',
  'request_headers',
  'response_headers',
  'ip_policy',
  'webhook_validation',
  'oauth',
  'logging',
  'saml',
  'oidc',
];
const ALLOWED: Record<string, string[]> = {
  http: HTTP_MODULES,
  https: [...HTTP_MODULES, 'mutual_tls', 'tls_termination'],
  tcp: ['ip_policy', 'logging'],
};
const SETTABLE = ALLOWED.https!;
const ec = (api: Api, body: Record<string, unknown>) => created(api, '/endpoint_configurations', body);
const ipp = async (api: Api) => (await created(api, '/ip_policies', {})).id as string;
let caPem: Promise<string> | undefined;
const ca = async (api: Api) => {
  caPem ??= makeChain().then((c) => c.root.certPem);
  return (await created(api, '/certificate_authorities', { ca_pem: await caPem })).id as string;
};
const SESSION = { enabled: true, options_passthrough: false, cookie_prefix: 'edgeplane.', inactivity_timeout: 0, maximum_duration: 0 };
const OAUTH = { provider: { google: {} } };
const OIDC = { issuer: 'https://accounts.example.com', client_id: 'edgeplane-web', client_secret: 'oidc-secret' };
const SAML = {
  idp_metadata:
    '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.example.com/metadata">' +
    '<md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"/></md:EntityDescriptor>',
};
const EVENT_STREAM = 'esm_000000000000000000000000000';

/** The stored module rows and refs of an owner. */
async function moduleRows(h: Harness, ownerId: string) {
  const db = h.deps.store.db;
  return {
    modules: (await db.selectFrom('modules').select('name').where('owner_id', '=', ownerId).orderBy('name').execute()).map((r) => r.name),
    refs: (await db.selectFrom('module_refs').select('target_id').where('owner_id', '=', ownerId).orderBy('name').orderBy('position').execute()).map(
      (r) => r.target_id,
    ),
  };
}

describeEachStore('endpoint configurations', (h) => {
  for (const type of ['http', 'https', 'tcp']) {
    it(`${type}: created with its type, description and metadata, and every module field present and null when none is set`, async () => {
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
  /** A request body for each module, and its response (undefined: checked by the caller). */
  async function moduleCases(api: Api): Promise<Record<string, [Record<string, unknown>, Record<string, unknown> | undefined]>> {
    const ref = (path: string, id: string) => ({ id, uri: `${h().baseUrl}${path}/${id}` });
    const [p, c] = [await ipp(api), await ca(api)];
    return {
      circuit_breaker: [
        { error_threshold_percentage: 0.3 },
        { enabled: true, tripped_duration: 10, rolling_window: 10, num_buckets: 10, volume_threshold: 20, error_threshold_percentage: 0.3 },
      ],
      compression: [{}, { enabled: true }],
      request_headers: [{ add: { 'X-A': '1' } }, { enabled: true, add: { 'x-a': '1' }, remove: [] }],
      response_headers: [{ remove: ['server'] }, { enabled: true, add: {}, remove: ['server'] }],
      ip_policy: [{ ip_policy_ids: [p] }, { enabled: true, ip_policies: [ref('/ip_policies', p)] }],
      webhook_validation: [
        { provider: 'stripe', secret: 'whsec' },
        { enabled: true, provider: 'stripe', secret: 'whsec' },
      ],
      oauth: [
        OAUTH,
        {
          ...SESSION,
          auth_check_interval: 0,
          provider: { google: { client_id: null, client_secret: null, scopes: [], email_addresses: [], email_domains: [] } },
        },
      ],
      logging: [{ event_stream_ids: [] }, { enabled: true, event_streams: [] }],
      saml: [SAML, undefined],
      oidc: [OIDC, { ...SESSION, issuer: OIDC.issuer, client_id: OIDC.client_id, client_secret: null, scopes: [] }],
      mutual_tls: [{ certificate_authority_ids: [c] }, { enabled: true, certificate_authorities: [ref('/certificate_authorities', c)] }],
      tls_termination: [{ terminate_at: 'upstream' }, { enabled: true, terminate_at: 'upstream', min_version: null }],
    };
  }

  /** The response matches the expected module (for saml, the fields sent and the service provider made). */
  function assertModule(name: string, shown: Record<string, unknown>, expected: Record<string, unknown> | undefined, message: string) {
    if (expected) return assert.deepEqual(shown, expected, message);
    assert.equal(name, 'saml');
    assert.equal(shown.idp_metadata, SAML.idp_metadata, message);
    assert.equal(shown.enabled, true, message);
    assert.match(String(shown.entity_id), /\/saml\/sp_/, message);
  }

  for (const type of ['http', 'https', 'tcp']) {
    it(`${type}: each module the type allows is set by create, PATCH and PUT (bare and wrapped), shown, read by GET and removed by DELETE`, async () => {
      const api = await h().newAccount();
      const cases = await moduleCases(api);
      assert.deepEqual(Object.keys(cases).sort(), [...SETTABLE].sort(), 'every module is covered');
      const blank = await ec(api, { type });
      const path = `/endpoint_configurations/${blank.id}`;
      for (const m of ALLOWED[type]!) {
        const [body, expected] = cases[m]!;
        const made = await ec(api, { type, [m]: body });
        assertModule(m, made[m], expected, `${type} create ${m}`);
        for (const other of [...SETTABLE, 'backend', 'basic_auth']) if (other !== m) assert.equal(made[other], null, `${type} ${m}: ${other}`);
        assert.deepEqual((await api.get(`/endpoint_configurations/${made.id}/${m}`)).json, made[m]);
        assert.deepEqual(await stored(api, made.id), made);
        assert.deepEqual((await moduleRows(h(), made.id)).modules, [m]);

        const patched = await api.patch(path, { [m]: body });
        assert.equal(patched.status, 200, `${type} PATCH ${m}: ${patched.text}`);
        assertModule(m, patched.json[m], expected, `${type} PATCH ${m}`);
        assert.equal((await api.delete(`${path}/${m}`)).status, 204);
        await assertError(await api.get(`${path}/${m}`), 404, 'ERR_EP_7200', m);
        assert.equal((await stored(api, blank.id))[m], null);

        const put = await api.put(`${path}/${m}`, body);
        assert.equal(put.status, 200, `${type} PUT ${m}: ${put.text}`);
        assertModule(m, put.json, expected, `${type} PUT ${m}`);
        const wrapped = await api.put(`${path}/${m}`, { id: blank.id, module: { ...body, enabled: false } });
        assert.equal(wrapped.status, 200, `${type} PUT wrapped ${m}: ${wrapped.text}`);
        assert.equal(wrapped.json.enabled, false);
        assert.deepEqual((await api.get(`${path}/${m}`)).json, wrapped.json);
        assert.deepEqual((await stored(api, blank.id))[m], wrapped.json);
        assert.deepEqual((await moduleRows(h(), blank.id)).modules, [m]);
        assert.equal((await api.delete(`${path}/${m}`)).status, 204);
        assert.deepEqual(await moduleRows(h(), blank.id), { modules: [], refs: [] });
      }
      assert.deepEqual(await stored(api, blank.id), blank);
    });
  }

  it('a module the type does not allow is 400 1621 naming the allowed ones, on create, PATCH and PUT, writing nothing', async () => {
    const api = await h().newAccount();
    const cases = await moduleCases(api);
    for (const type of ['http', 'tcp']) {
      const refused = SETTABLE.filter((m) => !ALLOWED[type]!.includes(m));
      assert.ok(refused.length > 0);
      const blank = await ec(api, { type });
      const path = `/endpoint_configurations/${blank.id}`;
      const before = await count(api);
      for (const m of refused) {
        const [body] = cases[m]!;
        const checks = [
          await api.post('/endpoint_configurations', { type, [m]: body }),
          await api.patch(path, { description: 'changed', [m]: body }),
          await api.put(`${path}/${m}`, body),
          await api.put(`${path}/${m}`, { id: blank.id, module: body }),
        ];
        for (const res of checks) {
          assertError(res, 400, 'ERR_EP_1621', `the ${m} module`);
          assert.ok(res.json.msg.includes(`type ${type}`), res.json.msg);
          for (const allowed of ALLOWED[type]!) assert.ok(res.json.msg.includes(allowed), `${res.json.msg} should name ${allowed}`);
        }
        await assertError(await api.get(`${path}/${m}`), 404, 'ERR_EP_7200');
      }
      // An allowed module beside a refused one is not written either.
      await assertError(await api.patch(path, { ip_policy: cases.ip_policy![0], [refused[0]!]: cases[refused[0]!]![0] }), 400, 'ERR_EP_1621', refused[0]);
      await assertError(await api.post('/endpoint_configurations', { type, logging: cases.logging![0], tls_termination: {} }), 400, 'ERR_EP_1621');
      assert.equal(await count(api), before);
      assert.deepEqual(await stored(api, blank.id), blank);
      assert.deepEqual(await moduleRows(h(), blank.id), { modules: [], refs: [] });
    }
  });

  it('webhook_validation: unknown provider (7030), sns with a secret (7026), github without one (7027), none (7029) write nothing; TWILIO is echoed as sent', async () => {
    const api = await h().newAccount();
    const config = await ec(api, { type: 'https' });
    const path = `/endpoint_configurations/${config.id}`;
    const bad: [Record<string, unknown>, string, string?][] = [
      [{ provider: 'nope', secret: 's' }, 'ERR_EP_7030', "'nope'"],
      [{ provider: 'sns', secret: 'shh' }, 'ERR_EP_7026', 'SNS'],
      [{ provider: 'github' }, 'ERR_EP_7027', 'github'],
      [{ provider: 'github', secret: '' }, 'ERR_EP_7027', 'github'],
      [{ secret: 's' }, 'ERR_EP_7029', 'webhook_validation.provider'],
      [{ provider: 'sendgrid', secret: 'not-a-key' }, 'ERR_EP_7028'],
      [{ provider: 'github', secret: 'x'.repeat(4097) }, 'ERR_EP_7154', '4097'],
    ];
    for (const [module, code, mentions] of bad) {
      await assertError(await api.post('/endpoint_configurations', { type: 'http', webhook_validation: module }), 400, code, mentions);
      await assertError(await api.patch(path, { description: 'changed', webhook_validation: module }), 400, code, mentions);
      await assertError(await api.put(`${path}/webhook_validation`, module), 400, code, mentions);
    }
    assert.equal(await count(api), 1);
    assert.deepEqual(await stored(api, config.id), config);
    assert.deepEqual(await moduleRows(h(), config.id), { modules: [], refs: [] });
    const twilio = await api.put(`${path}/webhook_validation`, { provider: 'TWILIO', secret: 'twilio-token' });
    assert.equal(twilio.status, 200, twilio.text);
    assert.deepEqual(twilio.json, { enabled: true, provider: 'TWILIO', secret: 'twilio-token' });
    assert.deepEqual((await stored(api, config.id)).webhook_validation, twilio.json);
    const sns = await api.patch(path, { webhook_validation: { provider: 'sns' } });
    assert.deepEqual(sns.json.webhook_validation, { enabled: true, provider: 'sns', secret: '' });
  });

  it('ip_policy names IP policies of the account (1402 writes nothing); a named policy cannot be deleted (1420 naming it) until it is named no more', async () => {
    const api = await h().newAccount();
    const other = await h().newAccount();
    const [p1, p2] = [await ipp(api), await ipp(api)];
    const ref = (id: string) => ({ id, uri: `${h().baseUrl}/ip_policies/${id}` });
    const config = await ec(api, { type: 'tcp', ip_policy: { ip_policy_ids: [p2, p1] } });
    const path = `/endpoint_configurations/${config.id}`;
    assert.deepEqual(config.ip_policy, { enabled: true, ip_policies: [ref(p2), ref(p1)] });
    assert.deepEqual(await moduleRows(h(), config.id), { modules: ['ip_policy'], refs: [p2, p1] });
    for (const id of [await ipp(other), 'ipp_000000000000000000000000000']) {
      await assertError(await api.post('/endpoint_configurations', { type: 'http', ip_policy: { ip_policy_ids: [id] } }), 400, 'ERR_EP_1402', id);
      await assertError(await api.patch(path, { ip_policy: { ip_policy_ids: [p1, id] } }), 400, 'ERR_EP_1402', id);
      await assertError(await api.put(`${path}/ip_policy`, { ip_policy_ids: [id] }), 400, 'ERR_EP_1402', id);
    }
    assert.equal(await count(api), 1);
    assert.deepEqual(await stored(api, config.id), config);
    for (const p of [p1, p2]) {
      await assertError(await api.delete(`/ip_policies/${p}`), 409, 'ERR_EP_1420', config.id);
      assert.equal((await api.get(`/ip_policies/${p}`)).status, 200);
    }
    const put = await api.put(`${path}/ip_policy`, { enabled: false, ip_policy_ids: [p2] });
    assert.deepEqual(put.json, { enabled: false, ip_policies: [ref(p2)] });
    assert.equal((await api.delete(`/ip_policies/${p1}`)).status, 204, 'named no more');
    await assertError(await api.delete(`/ip_policies/${p2}`), 409, 'ERR_EP_1420', config.id);
    assert.equal((await api.delete(`${path}/ip_policy`)).status, 204);
    assert.equal((await api.delete(`/ip_policies/${p2}`)).status, 204);
  });

  it('logging takes an empty list of event streams; an id is 400 1623 on create, PATCH and PUT, writing nothing', async () => {
    const api = await h().newAccount();
    const config = await ec(api, { type: 'tcp', logging: { event_stream_ids: [] } });
    const path = `/endpoint_configurations/${config.id}`;
    assert.deepEqual(config.logging, { enabled: true, event_streams: [] });
    for (const ids of [[EVENT_STREAM], ['esm_other']]) {
      await assertError(await api.post('/endpoint_configurations', { type: 'http', logging: { event_stream_ids: ids } }), 400, 'ERR_EP_1623', ids[0]);
      await assertError(await api.patch(path, { logging: { enabled: false, event_stream_ids: ids } }), 400, 'ERR_EP_1623', ids[0]);
      await assertError(await api.put(`${path}/logging`, { event_stream_ids: ids }), 400, 'ERR_EP_1623', ids[0]);
    }
    await assertError(await api.put(`${path}/logging`, {}), 400, 'ERR_EP_215', 'event_stream_ids');
    assert.equal(await count(api), 1);
    assert.deepEqual(await stored(api, config.id), config);
    assert.deepEqual(await moduleRows(h(), config.id), { modules: ['logging'], refs: [] });
    const off = await api.put(`${path}/logging`, { enabled: false, event_stream_ids: [] });
    assert.deepEqual(off.json, { enabled: false, event_streams: [] });
  });

  it('oauth, oidc and saml exclude each other (7201; 7202 in one request); client secrets are never shown nor stored in plain text', async () => {
    const api = await h().newAccount();
    const secret = `oauth-secret-${randomBytes(8).toString('hex')}`;
    const oauth = { provider: { github: { client_id: 'gh-client', client_secret: secret } } };
    const config = await ec(api, { type: 'http', oauth });
    const path = `/endpoint_configurations/${config.id}`;
    assert.equal(config.oauth.provider.github.client_secret, null);
    await assertError(await api.put(`${path}/oidc`, OIDC), 409, 'ERR_EP_7201', 'oauth');
    await assertError(await api.patch(path, { saml: SAML }), 409, 'ERR_EP_7201', 'oauth');
    await assertError(await api.post('/endpoint_configurations', { type: 'https', oauth, oidc: OIDC }), 400, 'ERR_EP_7202');
    assert.equal(await count(api), 1);
    assert.deepEqual(await moduleRows(h(), config.id), { modules: ['oauth'], refs: [] });
    for (const res of [await api.get(path), await api.get(`${path}/oauth`), await api.get('/endpoint_configurations')]) {
      assert.ok(!res.text.includes(secret), res.text);
    }
    const row = await h().deps.store.db.selectFrom('modules').select('value').where('owner_id', '=', config.id).executeTakeFirstOrThrow();
    assert.ok(!row.value.includes(secret), 'the client secret is sealed');
    assert.equal((await api.delete(`${path}/oauth`)).status, 204);
    const oidc = await api.put(`${path}/oidc`, OIDC);
    assert.equal(oidc.status, 200, oidc.text);
    assert.ok(!oidc.text.includes(OIDC.client_secret), oidc.text);
  });

  it('deleting an endpoint configuration removes its module rows; what they named then deletes with 204', async () => {
    const api = await h().newAccount();
    const [p, c] = [await ipp(api), await ca(api)];
    const config = await ec(api, {
      type: 'https',
      ip_policy: { ip_policy_ids: [p] },
      mutual_tls: { certificate_authority_ids: [c] },
      oauth: OAUTH,
      request_headers: { add: { 'X-A': '1' } },
      logging: { event_stream_ids: [] },
    });
    const keep = await ec(api, { type: 'https', compression: {} });
    assert.deepEqual(await moduleRows(h(), config.id), {
      modules: ['ip_policy', 'logging', 'mutual_tls', 'oauth', 'request_headers'],
      refs: [p, c], // by module name: ip_policy, then mutual_tls
    });
    await assertError(await api.delete(`/certificate_authorities/${c}`), 409, 'ERR_EP_1958', config.id);
    assert.equal((await api.delete(`/endpoint_configurations/${config.id}`)).status, 204);
    await assertError(await api.get(`/endpoint_configurations/${config.id}/oauth`), 404, 'ERR_EP_252');
    assert.deepEqual(await moduleRows(h(), config.id), { modules: [], refs: [] });
    assert.deepEqual(await moduleRows(h(), keep.id), { modules: ['compression'], refs: [] }, 'another configuration keeps its modules');
    assert.equal((await api.delete(`/ip_policies/${p}`)).status, 204);
    assert.equal((await api.delete(`/certificate_authorities/${c}`)).status, 204);
  });
});
