// Accounts are the one table above the account scope: created and listed by operators (CLI).
import type { AccountsTable } from './schema.js';
import { ScopedDb } from './scoped.js';
import { read, withTx, type Store } from './store.js';

/** Creates the account and, in the same transaction, what `work` writes in its scope. */
export async function createAccount(store: Store, account: AccountsTable, work: (db: ScopedDb) => Promise<void>): Promise<void> {
  await withTx(store, async (trx) => {
    await trx.insertInto('accounts').values(account).execute();
    await work(new ScopedDb(trx, { accountId: account.id }, store.dialect));
  });
}

/** Runs `work` in the account's scope in one transaction; false (nothing done) when there is no such account. */
export async function withExistingAccount(store: Store, accountId: string, work: (db: ScopedDb) => Promise<void>): Promise<boolean> {
  return withTx(store, async (trx) => {
    const account = await trx.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
    if (!account) return false;
    await work(new ScopedDb(trx, { accountId }, store.dialect));
    return true;
  });
}

export async function listAccounts(store: Store): Promise<AccountsTable[]> {
  return read(() => store.reader.selectFrom('accounts').selectAll().orderBy('id', 'desc').execute());
}

export async function hasAnyAccount(store: Store): Promise<boolean> {
  return (await read(() => store.reader.selectFrom('accounts').select('id').limit(1).execute())).length > 0;
}
