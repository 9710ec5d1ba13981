// Write transactions under concurrency: each is whole or nothing and is answered only once it is
// durable, on both stores. On SQLite the transactions waiting for its one writer are committed
// together (src/db/dialects/group-commit.ts); these tests hold that to the promises it makes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { withTx, type Store } from '../../src/db/store.js';
import { freshStore, storeKinds } from '../helpers/harness.js';

const CREATED = '2026-01-01T00:00:00Z';

for (const kind of storeKinds()) {
  describe(`write transactions under concurrency [${kind}]`, () => {
    let store: Store;
    let dispose: () => Promise<void>;
    before(async () => ({ store, dispose } = await freshStore(kind)));
    after(() => dispose());

    /** Whether a connection other than the writer's sees the account. */
    const committed = async (id: string) => (await store.reader.selectFrom('accounts').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;

    it('keeps the rows of those that succeed and none of those that fail, each settled alone', async () => {
      const ids = Array.from({ length: 30 }, (_, i) => `acc_concurrent${String(i).padStart(2, '0')}`);
      const settled = await Promise.allSettled(
        ids.map((id, i) =>
          withTx(store, async (trx) => {
            await trx.insertInto('accounts').values({ id, name: id, created_at: CREATED }).execute();
            // A second write, then a failure after it for every third: nothing of theirs may stay.
            await trx
              .updateTable('accounts')
              .set({ name: `${id}-renamed` })
              .where('id', '=', id)
              .execute();
            if (i % 3 === 0) throw new Error(`refused ${id}`);
            return id;
          }),
        ),
      );
      settled.forEach((outcome, i) => {
        if (i % 3 === 0) {
          assert.equal(outcome.status, 'rejected');
          assert.match(String((outcome as PromiseRejectedResult).reason), new RegExp(`refused ${ids[i]}`));
        } else assert.deepEqual(outcome, { status: 'fulfilled', value: ids[i] });
      });
      const rows = await store.reader.selectFrom('accounts').select(['id', 'name']).where('id', 'like', 'acc_concurrent%').orderBy('id').execute();
      assert.deepEqual(
        rows,
        ids.filter((_, i) => i % 3 !== 0).map((id) => ({ id, name: `${id}-renamed` })),
      );
    });

    it('answers a transaction only once another connection sees what it wrote', async () => {
      const ids = Array.from({ length: 12 }, (_, i) => `acc_durable${i}`);
      const seen = await Promise.all(
        ids.map((id) => withTx(store, (trx) => trx.insertInto('accounts').values({ id, name: id, created_at: CREATED }).execute()).then(() => committed(id))),
      );
      assert.deepEqual(
        seen,
        ids.map(() => true),
      );
    });
  });
}

describe('group commit [sqlite]', () => {
  let store: Store;
  let dispose: () => Promise<void>;
  before(async () => ({ store, dispose } = await freshStore('sqlite')));
  after(() => dispose());

  const committed = async (id: string) => (await store.reader.selectFrom('accounts').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
  const account = (id: string) => ({ id, name: id, created_at: CREATED });

  it('runs transactions that wait together in one commit, each seeing those before it', async () => {
    const views: { inGroup: boolean; committed: boolean }[] = [];
    await Promise.all([
      withTx(store, (trx) => trx.insertInto('accounts').values(account('acc_groupfirst')).execute()),
      withTx(store, async (trx) => {
        // The first one's row is there for the second, and not yet for anyone outside the group.
        const row = await trx.selectFrom('accounts').select('id').where('id', '=', 'acc_groupfirst').executeTakeFirst();
        views.push({ inGroup: row !== undefined, committed: await committed('acc_groupfirst') });
        await trx.insertInto('accounts').values(account('acc_groupsecond')).execute();
      }),
    ]);
    assert.deepEqual(views, [{ inGroup: true, committed: false }]);
    assert.equal(await committed('acc_groupfirst'), true);
    assert.equal(await committed('acc_groupsecond'), true);
  });

  it('fails every transaction of a group whose commit fails, and none of them happened', async () => {
    const outcomes = await Promise.allSettled([
      withTx(store, (trx) => trx.insertInto('accounts').values(account('acc_beforebadcommit')).execute()),
      withTx(store, async (trx) => {
        // A foreign key checked only at COMMIT, broken: SQLite refuses the commit of the whole group.
        await sql`pragma defer_foreign_keys = on`.execute(trx);
        await trx.insertInto('users').values({ id: 'usr_orphan', account_id: 'acc_missing', name: 'orphan', role: 'admin', created_at: CREATED }).execute();
      }),
      withTx(store, (trx) => trx.insertInto('accounts').values(account('acc_afterbadcommit')).execute()),
    ]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['rejected', 'rejected', 'rejected'],
    );
    for (const o of outcomes) assert.match(String((o as PromiseRejectedResult).reason), /foreign key/i);
    assert.equal(await committed('acc_beforebadcommit'), false);
    assert.equal(await committed('acc_afterbadcommit'), false);
    // The writer is whole again: the next transaction commits.
    await withTx(store, (trx) => trx.insertInto('accounts').values(account('acc_afterfailure')).execute());
    assert.equal(await committed('acc_afterfailure'), true);
  });
});
