// Accounts are the one table above the account scope: created and listed by operators (CLI).
import type { AccountsTable } from './schema.js';
import { ScopedDb } from './scoped.js';
import { read, withTx, type Store } from './store.js';

/** Creates the account and, in the same transaction, what `work` writes in its scope. */
export async function createAccount<T>(store: Store, account: AccountsTable, work: (db: ScopedDb) => Promise<T>): Promise<T> {
  return withTx(store, async (trx) => {
    await trx.insertInto('accounts').values(account).execute();
    return work(new ScopedDb(trx, { accountId: account.id }, store.dialect));
  });
}

/** Runs `work` in the account's scope in one transaction; undefined (nothing done) when there is no such account. */
export async function withExistingAccount<T>(store: Store, accountId: string, work: (db: ScopedDb) => Promise<T>): Promise<T | undefined> {
  return withTx(store, async (trx) => {
    const account = await trx.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
    if (!account) return undefined;
    return work(new ScopedDb(trx, { accountId }, store.dialect));
  });
}

export async function listAccounts(store: Store): Promise<AccountsTable[]> {
  return read(() => store.reader.selectFrom('accounts').selectAll().orderBy('id', 'desc').execute());
}

/** How many accounts the store holds, and the oldest of them (the one a first start creates). */
export async function accountSummary(store: Store): Promise<{ count: number; oldest?: AccountsTable }> {
  return read(async () => {
    const { count } = await store.reader
      .selectFrom('accounts')
      .select((eb) => eb.fn.countAll<number | string>().as('count'))
      .executeTakeFirstOrThrow();
    const oldest = await store.reader.selectFrom('accounts').selectAll().orderBy('created_at').orderBy('id').limit(1).executeTakeFirst();
    return { count: Number(count), oldest };
  });
}
