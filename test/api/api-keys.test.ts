// API keys: the token shown once, ownership, roles, updates and deletion.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachStore } from '../helpers/harness.js';

describeEachStore('API keys', (h) => {
  it('creates a key whose token is shown once and authenticates', async () => {
    const api = await h().newAccount();
    const created = await api.post('/api_keys', { description: 'ci runner', metadata: '{"team":"infra"}' });
    assert.equal(created.status, 201);
    assert.equal(created.json.description, 'ci runner');
    assert.equal(created.json.metadata, '{"team":"infra"}');
    assert.equal(created.json.owner_id, api.info.userId);
    assert.match(created.json.token, new RegExp(`^${created.json.id.slice(3)}_[0-9A-Za-z]{32,}$`));

    const fetched = await api.get(`/api_keys/${created.json.id}`);
    assert.equal(fetched.json.token, null);
    const listed = await api.get('/api_keys');
    assert.ok(listed.json.keys.every((k: { token: unknown }) => k.token === null));

    const viaNewKey = await api.withToken(created.json.token).get(`/api_keys/${created.json.id}`);
    assert.equal(viaNewKey.status, 200);
  });

  it('stores only a hash of the token', async () => {
    const api = await h().newAccount();
    const created = await api.post('/api_keys', {});
    const row = await h().deps.store.db.selectFrom('api_keys').selectAll().where('id', '=', created.json.id).executeTakeFirstOrThrow();
    const secret = created.json.token.split('_')[1];
    assert.ok(!Object.values(row).some((v) => typeof v === 'string' && v.includes(secret)), 'no column holds the secret');
    assert.match(row.secret_hash, /^[0-9a-f]{64}$/);
  });

  it('refuses a deleted key with 401 at once', async () => {
    const api = await h().newAccount();
    const created = await api.post('/api_keys', {});
    const other = api.withToken(created.json.token);
    assert.equal((await other.get('/api_keys')).status, 200);
    assert.equal((await api.delete(`/api_keys/${created.json.id}`)).status, 204);
    const after = await other.get('/api_keys');
    assert.equal(after.status, 401);
    assert.equal(after.json.error_code, 'ERR_EP_203');
    assert.match(after.headers.get('www-authenticate') ?? '', /^Bearer/);
  });

  it('updates description and metadata only, and leaves absent or null fields unchanged', async () => {
    const api = await h().newAccount();
    const created = await api.post('/api_keys', { description: 'd1', metadata: 'm1' });
    const patched = await api.patch(`/api_keys/${created.json.id}`, { metadata: 'm2' });
    assert.equal(patched.json.description, 'd1');
    assert.equal(patched.json.metadata, 'm2');
    const nulled = await api.patch(`/api_keys/${created.json.id}`, { description: null, metadata: '' });
    assert.equal(nulled.json.description, 'd1');
    assert.equal(nulled.json.metadata, '');
    assert.equal((await api.get(`/api_keys/${created.json.id}`)).json.metadata, '');
  });

  it('refuses a PATCH with nothing to change, or with owner_id', async () => {
    const api = await h().newAccount();
    const created = await api.post('/api_keys', {});
    const empty = await api.patch(`/api_keys/${created.json.id}`, {});
    assert.equal(empty.status, 400);
    assert.equal(empty.json.error_code, 'ERR_EP_250');
    const allNull = await api.patch(`/api_keys/${created.json.id}`, { description: null });
    assert.equal(allNull.json.error_code, 'ERR_EP_250');
    const owner = await api.patch(`/api_keys/${created.json.id}`, { owner_id: api.info.userId });
    assert.equal(owner.status, 400);
    assert.equal(owner.json.error_code, 'ERR_EP_251');
  });

  it('counts description and metadata limits in UTF-8 bytes', async () => {
    const api = await h().newAccount();
    assert.equal((await api.post('/api_keys', { description: 'é'.repeat(127) })).status, 201, '254 bytes fit');
    const tooLong = await api.post('/api_keys', { description: 'é'.repeat(128) });
    assert.equal(tooLong.status, 400);
    assert.equal(tooLong.json.error_code, 'ERR_EP_101');
    assert.match(tooLong.json.msg, /256/);
    assert.equal((await api.post('/api_keys', { metadata: 'x'.repeat(4096) })).status, 201);
    const meta = await api.post('/api_keys', { metadata: '€'.repeat(1366) });
    assert.equal(meta.json.error_code, 'ERR_EP_100');
    const before = (await api.get('/api_keys')).json.keys.length;
    assert.equal(before, 3, 'refused creations wrote nothing');
  });

  it('lets an admin create a key owned by a bot or another user of the account', async () => {
    const api = await h().newAccount();
    const bot = await api.post('/bot_users', { name: 'deployer' });
    const forBot = await api.post('/api_keys', { owner_id: bot.json.id });
    assert.equal(forBot.status, 201);
    assert.equal(forBot.json.owner_id, bot.json.id);
    assert.equal((await api.withToken(forBot.json.token).get('/api_keys')).status, 200);

    const dev = await api.asNewUser('developer');
    const forDev = await api.post('/api_keys', { owner_id: dev.info.userId });
    assert.equal(forDev.json.owner_id, dev.info.userId);
  });

  it('refuses an owner outside the account with 400, and a non-admin naming another owner with 403', async () => {
    const api = await h().newAccount();
    const other = await h().newAccount();
    const outside = await api.post('/api_keys', { owner_id: other.info.userId });
    assert.equal(outside.status, 400);
    assert.equal(outside.json.error_code, 'ERR_EP_637');
    const garbage = await api.post('/api_keys', { owner_id: 'ak_x' });
    assert.equal(garbage.json.error_code, 'ERR_EP_637');

    const dev = await api.asNewUser('developer');
    const denied = await dev.post('/api_keys', { owner_id: api.info.userId });
    assert.equal(denied.status, 403);
    assert.equal(denied.json.error_code, 'ERR_EP_630');
    const own = await dev.post('/api_keys', { owner_id: dev.info.userId });
    assert.equal(own.status, 201);
  });

  it('lets a developer change only its own keys, and an admin any key', async () => {
    const api = await h().newAccount();
    const dev = await api.asNewUser('developer');
    const devKey = await dev.post('/api_keys', { description: 'mine' });
    assert.equal((await dev.patch(`/api_keys/${devKey.json.id}`, { description: 'still mine' })).status, 200);
    const notOwn = await dev.delete(`/api_keys/${api.info.keyId}`);
    assert.equal(notOwn.status, 403);
    assert.equal(notOwn.json.error_code, 'ERR_EP_638');
    assert.equal((await api.get(`/api_keys/${api.info.keyId}`)).status, 200, 'the admin key survived');
    assert.equal((await api.delete(`/api_keys/${devKey.json.id}`)).status, 204);
  });

  it('lets a read_only user read but not write', async () => {
    const api = await h().newAccount();
    const reader = await api.asNewUser('read_only');
    assert.equal((await reader.get('/api_keys')).status, 200);
    assert.equal((await reader.get(`/api_keys/${reader.info.keyId}`)).status, 200);
    for (const res of [
      await reader.post('/api_keys', {}),
      await reader.patch(`/api_keys/${reader.info.keyId}`, { description: 'x' }),
      await reader.delete(`/api_keys/${reader.info.keyId}`),
    ]) {
      assert.equal(res.status, 403);
      assert.equal(res.json.error_code, 'ERR_EP_635');
    }
    assert.equal(
      (await reader.get(`/api_keys/${reader.info.keyId}`)).json.description,
      `first key of ${(await h().deps.store.db.selectFrom('users').select('name').where('id', '=', reader.info.userId).executeTakeFirstOrThrow()).name}`,
    );
  });

  it('tells apart a missing header, another scheme, a malformed token and a key id', async () => {
    const api = await h().newAccount();
    const cases: [Record<string, string>, string][] = [
      [{}, 'ERR_EP_200'],
      [{ Authorization: 'Basic dXNlcjpwYXNz' }, 'ERR_EP_201'],
      [{ Authorization: 'Bearer not-a-token' }, 'ERR_EP_202'],
      [{ Authorization: `Bearer ${api.info.keyId}` }, 'ERR_EP_208'],
      [{ Authorization: `Bearer ${api.token!.slice(0, -1)}${api.token!.endsWith('a') ? 'b' : 'a'}` }, 'ERR_EP_203'],
    ];
    for (const [headers, code] of cases) {
      const res = await api.withToken(undefined).get('/api_keys', { headers });
      assert.equal(res.status, 401, code);
      assert.equal(res.json.error_code, code);
    }
  });
});
