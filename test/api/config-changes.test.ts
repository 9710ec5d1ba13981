// What serves traffic learns of configuration changes: every change made through the API bumps the
// account's revision in its own transaction, and an instance watching the store (here, a second
// store on the same database) is told which account changed within a second: at once on
// PostgreSQL (LISTEN/NOTIFY, delivered at commit), by a poll on SQLite. A change that is refused
// and rolled back bumps nothing and tells nothing.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import pg from 'pg';
import { watchConfigChanges, type ConfigChange } from '../../src/db/config-revisions.js';
import { openStore } from '../../src/db/store.js';
import { describeEachStore, type Harness } from '../helpers/harness.js';

/**
 * A watch on a second store (or, `own`, on the server's own), and the changes it was told of, with
 * a wait for the next one naming an account.
 */
async function watchFromElsewhere(h: Harness, { own = false, pollMs = 50 }: { own?: boolean; pollMs?: number } = {}) {
  const database =
    h.kind === 'sqlite' ? { kind: 'sqlite' as const, file: h.databaseUrl.slice('sqlite:'.length) } : { kind: 'postgres' as const, url: h.databaseUrl };
  const store = own ? h.deps.store : openStore(database);
  const told: ConfigChange[] = [];
  const waiters: (() => void)[] = [];
  const watch = await watchConfigChanges(
    store,
    (change) => {
      told.push(change);
      for (const wake of waiters.splice(0)) wake();
    },
    { pollMs },
  );
  const named = (accountId: string) => told.some((c) => c !== 'all' && c.has(accountId));
  return {
    told,
    named,
    /** Resolves when a change naming `accountId` (or 'all') is told; rejects after `ms`. */
    async until(accountId: string | 'all', ms = 1000): Promise<number> {
      const started = Date.now();
      while (accountId === 'all' ? !told.includes('all') : !named(accountId)) {
        const left = ms - (Date.now() - started);
        if (left <= 0) throw new Error(`not told of ${accountId} within ${ms} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return Date.now() - started;
    },
    async close() {
      await watch.close();
      if (!own) await store.close();
    },
  };
}

async function revision(h: Harness, accountId: string): Promise<number> {
  const row = await h.deps.store.reader.selectFrom('config_revisions').select('revision').where('account_id', '=', accountId).executeTakeFirst();
  return row ? Number(row.revision) : 0;
}

describeEachStore('configuration changes reach every instance', (h: () => Harness) => {
  it('bumps the revision in the change and tells a watcher elsewhere which account changed, within a second', async () => {
    const api = await h().newAccount();
    const bystander = await h().newAccount();
    const watch = await watchFromElsewhere(h());
    try {
      const before = await revision(h(), api.info.accountId);
      const created = await api.post('/ip_policies', { description: 'watched' });
      assert.equal(created.status, 201);
      const ms = await watch.until(api.info.accountId);
      assert.ok(ms <= 1000, `told after ${ms} ms`);
      assert.equal(await revision(h(), api.info.accountId), before + 1, 'one bump for one change');
      assert.equal(watch.named(bystander.info.accountId), false, 'an account that changed nothing is not named');

      // A module PUT and a delete are changes too.
      const edge = await api.post('/edges/tcp', { description: 'e' });
      assert.equal(edge.status, 201);
      assert.equal((await api.put(`/edges/tcp/${edge.json.id}/ip_restriction`, { ip_policy_ids: [created.json.id] })).status, 200);
      assert.equal((await api.delete(`/edges/tcp/${edge.json.id}`)).status, 204);
      assert.equal(await revision(h(), api.info.accountId), before + 4);
    } finally {
      await watch.close();
    }
  });

  it("tells a watcher on the server's own store of its changes at once, not at the next poll", async () => {
    const api = await h().newAccount();
    // A poll an hour away: on SQLite only the process's own commit can tell it.
    const watch = await watchFromElsewhere(h(), { own: true, pollMs: 3_600_000 });
    try {
      assert.equal((await api.post('/ip_policies', { description: 'mine' })).status, 201);
      await watch.until(api.info.accountId, 10_000);
      // Told again for the next change: a commit while a read runs is read after it.
      const [a, b] = [await h().newAccount(), await h().newAccount()];
      const made = await Promise.all([a.post('/ip_policies', {}), b.post('/ip_policies', {})]);
      assert.deepEqual(
        made.map((r) => r.status),
        [201, 201],
      );
      await Promise.all([watch.until(a.info.accountId, 10_000), watch.until(b.info.accountId, 10_000)]);
    } finally {
      await watch.close();
    }
  });

  it('bumps nothing and tells nothing for a change rolled back after its observers ran', async () => {
    const api = await h().newAccount();
    const addr = async () => {
      const made = await api.post('/reserved_addrs', {});
      assert.equal(made.status, 201);
      return made.json.addr as string;
    };
    const [mine, free] = [await addr(), await addr()];
    const edge = await api.post('/edges/tcp', { hostports: [mine] });
    assert.equal(edge.status, 201);
    const watch = await watchFromElsewhere(h());
    try {
      const before = await revision(h(), api.info.accountId);
      // The hostports are claimed after the edge is written and the observers told: the claim's 409 undoes it all.
      assert.equal((await api.post('/edges/tcp', { hostports: [free, mine] })).status, 409);
      assert.equal(await revision(h(), api.info.accountId), before, 'the rolled-back bump is gone');
      // A change that commits after it, so the watcher has surely read past the refused one.
      assert.equal((await api.patch(`/edges/tcp/${edge.json.id}`, { description: 'still here' })).status, 200);
      await watch.until(api.info.accountId);
      assert.equal(watch.told.filter((c) => c !== 'all' && c.has(api.info.accountId)).length, 1, 'told of the PATCH alone');
      assert.equal(await revision(h(), api.info.accountId), before + 1);
    } finally {
      await watch.close();
    }
  });

  it('hears again after its PostgreSQL connection is killed, and says that anything may have changed', async (t) => {
    if (h().kind !== 'postgres') return t.skip('SQLite is polled: there is no connection to lose');
    const api = await h().newAccount();
    const watch = await watchFromElsewhere(h());
    const admin = new pg.Client({ connectionString: h().databaseUrl });
    await admin.connect();
    try {
      const schema = (await admin.query<{ name: string }>('select current_schema() as name')).rows[0]!.name;
      const killed = await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where query = $1`, [`listen "edgeplane_config:${schema}"`]);
      assert.equal(killed.rowCount, 1, 'the listening connection was found and killed');
      // Made again after a pause of 250 ms.
      await watch.until('all', 5000);
      assert.equal((await api.post('/ip_policies', { description: 'after' })).status, 201);
      await watch.until(api.info.accountId);
    } finally {
      await admin.end();
      await watch.close();
    }
  });
});
