// Bot users: admin-managed principals that own API keys.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachStore } from '../helpers/harness.js';

describeEachStore('bot users', (h) => {
  it('creates, gets, lists, updates and deletes a bot user', async () => {
    const api = await h().newAccount();
    const created = await api.post('/bot_users', { name: 'terraform' });
    assert.equal(created.status, 201);
    assert.match(created.json.id, /^bot_[0-9A-Za-z]{27}$/);
    assert.equal(created.json.active, true);
    assert.equal(created.json.uri, `${h().baseUrl}/bot_users/${created.json.id}`);

    assert.deepEqual((await api.get(`/bot_users/${created.json.id}`)).json, created.json);
    const list = await api.get('/bot_users');
    assert.deepEqual(Object.keys(list.json).sort(), ['bot_users', 'next_page_uri', 'uri']);
    assert.deepEqual(
      list.json.bot_users.map((b: { id: string }) => b.id),
      [created.json.id],
    );

    const renamed = await api.patch(`/bot_users/${created.json.id}`, { name: 'pulumi' });
    assert.equal(renamed.json.name, 'pulumi');
    assert.equal(renamed.json.active, true);
    assert.equal((await api.delete(`/bot_users/${created.json.id}`)).status, 204);
    assert.equal((await api.get(`/bot_users/${created.json.id}`)).status, 404);
  });

  it('refuses a duplicate name in the account with 409, but not in another account', async () => {
    const api = await h().newAccount();
    await api.post('/bot_users', { name: 'ci' });
    const dup = await api.post('/bot_users', { name: 'ci' });
    assert.equal(dup.status, 409);
    assert.equal(dup.json.error_code, 'ERR_EP_4112');
    const other = await h().newAccount();
    assert.equal((await other.post('/bot_users', { name: 'ci' })).status, 201);
    const second = await api.post('/bot_users', { name: 'cd' });
    const renamed = await api.patch(`/bot_users/${second.json.id}`, { name: 'ci' });
    assert.equal(renamed.status, 409);
    assert.equal((await api.get(`/bot_users/${second.json.id}`)).json.name, 'cd', 'the refused rename changed nothing');
  });

  it('refuses an empty or missing name', async () => {
    const api = await h().newAccount();
    for (const body of [{}, { name: '' }, { name: 5 }, { active: false }]) {
      const res = await api.post('/bot_users', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.json.error_code, 'ERR_EP_215');
      assert.match(res.json.msg, /name/);
    }
  });

  it('lets only admins manage bot users; everyone may read them', async () => {
    const api = await h().newAccount();
    const bot = await api.post('/bot_users', { name: 'b' });
    const dev = await api.asNewUser('developer');
    const denied = await dev.post('/bot_users', { name: 'sneaky' });
    assert.equal(denied.status, 403);
    assert.equal(denied.json.error_code, 'ERR_EP_4111');
    assert.equal((await dev.patch(`/bot_users/${bot.json.id}`, { active: false })).status, 403);
    assert.equal((await dev.delete(`/bot_users/${bot.json.id}`)).status, 403);
    assert.equal((await dev.get(`/bot_users/${bot.json.id}`)).status, 200);
    assert.equal((await api.get(`/bot_users/${bot.json.id}`)).json.active, true);
  });

  it('refuses the keys of an inactive bot, and accepts them again when reactivated', async () => {
    const api = await h().newAccount();
    const bot = await api.post('/bot_users', { name: 'deploy' });
    const key = await api.post('/api_keys', { owner_id: bot.json.id });
    const asBot = api.withToken(key.json.token);
    assert.equal((await asBot.get('/api_keys')).status, 200);

    await api.patch(`/bot_users/${bot.json.id}`, { active: false });
    const refused = await asBot.get('/api_keys');
    assert.equal(refused.status, 403);
    assert.equal(refused.json.error_code, 'ERR_EP_636');

    await api.patch(`/bot_users/${bot.json.id}`, { active: true });
    assert.equal((await asBot.get('/api_keys')).status, 200);
  });

  it('acts as a developer: may create its own keys, not keys for others', async () => {
    const api = await h().newAccount();
    const bot = await api.post('/bot_users', { name: 'auto' });
    const asBot = api.withToken((await api.post('/api_keys', { owner_id: bot.json.id })).json.token);
    const own = await asBot.post('/api_keys', {});
    assert.equal(own.status, 201);
    assert.equal(own.json.owner_id, bot.json.id);
    assert.equal((await asBot.post('/api_keys', { owner_id: api.info.userId })).status, 403);
    assert.equal((await asBot.post('/bot_users', { name: 'x' })).status, 403);
  });

  it("deletes a bot's keys with the bot, in the same transaction", async () => {
    const api = await h().newAccount();
    const bot = await api.post('/bot_users', { name: 'gone' });
    const key = await api.post('/api_keys', { owner_id: bot.json.id });
    await api.delete(`/bot_users/${bot.json.id}`);
    assert.equal((await api.get(`/api_keys/${key.json.id}`)).status, 404);
    assert.equal((await api.withToken(key.json.token).get('/api_keys')).status, 401);
  });

  it('refuses "5" as a boolean: bodies are never coerced', async () => {
    const api = await h().newAccount();
    const res = await api.post('/bot_users', { name: 'x', active: 'true' });
    assert.equal(res.status, 400);
    assert.match(res.json.msg, /active/);
  });
});
