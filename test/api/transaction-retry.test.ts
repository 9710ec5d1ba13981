// A transaction that PostgreSQL aborts to break a deadlock is run again, not answered as a 500.
// PostgreSQL only: SQLite runs one write transaction at a time, so two cannot wait for each other
// (and the barrier below would wait forever for a transaction that cannot start).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApiError } from '../../src/core/errors.js';
import { TRANSACTION_TRIES, withTx, type Store } from '../../src/db/store.js';
import { freshStore, storeKinds } from '../helpers/harness.js';

const postgres = Boolean(process.env.EDGEPLANE_TEST_DATABASE_URL);

describe('transactions after a deadlock [postgres]', { skip: !postgres && 'needs EDGEPLANE_TEST_DATABASE_URL' }, () => {
  let store: Store;
  let dispose: () => Promise<void>;

  before(async () => {
    ({ store, dispose } = await freshStore('postgres'));
    await store.db
      .insertInto('accounts')
      .values([
        { id: 'acc_deadlockA', name: 'a', created_at: '2026-01-01T00:00:00Z' },
        { id: 'acc_deadlockB', name: 'b', created_at: '2026-01-01T00:00:00Z' },
      ])
      .execute();
  });
  after(() => dispose());

  /** Two transactions that lock A and B in opposite orders, each waiting until both hold their first lock. */
  function crossedPair() {
    let arrived = 0;
    let release!: () => void;
    const bothHoldFirst = new Promise<void>((resolve) => (release = resolve));
    const runs = { first: 0, second: 0 };
    const lockThenLock = (name: 'first' | 'second', one: string, two: string) =>
      withTx(store, async (trx) => {
        runs[name]++;
        // Account names are unique: each row's name carries its id after the transaction's mark.
        await trx
          .updateTable('accounts')
          .set({ name: `${name}-${runs[name]} ${one}` })
          .where('id', '=', one)
          .execute();
        // The first try of each meets the other at the barrier; a later try goes straight on.
        if (runs[name] === 1) {
          if (++arrived % 2 === 0) release();
          await bothHoldFirst;
        }
        await trx
          .updateTable('accounts')
          .set({ name: `${name}-${runs[name]} ${two}` })
          .where('id', '=', two)
          .execute();
        return runs[name];
      });
    return {
      runs,
      both: Promise.allSettled([lockThenLock('first', 'acc_deadlockA', 'acc_deadlockB'), lockThenLock('second', 'acc_deadlockB', 'acc_deadlockA')]),
    };
  }

  it('runs the transaction PostgreSQL aborted again, and both changes are made', async () => {
    const { runs, both } = crossedPair();
    const results = await both;
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'fulfilled'],
      JSON.stringify(results.map((r) => (r.status === 'rejected' ? String(r.reason) : r.value))),
    );
    assert.equal(runs.first + runs.second, 3, `one of the two ran twice: ${JSON.stringify(runs)}`);
    const names = (await store.db.selectFrom('accounts').select('name').where('id', 'in', ['acc_deadlockA', 'acc_deadlockB']).execute()).map(
      (r) => r.name.split(' ')[0],
    );
    // The transaction that ran last wrote both rows.
    assert.equal(new Set(names).size, 1, `both rows come from the same, last, transaction: ${names}`);
  });
});

for (const kind of storeKinds()) {
  describe(`transactions that keep colliding [${kind}]`, () => {
    let store: Store;
    let dispose: () => Promise<void>;
    before(async () => ({ store, dispose } = await freshStore(kind)));
    after(() => dispose());

    it('are tried a fixed number of times, then answered with a 503 that says to retry', async () => {
      let runs = 0;
      // What PostgreSQL reports to the victim of a deadlock, every time.
      const deadlock = () => Object.assign(new Error('deadlock detected'), { code: '40P01' });
      const error = await withTx(store, async () => {
        runs++;
        throw deadlock();
      }).catch((e: unknown) => e);
      assert.equal(runs, TRANSACTION_TRIES);
      assert.ok(error instanceof ApiError, String(error));
      assert.equal(error.errorCode, 'ERR_EP_268');
      assert.equal(error.status, 503);
      assert.equal(error.headers['Retry-After'], '1');
    });

    it('are not tried again for any other error', async () => {
      let runs = 0;
      const error = await withTx(store, async () => {
        runs++;
        throw Object.assign(new Error('duplicate key'), { code: '23505', constraint: 'x_key' });
      }).catch((e: unknown) => e);
      assert.equal(runs, 1);
      assert.ok(!(error instanceof ApiError), String(error));
    });
  });
}
