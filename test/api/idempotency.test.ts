// Idempotency-Key on POST, on both stores, over real HTTP: the first answer replayed, nothing
// created twice (also by concurrent twins, also across instances), another request with the key
// refused, keys per credential (never replayed to another, nor to a request refused now), no
// secret recorded, and keys expiring after 24 hours.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { Migrator, sql } from 'kysely';
import { migrationProvider } from '../../src/db/migrations/index.js';
import { openStore } from '../../src/db/store.js';
import { claimIdempotencyKey, markIdempotentChange, purgeIdempotencyKeys, releaseIdempotencyKey } from '../../src/db/idempotency.js';
import { scopedTx } from '../../src/db/scoped.js';
import { describeEachStore, type Api, type Harness } from '../helpers/harness.js';

describeEachStore('Idempotency-Key', (h: () => Harness) => {
  const withKey = (key: string) => ({ headers: { 'Idempotency-Key': key } });
  const policies = async (api: Api) => (await api.get('/ip_policies')).json.ip_policies as { id: string }[];

  it('replays the first answer, status and body, for the same key and request, and creates nothing more', async () => {
    const api = await h().newAccount();
    const key = randomUUID();
    const first = await api.post('/ip_policies', { description: 'once' }, withKey(key));
    assert.equal(first.status, 201);
    assert.equal(first.headers.get('idempotent-replayed'), null);
    const again = await api.post('/ip_policies', { description: 'once' }, withKey(key));
    assert.equal(again.status, 201);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.json, first.json);
    assert.deepEqual(
      (await policies(api)).map((p) => p.id),
      [first.json.id],
    );
    const unkeyed = await api.post('/ip_policies', { description: 'once' });
    assert.notEqual(unkeyed.json.id, first.json.id, 'without a key, each POST creates');
  });

  it('refuses the key with another body or path (409), and takes the same key in another account', async () => {
    const api = await h().newAccount();
    const key = randomUUID();
    assert.equal((await api.post('/ip_policies', { description: 'a' }, withKey(key))).status, 201);
    const otherBody = await api.post('/ip_policies', { description: 'b' }, withKey(key));
    assert.equal(otherBody.status, 409);
    assert.equal(otherBody.json.error_code, 'ERR_EP_272');
    assert.match(otherBody.json.msg, new RegExp(key));
    assert.equal((await api.post('/backends/static', { address: 'example.com:443' }, withKey(key))).status, 409, 'another path');
    assert.equal((await policies(api)).length, 1);
    const stranger = await h().newAccount();
    assert.equal((await stranger.post('/ip_policies', { description: 'b' }, withKey(key))).status, 201, 'keys are per account');
  });

  it('creates one resource for concurrent twins, each getting its answer', async () => {
    const api = await h().newAccount();
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 8 }, () => api.post('/ip_policies', { description: 'race' }, withKey(key))));
    assert.deepEqual(
      answers.map((a) => a.status),
      Array(8).fill(201),
    );
    assert.equal(new Set(answers.map((a) => a.json.id)).size, 1, 'one id');
    assert.equal((await policies(api)).length, 1);
  });

  it('replays on another instance', async () => {
    const api = await h().newAccount();
    const second = await h().secondInstance();
    try {
      const key = randomUUID();
      const first = await api.post('/ip_policies', { description: 'here' }, withKey(key));
      const there = await api.at(second.baseUrl).post('/ip_policies', { description: 'here' }, withKey(key));
      assert.equal(there.status, 201);
      assert.equal(there.json.id, first.json.id);
      assert.equal((await policies(api)).length, 1);
    } finally {
      await second.close();
    }
  });

  it('replays a refusal too (4xx), but not a rate limit or server error, which may be retried', async () => {
    const api = await h().newAccount();
    const domain = `idem-${randomUUID().slice(0, 8)}.example.com`;
    assert.equal((await api.post('/reserved_domains', { domain })).status, 201);
    const key = randomUUID();
    const taken = await api.post('/reserved_domains', { domain }, withKey(key));
    assert.equal(taken.status, 409);
    const replayed = await api.post('/reserved_domains', { domain }, withKey(key));
    assert.equal(replayed.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(replayed.json, taken.json);
  });

  it('refuses a key that is empty, too long or not printable ASCII', async () => {
    const api = await h().newAccount();
    for (const key of ['x'.repeat(256), 'has space', 'tab\tkey']) {
      const res = await api.post('/ip_policies', { description: 'k' }, withKey(key));
      assert.equal(res.status, 400, key);
      assert.equal(res.json.error_code, 'ERR_EP_271');
    }
    assert.equal((await policies(api)).length, 0);
  });

  it('frees a key after 24 hours, and takes over a claim whose request was cut off', async () => {
    const api = await h().newAccount();
    const key = randomUUID();
    const first = await api.post('/ip_policies', { description: 'day' }, withKey(key));
    const db = h().deps.store.db;
    await db
      .updateTable('idempotency_keys')
      .set({ created_at: new Date(Date.now() - 24 * 3600_000 - 1000).toISOString() })
      .where('account_id', '=', api.info.accountId)
      .execute();
    const later = await api.post('/ip_policies', { description: 'day' }, withKey(key));
    assert.equal(later.status, 201);
    assert.notEqual(later.json.id, first.json.id, 'a day later the key is new');

    // A claim left unanswered (its instance died), its lease run out.
    const abandoned = randomUUID();
    await db
      .insertInto('idempotency_keys')
      .values({
        account_id: api.info.accountId,
        api_key_id: api.info.keyId,
        key: abandoned,
        request_hash: 'whatever the request was',
        status: null,
        body: null,
        created_at: new Date().toISOString(),
        lease_until: new Date(Date.now() - 1).toISOString(),
      })
      .execute();
    const claim = () =>
      claimIdempotencyKey(h().deps.store, {
        accountId: api.info.accountId,
        apiKeyId: api.info.keyId,
        key: abandoned,
        requestHash: 'whatever the request was',
        now: new Date(),
        leaseMs: 60_000,
        keepMs: 86_400_000,
      });
    assert.deepEqual(await claim(), { kind: 'claimed' });
    assert.deepEqual(await claim(), { kind: 'in-progress' }, 'now held by the new claim');
  });

  it('does not carry out again a request whose change committed but whose answer was lost (409 ERR_EP_274 naming it)', async () => {
    const api = await h().newAccount();
    const key = randomUUID();
    const first = await api.post('/ip_policies', { description: 'lost answer' }, withKey(key));
    assert.equal(first.status, 201);
    const db = h().deps.store.db;
    const row = () =>
      db.selectFrom('idempotency_keys').selectAll().where('account_id', '=', api.info.accountId).where('key', '=', key).executeTakeFirstOrThrow();
    assert.equal((await row()).resource_id, first.json.id, 'the change marked its claim');
    // As if the answer had never been recorded (the connection broke as the change committed)
    // and the claim's lease had run out.
    await db
      .updateTable('idempotency_keys')
      .set({ status: null, body: null, lease_until: new Date(Date.now() - 1).toISOString() })
      .where('account_id', '=', api.info.accountId)
      .where('key', '=', key)
      .execute();
    const retry = await api.post('/ip_policies', { description: 'lost answer' }, withKey(key));
    assert.equal(retry.status, 409);
    assert.equal(retry.json.error_code, 'ERR_EP_274');
    assert.match(retry.json.msg, new RegExp(`acted on ${first.json.id}`));
    assert.deepEqual(
      (await policies(api)).map((p) => p.id),
      [first.json.id],
      'nothing made twice',
    );
    // A refusal changed nothing: its claim is not marked.
    const domain = `lost-${randomUUID().slice(0, 8)}.example.com`;
    assert.equal((await api.post('/reserved_domains', { domain })).status, 201);
    const refusedKey = randomUUID();
    assert.equal((await api.post('/reserved_domains', { domain }, withKey(refusedKey))).status, 409);
    const refused = await db.selectFrom('idempotency_keys').select('resource_id').where('key', '=', refusedKey).executeTakeFirstOrThrow();
    assert.equal(refused.resource_id, null);
  });

  it('a server error frees the key unless the change committed, and then the retry is told at once', async () => {
    const api = await h().newAccount();
    const store = h().deps.store;
    const scope = { accountId: api.info.accountId };
    const claim = (key: string) => ({ accountId: scope.accountId, apiKeyId: api.info.keyId, key, requestHash: 'h' });
    const request = (key: string) => ({ ...claim(key), now: new Date(), leaseMs: 60_000, keepMs: 86_400_000 });
    // Not committed (the change rolled back, or never ran): the key is free again.
    const free = randomUUID();
    assert.deepEqual(await claimIdempotencyKey(store, request(free)), { kind: 'claimed' });
    await releaseIdempotencyKey(store, claim(free), new Date());
    assert.deepEqual(await claimIdempotencyKey(store, request(free)), { kind: 'claimed' });
    // A change whose transaction rolls back takes its mark with it.
    await assert.rejects(
      scopedTx(store, scope, async (db) => {
        await markIdempotentChange(db, claim(free), 'ipp_rolledback');
        throw new Error('the change fails');
      }),
    );
    await releaseIdempotencyKey(store, claim(free), new Date());
    assert.deepEqual(await claimIdempotencyKey(store, request(free)), { kind: 'claimed' }, 'freed: the mark rolled back');
    // Committed, then answered 5xx (ERR_EP_262: the commit's acknowledgement was lost).
    const done = randomUUID();
    assert.deepEqual(await claimIdempotencyKey(store, request(done)), { kind: 'claimed' });
    await scopedTx(store, scope, (db) => markIdempotentChange(db, claim(done), 'ipp_committed'));
    await releaseIdempotencyKey(store, claim(done), new Date());
    assert.deepEqual(await claimIdempotencyKey(store, request(done)), { kind: 'carried-out', resourceId: 'ipp_committed' });
  });

  it('is the key of the credential that sent it: another key of the account, of any role, never gets its answer', async () => {
    const admin = await h().newAccount();
    const key = randomUUID();
    const body = { description: 'made by an admin' };
    const made = await admin.post('/api_keys', body, withKey(key));
    assert.equal(made.status, 201);
    // A read_only key is refused, as without the key: nothing of the admin's answer.
    const readOnly = await admin.asNewUser('read_only');
    const refused = await readOnly.post('/api_keys', body, withKey(key));
    assert.equal(refused.status, 403, JSON.stringify(refused.json));
    assert.equal(refused.headers.get('idempotent-replayed'), null);
    // A developer's same key and body is a request of its own: a key it owns, not the admin's.
    const developer = await admin.asNewUser('developer');
    const own = await developer.post('/api_keys', body, withKey(key));
    assert.equal(own.status, 201);
    assert.equal(own.headers.get('idempotent-replayed'), null);
    assert.notEqual(own.json.id, made.json.id);
    assert.equal(own.json.owner_id, developer.info.userId);
    assert.notEqual(own.json.token, made.json.token);
    // Each credential's replay is its own.
    const again = await developer.post('/api_keys', body, withKey(key));
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.json.id, own.json.id);
  });

  it('refuses a replay to a request that would be refused now, whatever the key once got', async () => {
    const admin = await h().newAccount();
    const developer = await admin.asNewUser('developer');
    const policy = (await admin.post('/ip_policies', {})).json.id as string;
    const key = randomUUID();
    const rule = { ip_policy_id: policy, cidr: '10.1.0.0/16', action: 'allow' };
    assert.equal((await developer.post('/ip_policy_rules', rule, withKey(key))).status, 201);
    assert.equal((await developer.post('/ip_policy_rules', rule, withKey(key))).headers.get('idempotent-replayed'), 'true');
    // Once an IP restriction uses the policy, only admins may add rules to it: the replay is refused as the request would be.
    assert.equal((await admin.post('/ip_restrictions', { type: 'dashboard', ip_policy_ids: [policy] })).status, 201);
    const replay = await developer.post('/ip_policy_rules', rule, withKey(key));
    assert.equal(replay.status, 403, JSON.stringify(replay.json));
    assert.equal(replay.json.error_code, (await developer.post('/ip_policy_rules', rule)).json.error_code);
    // A parent deleted since: the path's 404, not the recorded answer.
    const edge = (await admin.post('/edges/https', {})).json.id as string;
    const routeKey = randomUUID();
    const route = { match_type: 'path_prefix', match: '/' };
    assert.equal((await admin.post(`/edges/https/${edge}/routes`, route, withKey(routeKey))).status, 201);
    assert.equal((await admin.delete(`/edges/https/${edge}`)).status, 204);
    assert.equal((await admin.post(`/edges/https/${edge}/routes`, route, withKey(routeKey))).status, 404);
  });

  it('never stores a token shown once: a replay shows it null, as a read does, also after the key is deleted', async () => {
    const api = await h().newAccount();
    const key = randomUUID();
    const made = await api.post('/api_keys', { description: 'shown once' }, withKey(key));
    assert.equal(made.status, 201);
    const token = made.json.token as string;
    assert.match(token, /_/);
    const secret = token.slice(token.lastIndexOf('_') + 1);
    const replay = await api.post('/api_keys', { description: 'shown once' }, withKey(key));
    assert.equal(replay.status, 201);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(replay.json, { ...made.json, token: null });
    assert.deepEqual(replay.json, (await api.get(`/api_keys/${made.json.id}`)).json);
    // Nowhere in the store: the recorded answer, and (SQLite) the database file and its WAL.
    const rows = await h().deps.store.db.selectFrom('idempotency_keys').select('body').where('account_id', '=', api.info.accountId).execute();
    assert.equal(rows.length, 1);
    assert.ok(!rows[0]!.body!.includes(secret));
    if (h().databaseUrl.startsWith('sqlite:')) {
      const file = h().databaseUrl.slice('sqlite:'.length);
      for (const f of [file, `${file}-wal`].filter((f) => fs.existsSync(f))) assert.ok(!fs.readFileSync(f).includes(secret), `${f} holds the token`);
    }
    assert.equal((await api.delete(`/api_keys/${made.json.id}`)).status, 204);
    const afterDelete = await api.post('/api_keys', { description: 'shown once' }, withKey(key));
    assert.equal(afterDelete.status, 201);
    assert.equal(afterDelete.json.token, null);
  });

  it('the sweep deletes the keys kept past their time, oldest first, in batches, across accounts, and no other', async () => {
    const store = h().deps.store;
    const [a, b] = [await h().newAccount(), await h().newAccount()];
    const day = 24 * 3600_000;
    const at = (msAgo: number) => new Date(Date.now() - msAgo).toISOString();
    const row = (api: Api, key: string, createdAt: string) => ({
      account_id: api.info.accountId,
      api_key_id: api.info.keyId,
      key,
      request_hash: 'h',
      status: 201,
      body: '{}',
      created_at: createdAt,
      lease_until: createdAt,
      resource_id: null,
    });
    // Far in the past, so that no other test's rows are older.
    const old = ['1990-01-01T00:00:00.000Z', '1990-01-02T00:00:00.000Z', '1990-01-03T00:00:00.000Z'];
    await store.db
      .insertInto('idempotency_keys')
      .values([row(a, 'old-0', old[0]!), row(b, 'old-1', old[1]!), row(a, 'old-2', old[2]!), row(a, 'fresh', at(day - 60_000))])
      .execute();
    const keys = async () =>
      (await store.db.selectFrom('idempotency_keys').select('key').where('key', 'in', ['old-0', 'old-1', 'old-2', 'fresh']).execute()).map((r) => r.key).sort();
    assert.equal(await purgeIdempotencyKeys(store, new Date('1990-01-02T12:00:00.000Z'), 1), 1);
    assert.deepEqual(await keys(), ['fresh', 'old-1', 'old-2'], 'the oldest first');
    assert.equal(await purgeIdempotencyKeys(store, new Date('1990-01-02T12:00:00.000Z'), 5), 1, "only those before the time, another account's too");
    assert.equal((await purgeIdempotencyKeys(store, new Date(Date.now() - day), 1000)) >= 1, true);
    assert.deepEqual(await keys(), ['fresh'], 'a key younger than a day stays');
  });

  it('a twin waits for the answer of the request that holds the key', async () => {
    const api = await h().newAccount();
    const key = randomUUID();
    // Take the key as the first request would, then answer it a moment later.
    const probe = await api.post('/ip_policies', { description: 'twin' }, withKey(`${key}-probe`));
    const row = await h()
      .deps.store.db.selectFrom('idempotency_keys')
      .selectAll()
      .where('account_id', '=', api.info.accountId)
      .where('key', '=', `${key}-probe`)
      .executeTakeFirstOrThrow();
    await h()
      .deps.store.db.insertInto('idempotency_keys')
      .values({ ...row, key, status: null, body: null, lease_until: new Date(Date.now() + 60_000).toISOString() })
      .execute();
    setTimeout(() => {
      void h().deps.store.db.updateTable('idempotency_keys').set({ status: 201, body: row.body }).where('key', '=', key).execute();
    }, 300);
    const started = Date.now();
    const twin = await api.post('/ip_policies', { description: 'twin' }, withKey(key));
    assert.ok(Date.now() - started >= 250, 'it waited');
    assert.equal(twin.status, 201);
    assert.equal(twin.json.id, probe.json.id, "the holder's answer");
  });
});

describe('migration 0017 (Idempotency-Keys per API key) on SQLite', () => {
  it('drops the rows kept per account, and zeroes what they held in the file', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'edgeplane-mig-'));
    const store = openStore({ kind: 'sqlite', file: path.join(dir, 'old.db') });
    try {
      const migrator = new Migrator({ db: store.db, provider: migrationProvider('sqlite') });
      assert.equal((await migrator.migrateTo('0016-idempotency-outcome')).error, undefined);
      const token = `kept_${randomBytes(24).toString('hex')}`;
      const accountId = 'acct_migration';
      await sql`insert into accounts (id, name, created_at) values (${accountId}, 'old', '2026-01-01T00:00:00.000Z')`.execute(store.db);
      // Answers over many pages, as a store in use has them, written through to the file.
      for (let i = 0; i < 100; i++) {
        const body = JSON.stringify({ token, description: 'x'.repeat(2000) });
        await sql`insert into idempotency_keys (account_id, key, request_hash, status, body, created_at, lease_until)
                  values (${accountId}, ${`k${i}`}, 'h', 201, ${body}, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`.execute(store.db);
      }
      await sql`pragma wal_checkpoint(TRUNCATE)`.execute(store.db);
      assert.equal((await migrator.migrateToLatest()).error, undefined);
      assert.equal((await store.db.selectFrom('idempotency_keys').selectAll().execute()).length, 0);
      await sql`pragma wal_checkpoint(TRUNCATE)`.execute(store.db);
      const file = path.join(dir, 'old.db');
      for (const f of [file, `${file}-wal`].filter((f) => fs.existsSync(f))) assert.ok(!fs.readFileSync(f).includes(token), `${f} holds the token`);
    } finally {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
