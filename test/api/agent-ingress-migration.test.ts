// Migration 0018 fills in `domain_reversed` for the agent ingresses a store already holds, on both
// stores: the checks that keep another account's names out of an ingress domain range over it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Migrator, sql } from 'kysely';
import { migrate } from '../../src/db/store.js';
import { migrationProvider } from '../../src/db/migrations/index.js';
import { freshStore, storeKinds } from '../helpers/harness.js';

for (const kind of storeKinds()) {
  describe(`migration 0018-agent-ingress-reversed [${kind}]`, () => {
    let fresh: Awaited<ReturnType<typeof freshStore>>;
    before(async () => {
      fresh = await freshStore(kind);
    });
    after(async () => {
      await fresh?.dispose();
    });

    it('fills in domain_reversed for the ingresses a store already holds', async () => {
      const { store } = fresh;
      const migrator = new Migrator({ db: store.db, provider: migrationProvider(store.dialect), migrationTableSchema: fresh.schema });
      // Back to just before 0018, whatever later migrations there are.
      const down = await migrator.migrateTo('0017-idempotency-credential');
      assert.ifError(down.error);
      assert.equal(down.results?.at(-1)?.migrationName, '0018-agent-ingress-reversed');
      const now = new Date().toISOString();
      await sql`insert into accounts (id, name, created_at) values ('acct_m', 'm', ${now})`.execute(store.db);
      for (const [id, domain] of [
        ['agin_m1', 'connect.example.com'],
        ['agin_m2', 'tunnel.us.connect.example.com'],
      ])
        await sql`insert into agent_ingresses (id, account_id, created_at, domain) values (${id}, 'acct_m', ${now}, ${domain})`.execute(store.db);

      assert.equal((await migrate(store))[0], '0018-agent-ingress-reversed');
      const rows = await store.db.selectFrom('agent_ingresses').select(['id', 'domain_reversed']).where('account_id', '=', 'acct_m').orderBy('id').execute();
      assert.deepEqual(rows, [
        { id: 'agin_m1', domain_reversed: 'com.example.connect' },
        { id: 'agin_m2', domain_reversed: 'com.example.connect.us.tunnel' },
      ]);
    });
  });
}
