// Reads across accounts. Everything else reaches account-owned rows through a ScopedDb, which adds
// the account to every query; the few reads that must look past it (a token or key found by its
// id, the certificate served for a name, a name unique across accounts, a free port of the shared
// pool, the operator's certificate report) take a CrossAccountReader instead, handed to them where
// they are wired (src/deps.ts, src/resources/registry.ts, or the caller of a data-plane function), so
// that every such read shows in a signature. The queries themselves live in the features that own
// them; this file only gives them the executor.
import type { Kysely } from 'kysely';
import { ScopedDb } from './scoped.js';
import type { Database } from './schema.js';
import { read, type Store } from './store.js';

/**
 * What a read across accounts needs of the store: its reader, which sees every committed change.
 * A Store is one; a function that takes a CrossAccountReader rather than a Store says that it
 * reads across accounts, and that it neither writes nor opens a transaction.
 */
export type CrossAccountReader = Pick<Store, 'reader'>;

/** A read across accounts outside any transaction, with the store's error translation (a 503 when it is down). */
export function readAcrossAccounts<T>(across: CrossAccountReader, work: (reader: Kysely<Database>) => Promise<T>): Promise<T> {
  return read(() => work(across.reader));
}

/**
 * A read across accounts in the transaction of `db`: it holds under the transaction's locks
 * (`ScopedDb.serializeAcrossAccounts`) and sees its writes. The reader is not read here: it is the
 * handle the feature was given where it is wired, so that a definition cannot look past its
 * account with the ScopedDb alone.
 */
export function readAcrossAccountsIn<T>(_across: CrossAccountReader, db: ScopedDb, work: (executor: Kysely<Database>) => Promise<T>): Promise<T> {
  return work(ScopedDb.executorOf(db));
}
