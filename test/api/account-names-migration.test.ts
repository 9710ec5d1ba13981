// Migration 0024 makes account names unique, on both stores: accounts a store already holds with
// a name taken by an older one keep it with their id appended, and none is lost.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Migrator, sql } from 'kysely';
import { migrate, UniqueViolation, withTx } from '../../src/db/store.js';
import { migrationProvider } from '../../src/db/migrations/index.js';
import { freshStore, storeKinds } from '../helpers/harness.js';

for (const kind of storeKinds()) {
  describe(`migration 0024-unique-account-names [${kind}]`, () => {
    let fresh: Awaited<ReturnType<typeof freshStore>>;
    before(async () => {
      fresh = await freshStore(kind);
    });
    after(async () => {
      await fresh?.dispose();
    });

    it('renames the younger of two accounts of one name, then refuses a second of a name', async () => {
      const { store } = fresh;
      const migrator = new Migrator({ db: store.db, provider: migrationProvider(store.dialect), migrationTableSchema: fresh.schema });
      const down = await migrator.migrateTo('0023-peer-instances');
      assert.ifError(down.error);
      assert.equal(down.results?.at(-1)?.migrationName, '0024-unique-account-names');
      for (const [id, name, at] of [
        ['acct_dup2', 'shop', '2026-02-01T00:00:00Z'],
        ['acct_dup1', 'shop', '2026-01-01T00:00:00Z'],
        ['acct_dup3', 'shop', '2026-03-01T00:00:00Z'],
        ['acct_alone', 'other', '2026-01-01T00:00:00Z'],
      ])
        await sql`insert into accounts (id, name, created_at) values (${id}, ${name}, ${at})`.execute(store.db);

      assert.equal((await migrate(store))[0], '0024-unique-account-names');
      const rows = await store.db
        .selectFrom('accounts')
        .select(['id', 'name'])
        .where('id', 'in', ['acct_dup1', 'acct_dup2', 'acct_dup3', 'acct_alone'])
        .orderBy('id')
        .execute();
      assert.deepEqual(rows, [
        { id: 'acct_alone', name: 'other' },
        { id: 'acct_dup1', name: 'shop' },
        { id: 'acct_dup2', name: 'shop (acct_dup2)' },
        { id: 'acct_dup3', name: 'shop (acct_dup3)' },
      ]);
      const again = await withTx(store, (trx) =>
        trx.insertInto('accounts').values({ id: 'acct_dup4', name: 'shop', created_at: '2026-04-01T00:00:00Z' }).execute(),
      ).catch((e: unknown) => e);
      assert.ok(again instanceof UniqueViolation, String(again));
      assert.equal(again.target, 'accounts_name_key');
    });
  });
}
