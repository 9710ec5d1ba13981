// Checks that read and then write hold when two requests race: a resource that a change is
// about to reference cannot be deleted before the change commits, and the delete's "still in
// use" check sees every reference committed before it. Run on both stores; on PostgreSQL the
// two requests really overlap (a pool of connections, READ COMMITTED).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { it } from 'node:test';
import { describeEachStore } from '../helpers/harness.js';

const ROUNDS = 25;
/** The races the checks were once defeated by: enough rounds that a window of a few milliseconds is hit. */
const RACE_ROUNDS = 200;

describeEachStore('concurrent requests', (h) => {
  it('never lets a failover backend name a backend deleted at the same moment', async () => {
    const api = await h().newAccount();
    const outcomes = new Map<string, number>();
    for (let round = 0; round < ROUNDS; round++) {
      const child = (await api.post('/backends/tunnel_group', { labels: { round: String(round) } })).json.id;
      const [created, deleted] = await Promise.all([api.post('/backends/failover', { backends: [child] }), api.delete(`/backends/tunnel_group/${child}`)]);
      const key = `${created.status}/${deleted.status}`;
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      if (created.status === 201) {
        assert.equal(deleted.status, 409, `the delete must see the new reference: ${deleted.text}`);
        assert.equal(deleted.json.error_code, 'ERR_EP_6502');
        assert.equal((await api.get(`/backends/tunnel_group/${child}`)).status, 200);
      } else {
        assert.equal(deleted.status, 204, deleted.text);
        assert.equal(created.status, 400, created.text);
        assert.equal(created.json.error_code, 'ERR_EP_6501');
      }
    }
    const dangling = await h()
      .deps.store.db.selectFrom('backend_links as l')
      .leftJoin('backends_tunnel_group as b', 'b.id', 'l.child_id')
      .select('l.child_id')
      .where('l.account_id', '=', api.info.accountId)
      .where('b.id', 'is', null)
      .execute();
    assert.deepEqual(dangling, [], `no link names a deleted backend (outcomes: ${JSON.stringify([...outcomes])})`);
  });

  it('never lets an IP restriction name a policy deleted at the same moment', async () => {
    const api = await h().newAccount();
    for (let round = 0; round < ROUNDS; round++) {
      const policy = (await api.post('/ip_policies', {})).json.id;
      const [created, deleted] = await Promise.all([
        api.post('/ip_restrictions', { type: 'dashboard', ip_policy_ids: [policy] }),
        api.delete(`/ip_policies/${policy}`),
      ]);
      if (created.status === 201) {
        assert.equal(deleted.status, 409, deleted.text);
        assert.equal(deleted.json.error_code, 'ERR_EP_1420');
        assert.equal((await api.delete(`/ip_restrictions/${created.json.id}`)).status, 204);
      } else {
        assert.equal(deleted.status, 204, deleted.text);
        assert.equal(created.status, 400, created.text);
        assert.equal(created.json.error_code, 'ERR_EP_1402');
      }
    }
  });

  it('never stores a cycle of failover backends patched at the same moment', async () => {
    const api = await h().newAccount();
    const outcomes = new Map<string, number>();
    for (let round = 0; round < RACE_ROUNDS; round++) {
      // Two (or, every third round, three) failovers patched at once to name each other in a ring.
      const size = round % 3 === 0 ? 3 : 2;
      const ids: string[] = [];
      for (let i = 0; i < size; i++) ids.push((await api.post('/backends/failover', { backends: [] })).json.id);
      const results = await Promise.all(ids.map((id, i) => api.patch(`/backends/failover/${id}`, { backends: [ids[(i + 1) % size]] })));
      const key = results.map((r) => r.status).join('/');
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      for (const r of results) {
        assert.ok(r.status === 200 || (r.status === 400 && r.json.error_code === 'ERR_EP_6530'), `${r.status} ${r.text}`);
      }
      assert.ok(
        results.some((r) => r.status === 400),
        `a ring of ${size} was stored (outcomes so far: ${JSON.stringify([...outcomes])})`,
      );
    }
  });

  it('never links a weighted backend to a backend deleted at the same moment', async () => {
    const api = await h().newAccount();
    for (let round = 0; round < RACE_ROUNDS; round++) {
      const child = (await api.post('/backends/static', { address: 'app.internal:443' })).json.id;
      const [created, deleted] = await Promise.all([api.post('/backends/weighted', { backends: { [child]: 100 } }), api.delete(`/backends/static/${child}`)]);
      if (created.status === 201) {
        assert.equal(deleted.status, 409, deleted.text);
        assert.equal((await api.delete(`/backends/weighted/${created.json.id}`)).status, 204);
        assert.equal((await api.delete(`/backends/static/${child}`)).status, 204);
      } else {
        assert.equal(created.status, 400, created.text);
        assert.equal(deleted.status, 204, deleted.text);
      }
    }
    const dangling = await h()
      .deps.store.db.selectFrom('backend_links as l')
      .leftJoin('backends_static as b', 'b.id', 'l.child_id')
      .select('l.child_id')
      .where('l.account_id', '=', api.info.accountId)
      .where('l.child_id', 'like', 'bkdsc_%')
      .where('b.id', 'is', null)
      .execute();
    assert.deepEqual(dangling, []);
  });

  it('never leaves an API key owned by a bot user deleted at the same moment', async () => {
    const api = await h().newAccount();
    let keys = 0;
    for (let round = 0; round < RACE_ROUNDS; round++) {
      const bot = (await api.post('/bot_users', { name: `bot-${round}` })).json.id;
      const [created, deleted] = await Promise.all([api.post('/api_keys', { owner_id: bot }), api.delete(`/bot_users/${bot}`)]);
      assert.equal(deleted.status, 204, deleted.text);
      if (created.status === 201) keys++;
      else {
        assert.equal(created.status, 400, created.text);
        assert.equal(created.json.error_code, 'ERR_EP_637');
      }
    }
    const orphans = await h()
      .deps.store.db.selectFrom('api_keys as k')
      .leftJoin('users as u', 'u.id', 'k.owner_id')
      .leftJoin('bot_users as b', 'b.id', 'k.owner_id')
      .select('k.id')
      .where('k.account_id', '=', api.info.accountId)
      .where('u.id', 'is', null)
      .where('b.id', 'is', null)
      .execute();
    assert.deepEqual(orphans, [], `no key outlives its bot (${keys} of ${RACE_ROUNDS} keys were created before the delete)`);
  });

  it('gives a name and the names under a wildcard to one account only, when two accounts reserve them at once', async () => {
    const [a, b] = [await h().newAccount(), await h().newAccount()];
    const outcomes = new Map<string, number>();
    for (let round = 0; round < RACE_ROUNDS; round++) {
      const base = `r${round}-${randomBytes(3).toString('hex')}.example.com`;
      // Alternate who asks for the wildcard, and a name one or two labels under it.
      const [wildcardOwner, nameOwner] = round % 2 === 0 ? [a, b] : [b, a];
      const name = round % 4 < 2 ? `app.${base}` : `x.app.${base}`;
      const [wildcard, single] = await Promise.all([
        wildcardOwner.post('/reserved_domains', { domain: `*.${base}` }),
        nameOwner.post('/reserved_domains', { domain: name }),
      ]);
      const key = `${wildcard.status}/${single.status}`;
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      assert.ok(key === '201/409' || key === '409/201', `exactly one reservation wins (${key}): ${wildcard.text} ${single.text}`);
      assert.equal((wildcard.status === 409 ? wildcard : single).json.error_code, 'ERR_EP_417');
    }
    const held = await h()
      .deps.store.db.selectFrom('reserved_domains')
      .select(['domain', 'account_id'])
      .where('account_id', 'in', [a.info.accountId, b.info.accountId])
      .execute();
    assert.equal(held.length, RACE_ROUNDS, `one reservation a round (outcomes: ${JSON.stringify([...outcomes])})`);
  });

  it('gives one name to one account when two accounts reserve it at once, as a domain and as an agent ingress', async () => {
    const [a, b] = [await h().newAccount(), await h().newAccount()];
    for (let round = 0; round < ROUNDS; round++) {
      for (const [path, taken] of [
        ['/reserved_domains', 'ERR_EP_414'],
        ['/agent_ingresses', 'ERR_EP_6707'],
      ] as const) {
        const domain = `same-${round}-${randomBytes(3).toString('hex')}.example.org`;
        const results = await Promise.all([a.post(path, { domain }), b.post(path, { domain })]);
        const statuses = results.map((r) => r.status).sort();
        assert.deepEqual(statuses, [201, 409], `${path}: ${results.map((r) => r.text).join(' ')}`);
        assert.equal(results.find((r) => r.status === 409)!.json.error_code, taken);
      }
    }
  });

  it('gives one reserved address to one edge when two edges claim it at once', async () => {
    const api = await h().newAccount();
    for (let round = 0; round < ROUNDS; round++) {
      const addr = (await api.post('/reserved_addrs', {})).json.addr as string;
      const [first, second] = await Promise.all([api.post('/edges/tcp', { hostports: [addr] }), api.post('/edges/tcp', { hostports: [addr] })]);
      const statuses = [first.status, second.status].sort();
      assert.deepEqual(statuses, [201, 409], `${first.text} ${second.text}`);
      const loser = first.status === 409 ? first : second;
      const winner = first.status === 201 ? first : second;
      assert.equal(loser.json.error_code, 'ERR_EP_7122');
      assert.ok(loser.json.msg.includes(winner.json.id), loser.json.msg);
    }
  });

  it('never leaves a TCP edge module naming a backend deleted at the same moment', async () => {
    const api = await h().newAccount();
    for (let round = 0; round < ROUNDS; round++) {
      const backend = (await api.post('/backends/tunnel_group', { labels: { round: String(round) } })).json.id;
      const edge = (await api.post('/edges/tcp', {})).json.id;
      const [put, deleted] = await Promise.all([
        api.put(`/edges/tcp/${edge}/backend`, { backend_id: backend }),
        api.delete(`/backends/tunnel_group/${backend}`),
      ]);
      if (put.status === 200) {
        assert.equal(deleted.status, 409, deleted.text);
        assert.equal(deleted.json.error_code, 'ERR_EP_6502');
      } else {
        assert.equal(deleted.status, 204, deleted.text);
        assert.equal(put.status, 400, put.text);
        assert.equal(put.json.error_code, 'ERR_EP_6501');
      }
    }
    const dangling = await h()
      .deps.store.db.selectFrom('module_refs as r')
      .leftJoin('backends_tunnel_group as b', 'b.id', 'r.target_id')
      .select('r.target_id')
      .where('r.account_id', '=', api.info.accountId)
      .where('b.id', 'is', null)
      .execute();
    assert.deepEqual(dangling, [], 'no module names a deleted backend');
  });
});
