// Credentials (agent authtokens): the token shown once and stored as a hash, the ACL rules,
// ownership by role, and authenticateAgentToken, the check the agent listener will make.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { it } from 'node:test';
import { authenticateAgentToken } from '../../src/resources/credentials/credential.token.js';
import { describeEachStore } from '../helpers/harness.js';

const withKey = (key: string) => ({ headers: { 'Idempotency-Key': key } });

describeEachStore('credentials', (h) => {
  it('creates, gets, lists, updates and deletes a credential; the token is shown at creation only', async () => {
    const api = await h().newAccount();
    const created = await api.post('/credentials', { description: 'edge box 7', metadata: '{"site":"lyon"}', acl: ['bind:app.example.com'] });
    assert.equal(created.status, 201, created.text);
    assert.match(created.json.id, /^cr_[0-9A-Za-z]{27}$/);
    assert.equal(created.json.uri, `${h().baseUrl}/credentials/${created.json.id}`);
    assert.equal(created.json.owner_id, api.info.userId);
    assert.deepEqual(created.json.acl, ['bind:app.example.com']);
    assert.match(created.json.token, new RegExp(`^${created.json.id.slice(3)}_[0-9A-Za-z]{40}$`));
    assert.deepEqual(Object.keys(created.json).sort(), ['acl', 'created_at', 'description', 'id', 'metadata', 'owner_id', 'token', 'uri']);

    const fetched = await api.get(`/credentials/${created.json.id}`);
    assert.deepEqual(fetched.json, { ...created.json, token: null });
    const listed = await api.get('/credentials');
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.json.credentials, [fetched.json]);
    assert.equal(listed.json.uri, `${h().baseUrl}/credentials`);

    const patched = await api.patch(`/credentials/${created.json.id}`, { metadata: 'm2', acl: ['bind:*.example.com', 'bind:env=prod'] });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.json.description, 'edge box 7', 'absent fields are left');
    assert.deepEqual(patched.json.acl, ['bind:*.example.com', 'bind:env=prod']);
    assert.equal(patched.json.token, null);
    const nulled = await api.patch(`/credentials/${created.json.id}`, { acl: null, description: 'd2' });
    assert.deepEqual(nulled.json.acl, ['bind:*.example.com', 'bind:env=prod'], 'a null acl is left');
    const cleared = await api.patch(`/credentials/${created.json.id}`, { acl: [] });
    assert.deepEqual(cleared.json.acl, []);

    assert.equal((await api.delete(`/credentials/${created.json.id}`)).status, 204);
    const gone = await api.get(`/credentials/${created.json.id}`);
    assert.equal(gone.status, 404);
    assert.equal(gone.json.error_code, 'ERR_EP_252');
    assert.equal(await authenticateAgentToken(h().deps.store, created.json.token), undefined, 'a deleted credential authenticates no agent');
  });

  it('defaults to an empty ACL, and refuses PATCHes with nothing to change or with owner_id', async () => {
    const api = await h().newAccount();
    const created = await api.post('/credentials', {});
    assert.equal(created.status, 201);
    assert.deepEqual(created.json.acl, []);
    assert.equal(created.json.description, '');
    assert.equal((await api.patch(`/credentials/${created.json.id}`, {})).json.error_code, 'ERR_EP_250');
    assert.equal((await api.patch(`/credentials/${created.json.id}`, { acl: null })).json.error_code, 'ERR_EP_250');
    const owner = await api.patch(`/credentials/${created.json.id}`, { owner_id: api.info.userId });
    assert.equal(owner.status, 400);
    assert.equal(owner.json.error_code, 'ERR_EP_251');
  });

  it('stores only a hash of the token, never the token, also not in an Idempotency-Key replay', async () => {
    const api = await h().newAccount();
    const key = randomUUID();
    const made = await api.post('/credentials', { description: 'once' }, withKey(key));
    assert.equal(made.status, 201);
    const secret = (made.json.token as string).split('_')[1]!;
    const row = await h().deps.store.db.selectFrom('credentials').selectAll().where('id', '=', made.json.id).executeTakeFirstOrThrow();
    assert.ok(!Object.values(row).some((v) => typeof v === 'string' && v.includes(secret)), 'no column holds the secret');
    assert.match(row.secret_hash, /^[0-9a-f]{64}$/);

    const replay = await api.post('/credentials', { description: 'once' }, withKey(key));
    assert.equal(replay.status, 201);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(replay.json, { ...made.json, token: null });
    const recorded = await h().deps.store.db.selectFrom('idempotency_keys').select('body').where('account_id', '=', api.info.accountId).execute();
    assert.equal(recorded.length, 1);
    assert.ok(!recorded[0]!.body!.includes(secret), 'the recorded answer holds no token');
    assert.equal((await api.get('/credentials')).json.credentials.length, 1, 'the replay made nothing');
  });

  it('stores ACL rules in one form, and refuses each malformed rule with a 400 naming it', async () => {
    const api = await h().newAccount();
    const ok = await api.post('/credentials', {
      acl: [
        '*',
        'bind:*',
        'bind:App.Example.COM',
        'bind:*.Bücher.example',
        'bind:trailing.example.com.',
        'bind:env=prod',
        'bind:*=edge',
        'bind:team=*',
        'bind:k=a=b',
      ],
    });
    assert.equal(ok.status, 201, ok.text);
    assert.deepEqual(ok.json.acl, [
      '*',
      'bind:*',
      'bind:app.example.com',
      'bind:*.xn--bcher-kva.example',
      'bind:trailing.example.com',
      'bind:env=prod',
      'bind:*=edge',
      'bind:team=*',
      'bind:k=a=b',
    ]);

    const cases: [string, string, RegExp][] = [
      ['listen:app.example.com', 'ERR_EP_600', /acl\[1\] 'listen:app.example.com' is not an ACL rule/],
      ['app.example.com', 'ERR_EP_600', /'app.example.com'/],
      ['bind:', 'ERR_EP_601', /the domain is empty/],
      ['BIND:app.example.com', 'ERR_EP_600', /BIND/],
      ['bind:1.tcp.example.com:20002', 'ERR_EP_600', /20002/],
      ['bind:app..example.com', 'ERR_EP_601', /empty label/],
      ['bind:localhost', 'ERR_EP_601', /single label/],
      ['bind:a.*.example.com', 'ERR_EP_601', /wildcard/],
      ['bind:*app.example.com', 'ERR_EP_601', /wildcard/],
      ['bind:*.com', 'ERR_EP_601', /two or more labels/],
      ['bind:-app.example.com', 'ERR_EP_601', /hyphen/],
      ['bind:app_1.example.com', 'ERR_EP_601', /'_'/],
      [`bind:${'a'.repeat(64)}.example.com`, 'ERR_EP_601', /more than 63/],
      ['bind:=prod', 'ERR_EP_602', /key is empty/],
      ['bind:env=', 'ERR_EP_602', /value is empty/],
      ['bind:env =prod', 'ERR_EP_602', /space/],
      ['bind:env=pr*d', 'ERR_EP_602', /wildcard/],
      [`bind:${'k'.repeat(129)}=v`, 'ERR_EP_602', /128 bytes/],
      [`bind:k=${'v'.repeat(257)}`, 'ERR_EP_602', /256 bytes/],
    ];
    for (const [rule, code, message] of cases) {
      const res = await api.post('/credentials', { acl: ['bind:fine.example.com', rule] });
      assert.equal(res.status, 400, rule);
      assert.equal(res.json.error_code, code, `${rule}: ${res.json.msg}`);
      assert.match(res.json.msg, message, rule);
      const patched = await api.patch(`/credentials/${ok.json.id}`, { acl: [rule] });
      assert.equal(patched.json.error_code, code, `PATCH ${rule}`);
    }
    const tooMany = await api.post('/credentials', { acl: Array.from({ length: 101 }, (_, i) => `bind:a${i}.example.com`) });
    assert.equal(tooMany.status, 400);
    assert.equal(tooMany.json.error_code, 'ERR_EP_603');
    assert.equal((await api.post('/credentials', { acl: Array.from({ length: 100 }, (_, i) => `bind:a${i}.example.com`) })).status, 201, '100 fit');
    const notString = await api.post('/credentials', { acl: [7] });
    assert.equal(notString.status, 400);
    assert.equal((await api.get(`/credentials/${ok.json.id}`)).json.acl.length, 9, 'refused PATCHes changed nothing');
    assert.equal((await api.get('/credentials')).json.credentials.length, 2, 'refused creations wrote nothing');
  });

  it('lets an admin name another owner; a developer owns and changes only its own; read_only only reads', async () => {
    const api = await h().newAccount();
    const other = await h().newAccount();
    const bot = await api.post('/bot_users', { name: 'agents' });
    const forBot = await api.post('/credentials', { owner_id: bot.json.id });
    assert.equal(forBot.status, 201);
    assert.equal(forBot.json.owner_id, bot.json.id);
    const outside = await api.post('/credentials', { owner_id: other.info.userId });
    assert.equal(outside.status, 400);
    assert.equal(outside.json.error_code, 'ERR_EP_637');

    const dev = await api.asNewUser('developer');
    const denied = await dev.post('/credentials', { owner_id: api.info.userId });
    assert.equal(denied.status, 403);
    assert.equal(denied.json.error_code, 'ERR_EP_604');
    const own = await dev.post('/credentials', { description: 'mine' });
    assert.equal(own.json.owner_id, dev.info.userId);
    assert.equal((await dev.patch(`/credentials/${own.json.id}`, { acl: ['bind:dev.example.com'] })).status, 200);
    for (const res of [await dev.patch(`/credentials/${forBot.json.id}`, { description: 'x' }), await dev.delete(`/credentials/${forBot.json.id}`)]) {
      assert.equal(res.status, 403);
      assert.equal(res.json.error_code, 'ERR_EP_607');
    }
    assert.equal((await dev.get(`/credentials/${forBot.json.id}`)).status, 200, 'a developer reads every credential of the account');
    assert.equal((await api.patch(`/credentials/${own.json.id}`, { description: 'checked' })).status, 200, 'an admin changes any');

    const reader = await api.asNewUser('read_only');
    assert.equal((await reader.get('/credentials')).json.credentials.length, 2);
    for (const res of [
      await reader.post('/credentials', {}),
      await reader.patch(`/credentials/${own.json.id}`, { description: 'x' }),
      await reader.delete(`/credentials/${own.json.id}`),
    ]) {
      assert.equal(res.status, 403);
      assert.equal(res.json.error_code, 'ERR_EP_635');
    }

    // Another account's id is not found, whatever the operation.
    for (const res of [
      await other.get(`/credentials/${own.json.id}`),
      await other.patch(`/credentials/${own.json.id}`, { description: 'x' }),
      await other.delete(`/credentials/${own.json.id}`),
    ]) {
      assert.equal(res.status, 404);
      assert.equal(res.json.error_code, 'ERR_EP_252');
    }
    assert.deepEqual((await other.get('/credentials')).json.credentials, []);
    assert.equal((await api.get(`/credentials/${own.json.id}`)).json.description, 'checked');

    // A bot's credentials go with it.
    assert.equal((await api.delete(`/bot_users/${bot.json.id}`)).status, 204);
    assert.equal((await api.get(`/credentials/${forBot.json.id}`)).status, 404);
  });

  it('authenticateAgentToken: the credential of a valid token, nothing for any other', async () => {
    const api = await h().newAccount();
    const { store } = h().deps;
    const made = await api.post('/credentials', { acl: ['bind:App.example.com', 'bind:env=prod'] });
    const token = made.json.token as string;
    assert.deepEqual(await authenticateAgentToken(store, token), {
      id: made.json.id,
      accountId: api.info.accountId,
      ownerId: api.info.userId,
      acl: ['bind:app.example.com', 'bind:env=prod'],
    });
    const last = token.at(-1) === 'a' ? 'b' : 'a';
    for (const wrong of ['', 'garbage', made.json.id, `${token.slice(0, -1)}${last}`, `${'0'.repeat(27)}_${token.split('_')[1]}`, api.token!]) {
      assert.equal(await authenticateAgentToken(store, wrong), undefined, wrong);
    }

    // The token of an inactive bot's credential authenticates no agent, as the bot's API keys do not.
    const bot = await api.post('/bot_users', { name: 'agent-bot' });
    const botCredential = await api.post('/credentials', { owner_id: bot.json.id });
    assert.equal((await authenticateAgentToken(store, botCredential.json.token))?.ownerId, bot.json.id);
    assert.equal((await api.patch(`/bot_users/${bot.json.id}`, { active: false })).status, 200);
    assert.equal(await authenticateAgentToken(store, botCredential.json.token), undefined);
  });
});
