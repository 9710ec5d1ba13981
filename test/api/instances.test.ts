// Two instances on one store, as behind a load balancer: what one writes the other reads at
// once, and a key deleted through one is refused by the other within 2 s (its key cache). That an
// IP restriction changed on one applies on the other within 2 s is in ip-restrictions.test.ts,
// that a job runs once with runners on two instances in jobs.test.ts, and that rate limits and
// Idempotency-Key hold across instances in rate-limit.test.ts and idempotency.test.ts.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachStore, type Harness } from '../helpers/harness.js';

describeEachStore('two instances on one store', (h: () => Harness) => {
  it('reads on one what the other created, changed and deleted, at once', async () => {
    const here = await h().newAccount();
    const second = await h().secondInstance();
    try {
      const there = here.at(second.baseUrl);
      const created = await here.post('/ip_policies', { description: 'made here' });
      assert.equal(created.status, 201);
      const read = await there.get(`/ip_policies/${created.json.id}`);
      assert.equal(read.status, 200);
      assert.equal(read.json.description, 'made here');
      assert.equal((await there.patch(`/ip_policies/${created.json.id}`, { description: 'changed there' })).status, 200);
      assert.equal((await here.get(`/ip_policies/${created.json.id}`)).json.description, 'changed there');
      assert.equal((await there.delete(`/ip_policies/${created.json.id}`)).status, 204);
      assert.equal((await here.get(`/ip_policies/${created.json.id}`)).status, 404);
    } finally {
      await second.close();
    }
  });

  it('refuses a key deleted through the other instance within 2 s', async () => {
    const admin = await h().newAccount();
    const second = await h().secondInstance();
    try {
      const key = await admin.post('/api_keys', { description: 'to be deleted' });
      assert.equal(key.status, 201);
      const doomed = admin.withToken(key.json.token).at(second.baseUrl);
      assert.equal((await doomed.get('/api_keys')).status, 200, 'known, and cached, over there');
      assert.equal((await admin.delete(`/api_keys/${key.json.id}`)).status, 204);
      const deletedAt = Date.now();
      let status = 200;
      while (status !== 401 && Date.now() - deletedAt < 5000) {
        status = (await doomed.get('/api_keys')).status;
        if (status !== 401) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const after = Date.now() - deletedAt;
      assert.equal(status, 401);
      assert.ok(after <= 2100, `refused after ${after} ms`);
    } finally {
      await second.close();
    }
  });
});
