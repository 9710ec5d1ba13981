// Checks that read and then write hold when two requests race: a resource that a change is
// about to reference cannot be deleted before the change commits, and the delete's "still in
// use" check sees every reference committed before it. Run on both stores; on PostgreSQL the
// two requests really overlap (a pool of connections, READ COMMITTED).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachStore } from '../helpers/harness.js';

const ROUNDS = 25;

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
});
