// The audit log: every mutation over the API (create, update, delete, detach, module PUT and
// DELETE) is recorded once, with its operation id, the resource, the key and its owner, in the
// mutation's transaction (a refused or rolled-back mutation records nothing); GET /audit_events
// pages like every list, shows an account its own events only and admins only; no request body,
// so no secret sent in one, ever reaches the table.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { it } from 'node:test';
import { assertError, created } from '../helpers/assertions.js';
import { describeEachStore, type Api, type Harness } from '../helpers/harness.js';

const KEYS = ['created_at', 'id', 'key_id', 'operation', 'parent_id', 'principal_id', 'resource_id', 'uri'];

interface Event {
  id: string;
  uri: string;
  created_at: string;
  operation: string;
  resource_id: string;
  parent_id: string | null;
  key_id: string;
  principal_id: string;
}

/** The account's audit events, newest first (one page of up to 100). */
async function events(api: Api): Promise<Event[]> {
  const res = await api.get('/audit_events');
  assert.equal(res.status, 200, res.text);
  return res.json.audit_events;
}

/** The events as `operation resource_id`, oldest first: the order the mutations were made in. */
async function trail(api: Api): Promise<string[]> {
  return (await events(api)).reverse().map((e) => `${e.operation} ${e.resource_id}`);
}

/** Every stored row of the account's audit events, as raw text: what a secret must never be part of. */
async function rawRows(h: Harness, accountId: string): Promise<string> {
  return JSON.stringify(await h.deps.store.db.selectFrom('audit_events').selectAll().where('account_id', '=', accountId).execute());
}

describeEachStore('audit events', (h) => {
  it('records a create, an update and a delete once each, with the operation, resource, key and principal', async () => {
    const api = await h().newAccount();
    const ipp = await created(api, '/ip_policies', { description: 'office' });
    assert.equal((await api.patch(`/ip_policies/${ipp.id}`, { description: 'hq' })).status, 200);
    assert.equal((await api.delete(`/ip_policies/${ipp.id}`)).status, 204);

    const list = await events(api);
    assert.deepEqual(
      list.map((e) => e.operation),
      ['ip_policy.delete', 'ip_policy.update', 'ip_policy.create'],
    );
    for (const e of list) {
      assert.deepEqual(Object.keys(e).sort(), KEYS);
      assert.match(e.id, /^aud_[0-9A-Za-z]{27}$/);
      assert.equal(e.uri, `${h().baseUrl}/audit_events/${e.id}`);
      assert.match(e.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
      assert.deepEqual([e.resource_id, e.parent_id, e.key_id, e.principal_id], [ipp.id, null, api.info.keyId, api.info.userId]);
      assert.deepEqual((await api.get(`/audit_events/${e.id}`)).json, e);
    }
  });

  it('records module PUTs and DELETEs, detaches and a kind under a parent, named as the operation ids of the OpenAPI document', async () => {
    const api = await h().newAccount();
    const edge = await created(api, '/edges/tcp', {});
    const backend = await created(api, '/backends/tunnel_group', { labels: { app: 'db' } });
    assert.equal((await api.put(`/edges/tcp/${edge.id}/backend`, { backend_id: backend.id })).status, 200);
    assert.equal((await api.delete(`/edges/tcp/${edge.id}/backend`)).status, 204);
    const domain = await created(api, '/reserved_domains', { domain: `${randomBytes(4).toString('hex')}.example.com`, certificate_management_policy: {} });
    assert.equal((await api.delete(`/reserved_domains/${domain.id}/certificate_management_policy`)).status, 204);
    // Detaching what is not attached is accepted (204), and so recorded too.
    assert.equal((await api.delete(`/reserved_domains/${domain.id}/certificate_management_policy`)).status, 204);
    const https = await created(api, '/edges/https', {});
    const route = await created(api, `/edges/https/${https.id}/routes`, { match_type: 'path_prefix', match: '/' });
    assert.equal((await api.put(`/edges/https/${https.id}/routes/${route.id}/compression`, { enabled: true })).status, 200);

    assert.deepEqual(await trail(api), [
      `tcp_edge.create ${edge.id}`,
      `tunnel_group_backend.create ${backend.id}`,
      `tcp_edge.backend_module.replace ${edge.id}`,
      `tcp_edge.backend_module.delete ${edge.id}`,
      `reserved_domain.create ${domain.id}`,
      `reserved_domain.delete_certificate_management_policy ${domain.id}`,
      `reserved_domain.delete_certificate_management_policy ${domain.id}`,
      `https_edge.create ${https.id}`,
      `https_edge_route.create ${route.id}`,
      `https_edge_route.compression_module.replace ${route.id}`,
    ]);
    const list = await events(api);
    assert.deepEqual(
      list.slice(0, 2).map((e) => e.parent_id),
      [https.id, https.id],
      "a route's events name its edge",
    );
    assert.ok(
      list.slice(2).every((e) => e.parent_id === null),
      'kinds without a parent name none',
    );
    const doc = (await api.get('/openapi.json', { noVersion: true })).json as { paths: Record<string, Record<string, { operationId: string }>> };
    const operationIds = new Set(Object.values(doc.paths).flatMap((methods) => Object.values(methods).map((op) => op.operationId)));
    for (const e of list) assert.ok(operationIds.has(e.operation), `${e.operation} is an operation id of the document`);
  });

  it('records the key and the owner of each request: another user, a bot user', async () => {
    const api = await h().newAccount();
    const developer = await api.asNewUser('developer');
    const bot = await created(api, '/bot_users', { name: `bot-${randomBytes(3).toString('hex')}` });
    const botKey = await created(api, '/api_keys', { owner_id: bot.id });
    const byDeveloper = await created(developer, '/ip_policies', {});
    const byBot = await created(api.withToken(botKey.token), '/ip_policies', {});
    const [botEvent, developerEvent] = await events(api);
    assert.deepEqual([botEvent!.resource_id, botEvent!.key_id, botEvent!.principal_id], [byBot.id, botKey.id, bot.id]);
    assert.deepEqual(
      [developerEvent!.resource_id, developerEvent!.key_id, developerEvent!.principal_id],
      [byDeveloper.id, developer.info.keyId, developer.info.userId],
    );
  });

  it('records nothing for a refused mutation: 400, 403, 404 and 409, in the body or in the transaction', async () => {
    const api = await h().newAccount();
    const ipp = await created(api, '/ip_policies', {});
    await created(api, '/ip_restrictions', { type: 'dashboard', ip_policy_ids: [ipp.id] });
    const domain = await created(api, '/reserved_domains', { domain: `${randomBytes(4).toString('hex')}.example.com`, certificate_management_policy: {} });
    const before = await trail(api);
    const readOnly = await api.asNewUser('read_only');

    await assertError(await api.post('/ip_policy_rules', { ip_policy_id: ipp.id, cidr: '10.1.2.3/8', action: 'allow' }), 400, 'ERR_EP_1409');
    await assertError(await api.delete(`/reserved_domains/${domain.id}/certificate`), 400, 'ERR_EP_436');
    await assertError(await readOnly.patch(`/ip_policies/${ipp.id}`, { description: 'x' }), 403, 'ERR_EP_635');
    await assertError(await api.patch(`/ip_policies/ipp_${'0'.repeat(27)}`, { description: 'x' }), 404, 'ERR_EP_252');
    assert.equal((await api.delete(`/ip_policies/${ipp.id}`)).status, 409, 'an IP restriction still uses it');
    await assertError(await api.put(`/edges/tcp/edgtcp_${'0'.repeat(27)}/backend`, { backend_id: `bkdtg_${'0'.repeat(27)}` }), 404, 'ERR_EP_252');

    assert.deepEqual(await trail(api), before);
  });

  it('records nothing for a mutation rolled back after its row and its event were written', async () => {
    const api = await h().newAccount();
    const addr = async () => (await created(api, '/reserved_addrs', {})).addr as string;
    const [mine, free] = [await addr(), await addr()];
    const edge = await created(api, '/edges/tcp', { hostports: [mine] });
    const before = await trail(api);
    // The hostports are claimed after the edge and its event are written: the claim's 409 undoes both.
    await assertError(await api.post('/edges/tcp', { hostports: [free, mine] }), 409, 'ERR_EP_7122', edge.id);
    const other = await created(api, '/edges/tcp', {});
    await assertError(await api.patch(`/edges/tcp/${other.id}`, { description: 'x', hostports: [mine] }), 409, 'ERR_EP_7122', edge.id);
    assert.deepEqual(await trail(api), [...before, `tcp_edge.create ${other.id}`]);
    assert.equal((await api.get('/edges/tcp')).json.tcp_edges.length, 2);
  });

  it('pages newest first with limit, before_id, uri and next_page_uri', async () => {
    const api = await h().newAccount();
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await created(api, '/ip_policies', {})).id);
    const seen: Event[] = [];
    let next: string | null = `${h().baseUrl}/audit_events?limit=2`;
    const pages: number[] = [];
    while (next) {
      const res = await api.get(next);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.uri, `${h().baseUrl}/audit_events`);
      pages.push(res.json.audit_events.length);
      seen.push(...res.json.audit_events);
      const last = res.json.audit_events.at(-1) as Event | undefined;
      if (res.json.next_page_uri !== null) assert.equal(res.json.next_page_uri, `${h().baseUrl}/audit_events?before_id=${last!.id}&limit=2`);
      next = res.json.next_page_uri;
    }
    assert.deepEqual(pages, [2, 2, 1]);
    assert.deepEqual(
      seen.map((e) => e.resource_id),
      [...made].reverse(),
    );
    assert.deepEqual(seen, await events(api));
    await assertError(await api.get(`/audit_events?before_id=${made[0]}`), 400, 'ERR_EP_234');
  });

  it("shows another account none of them: its list is empty and an event's id is not found", async () => {
    const api = await h().newAccount();
    const other = await h().newAccount();
    await created(api, '/ip_policies', {});
    const [event] = await events(api);
    assert.deepEqual(await events(other), []);
    await assertError(await other.get(`/audit_events/${event!.id}`), 404, 'ERR_EP_252', event!.id);
    await assertError(await api.get(`/audit_events/aud_${'0'.repeat(27)}`), 404, 'ERR_EP_252');
  });

  it('is read by admins only, and has no create, update or delete', async () => {
    const api = await h().newAccount();
    await created(api, '/ip_policies', {});
    const [event] = await events(api);
    for (const role of ['developer', 'read_only'] as const) {
      const user = await api.asNewUser(role);
      await assertError(await user.get('/audit_events'), 403, 'ERR_EP_4111', 'read the audit log');
      await assertError(await user.get(`/audit_events/${event!.id}`), 403, 'ERR_EP_4111');
    }
    assert.equal((await api.post('/audit_events', {})).status, 405);
    assert.equal((await api.patch(`/audit_events/${event!.id}`, { description: 'x' })).status, 405);
    assert.equal((await api.delete(`/audit_events/${event!.id}`)).status, 405);
    assert.deepEqual(await events(api), [event]);
  });

  it('never holds a secret sent in a body: API key tokens, OAuth and OIDC client secrets, webhook secrets', async () => {
    const api = await h().newAccount();
    const secret = (what: string) => `${what}-${randomBytes(12).toString('hex')}`;
    const [oauthSecret, oidcSecret, webhookSecret] = [secret('oauth'), secret('oidc'), secret('webhook')];
    const key = await created(api, '/api_keys', { description: 'ci' });
    const tokenSecret = (key.token as string).split('_').at(-1)!;
    const edge = await created(api, '/edges/https', {});
    const oauth = { provider: { github: { client_id: 'gh-client', client_secret: oauthSecret } } };
    const route = await created(api, `/edges/https/${edge.id}/routes`, { match_type: 'path_prefix', match: '/', oauth });
    assert.equal(
      (await api.patch(`/edges/https/${edge.id}/routes/${route.id}`, { webhook_verification: { provider: 'github', secret: webhookSecret } })).status,
      200,
    );
    assert.equal((await api.delete(`/edges/https/${edge.id}/routes/${route.id}/oauth`)).status, 204);
    const oidc = { issuer: 'https://idp.example.com', client_id: 'a', client_secret: oidcSecret };
    assert.equal((await api.put(`/edges/https/${edge.id}/routes/${route.id}/oidc`, oidc)).status, 200);

    assert.equal((await events(api)).length, 6);
    const stored = await rawRows(h(), api.info.accountId);
    const shown = (await api.get('/audit_events')).text;
    for (const text of [stored, shown]) {
      for (const s of [key.token as string, tokenSecret, oauthSecret, oidcSecret, webhookSecret, 'gh-client', 'idp.example.com']) {
        assert.ok(!text.includes(s), `${s} is in the audit log`);
      }
    }
  });
});
