// The seams the next kinds need, proved with kinds defined here over existing tables: a kind
// under a parent in the path (`/ip_policies/{ip_policy_id}/rules`), a kind without a list,
// path-only uris, and the generic 409 for a unique or foreign-key violation no kind maps.
import { MUTATION_OBSERVERS } from '../../src/resources/mutation-observers.js';
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { Body, DescribedFields, Ref, StringEnum } from '../../src/core/schema.js';
import { defineResource, type AnyDefinition } from '../../src/crud/definition.js';
import { Kinds } from '../../src/crud/kinds.js';
import { createResource } from '../../src/crud/resource.js';
import type { BotUsersTable } from '../../src/resources/bot-users/bot-user.table.js';
import type { IpPolicyRulesTable } from '../../src/resources/ip-policy-rules/ip-policy-rule.table.js';
import { sharedValueErrors } from '../../src/edge-config/values/shared-value.errors.js';
import { ipPolicyRuleDefinition } from '../../src/resources/ip-policy-rules/ip-policy-rule.resource.js';
import { resourceDefinitions } from '../../src/resources/registry.js';
import { describeEachStore, type Api } from '../helpers/harness.js';

const NestedRule = Type.Object({ ...DescribedFields('ipr'), cidr: Type.String(), action: Type.String(), ip_policy: Ref });

/** IP policy rules served under their policy, with no list and path-only uris. */
const nestedRules = defineResource({
  kind: 'nested_rule',
  title: 'nested rule',
  prefix: 'ipr',
  path: '/ip_policies/:ip_policy_id/rules',
  table: 'ip_policy_rules',
  schemas: {
    resource: NestedRule,
    create: Body({ cidr: Type.String(), action: StringEnum(['allow', 'deny'] as const) }),
    update: Body({ description: Type.Optional(Type.String()) }),
  },
  operations: ['create', 'get', 'update', 'delete'],
  parent: { param: 'ip_policy_id', column: 'ip_policy_id', kind: 'ip_policy', onDelete: 'cascade' },
  uri: 'path',
  references: [
    {
      in: 'column',
      column: 'ip_policy_id',
      kinds: ['ip_policy'],
      notFound: (id) => sharedValueErrors.ipPolicyNotFound({ field: 'ip_policy_id', id }),
      onDelete: 'cascade',
    },
  ],
  prepare: (_ctx, body) => ({
    row: { cidr: body.cidr, action: body.action, description: '', metadata: '' } as Omit<
      IpPolicyRulesTable,
      'id' | 'account_id' | 'created_at' | 'ip_policy_id'
    > as never,
  }),
  // Shown as the served kind shows a rule.
  toApi: ipPolicyRuleDefinition(() => {}).toApi,
});

/** Rules that name their policy in the body but declare no reference: only the store's foreign key stops a bad one. */
const uncheckedRules = defineResource({
  kind: 'unchecked_rule',
  title: 'unchecked rule',
  prefix: 'iprx',
  path: '/unchecked_rules',
  listKey: 'rules',
  table: 'ip_policy_rules',
  schemas: { resource: Type.Object({ id: Type.String(), uri: Type.String() }), create: Body({ ip_policy_id: Type.String() }), update: Body({}) },
  operations: ['create'],
  prepare: (_ctx, body) => ({ row: { ip_policy_id: body.ip_policy_id, cidr: '10.0.0.0/8', action: 'allow' as const, description: '', metadata: '' } }),
  toApi: (row: IpPolicyRulesTable) => ({ id: row.id }),
});

/** Bot users with no mapping of their unique name: the generic 409. */
const unmappedBots = defineResource({
  kind: 'unmapped_bot',
  title: 'unmapped bot',
  prefix: 'botx',
  path: '/unmapped_bots',
  listKey: 'bots',
  table: 'bot_users',
  schemas: { resource: Type.Object({ id: Type.String(), uri: Type.String() }), create: Body({ name: Type.String() }), update: Body({}) },
  operations: ['create'],
  prepare: (_ctx, body) => ({ row: { name: body.name, active: true } }),
  toApi: (row: BotUsersTable) => ({ id: row.id }),
});

describeEachStore('core seams', (h) => {
  let app: FastifyInstance;
  let base: string;
  const at = (api: Api) => api.at(base);

  before(async () => {
    const { deps } = h();
    const { ipPolicyRules: _served, ...others } = resourceDefinitions({ ...deps, domains: deps.config.domains });
    const definitions: Record<string, AnyDefinition> = { ...others, nestedRules, uncheckedRules, unmappedBots };
    const kinds = new Kinds(Object.values(definitions), [{ kind: 'user', title: 'user', prefix: 'usr', table: 'users' }]);
    const resources = Object.fromEntries(Object.entries(definitions).map(([name, d]) => [name, createResource(deps.store, kinds, d, MUTATION_OBSERVERS)]));
    app = await buildApp({ ...deps, resources: resources as never });
    await app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  });
  after(async () => {
    await app?.close();
  });

  it('creates a kind under its parent, with the parent from the path and a path-only uri', async () => {
    const api = at(await h().newAccount());
    const ipp = (await api.post('/ip_policies', {})).json.id;
    const created = await api.post(`/ip_policies/${ipp}/rules`, { cidr: '10.1.0.0/16', action: 'deny' });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.uri, `/ip_policies/${ipp}/rules/${created.json.id}`);
    assert.equal(created.json.ip_policy.id, ipp);
    const got = await api.get(`/ip_policies/${ipp}/rules/${created.json.id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.json, created.json);
  });

  it('answers 404 for the child under another parent, a parent of another account, or a malformed parent', async () => {
    const api = at(await h().newAccount());
    const ipp = (await api.post('/ip_policies', {})).json.id;
    const otherPolicy = (await api.post('/ip_policies', {})).json.id;
    const rule = (await api.post(`/ip_policies/${ipp}/rules`, { cidr: '10.2.0.0/16', action: 'allow' })).json.id;
    assert.equal((await api.get(`/ip_policies/${otherPolicy}/rules/${rule}`)).json.error_code, 'ERR_EP_252');
    assert.equal((await api.patch(`/ip_policies/${otherPolicy}/rules/${rule}`, { description: 'x' })).status, 404);
    assert.equal((await api.delete(`/ip_policies/${otherPolicy}/rules/${rule}`)).status, 404);
    const stranger = at(await h().newAccount());
    const res = await stranger.post(`/ip_policies/${ipp}/rules`, { cidr: '10.3.0.0/16', action: 'allow' });
    assert.equal(res.status, 404);
    assert.match(res.json.msg, /IP policy/);
    assert.equal((await stranger.get(`/ip_policies/${ipp}/rules/${rule}`)).status, 404);
    assert.equal((await api.get(`/ip_policies/nonsense/rules/${rule}`)).json.error_code, 'ERR_EP_222');
    assert.equal((await api.get(`/ip_policies/${ipp}/rules/${rule}`)).status, 200, 'still there');
  });

  it('serves only the operations a kind has: no list is 405 with Allow', async () => {
    const api = at(await h().newAccount());
    const ipp = (await api.post('/ip_policies', {})).json.id;
    const res = await api.get(`/ip_policies/${ipp}/rules`);
    assert.equal(res.status, 405);
    assert.match(res.headers.get('allow') ?? '', /POST/);
    assert.doesNotMatch(res.headers.get('allow') ?? '', /GET/);
  });

  it('deletes children whose reference cascades with their parent', async () => {
    const api = at(await h().newAccount());
    const ipp = (await api.post('/ip_policies', {})).json.id;
    const rule = (await api.post(`/ip_policies/${ipp}/rules`, { cidr: '10.4.0.0/16', action: 'allow' })).json.id;
    assert.equal((await api.delete(`/ip_policies/${ipp}`)).status, 204);
    assert.equal((await api.get(`/ip_policies/${ipp}/rules/${rule}`)).status, 404);
    const rows = await h().deps.store.db.selectFrom('ip_policy_rules').select('id').where('id', '=', rule).execute();
    assert.equal(rows.length, 0);
  });

  it('answers a foreign-key violation no kind maps with 409 ERR_EP_257, writing nothing', async () => {
    const api = at(await h().newAccount());
    const res = await api.post('/unchecked_rules', { ip_policy_id: 'ipp_000000000000000000000000000' });
    assert.equal(res.status, 409, res.text);
    assert.equal(res.json.error_code, 'ERR_EP_257');
    const rows = await h().deps.store.db.selectFrom('ip_policy_rules').select('id').where('account_id', '=', api.info.accountId).execute();
    assert.equal(rows.length, 0);
  });

  it('answers a unique violation no kind maps with 409 ERR_EP_257', async () => {
    const api = at(await h().newAccount());
    assert.equal((await api.post('/unmapped_bots', { name: 'twin' })).status, 201);
    const res = await api.post('/unmapped_bots', { name: 'twin' });
    assert.equal(res.status, 409, res.text);
    assert.equal(res.json.error_code, 'ERR_EP_257');
    assert.match(res.json.msg, /unique/);
  });
});
