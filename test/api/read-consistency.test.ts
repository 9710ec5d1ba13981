// Reads outside transactions never miss a write committed on this instance, even within one
// turn of the event loop (SQLite's reader shares one snapshot per turn, and keeps the rows it read
// while the file is unchanged), and see another process's write from the next turn on. Run on
// every store.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { scopedReader, scopedTx } from '../../src/db/scoped.js';
import { openStore, type Store } from '../../src/db/store.js';
import { freshStore, storeKinds } from '../helpers/harness.js';

const turn = () => new Promise((resolve) => setImmediate(resolve));

for (const kind of storeKinds()) {
  describe(`read consistency [${kind}]`, () => {
    let fresh: Awaited<ReturnType<typeof freshStore>>;
    let other: Store;
    const scope = { accountId: 'acct_000000000000000000000000001' };
    const policy = 'ipp_000000000000000000000000001';

    before(async () => {
      fresh = await freshStore(kind);
      other = openStore(fresh.database, { schema: fresh.schema });
      await fresh.store.db.insertInto('accounts').values({ id: scope.accountId, name: 'reads', created_at: '2026-01-01T00:00:00Z' }).execute();
      await scopedTx(fresh.store, scope, (db) =>
        db.insert('ip_policies', { id: policy, description: 'first', metadata: '', created_at: '2026-01-01T00:00:00Z' }),
      );
    });
    after(async () => {
      await other?.close();
      await fresh?.dispose();
    });

    it('sees a write committed on this instance at once, within the same turn as an earlier read', async () => {
      const read = () => scopedReader(fresh.store, scope).find('ip_policies', policy);
      assert.equal((await read())?.description, 'first');
      await scopedTx(fresh.store, scope, (db) => db.update('ip_policies', { id: policy }, { description: 'second' }));
      assert.equal((await read())?.description, 'second');
      await scopedTx(fresh.store, scope, (db) => db.update('ip_policies', { id: policy }, { description: 'third' }));
      assert.equal((await read())?.description, 'third');
    });

    it("sees another process's write from the next turn on", async () => {
      const read = () => scopedReader(fresh.store, scope).find('ip_policies', policy);
      await read();
      await scopedTx(other, scope, (db) => db.update('ip_policies', { id: policy }, { description: 'from elsewhere' }));
      await turn();
      assert.equal((await read())?.description, 'from elsewhere');
    });

    it('gives each read the rows as stored, whatever an earlier caller did to the ones it was given', async () => {
      const read = () => scopedReader(fresh.store, scope).find('ip_policies', policy);
      await turn();
      const first = (await read()) as { description: string };
      // SQLite keeps the rows of a read while the file is unchanged, frozen: the change throws there.
      try {
        first.description = 'changed by a caller';
      } catch (error) {
        assert.ok(error instanceof TypeError, String(error));
      }
      assert.equal((await read())?.description, 'from elsewhere');
      await turn();
      assert.equal((await read())?.description, 'from elsewhere');
    });
  });
}
