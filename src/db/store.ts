// The store: a Kysely instance over SQLite or PostgreSQL, its migrations, transactions, and
// the translation of driver errors into what the rest of the code understands.
import { Migrator, type Kysely, type Transaction } from 'kysely';
import { errors } from '../core/errors.js';
import type { Config } from '../config.js';
import { isPostgresConnectionError, isPostgresForeignKeyError, openPostgres, postgresUniqueTarget } from './dialects/postgres.js';
import { isSqliteForeignKeyError, openSqlite, sqliteUniqueTarget } from './dialects/sqlite.js';
import { migrationProvider } from './migrations/index.js';
import type { Dialect } from './dialect.js';
import type { Database } from './schema.js';

export type { Dialect };
export type Executor = Kysely<Database> | Transaction<Database>;

export type { Scope } from '../core/context.js';

export interface Store {
  readonly dialect: Dialect;
  /** Transactions and writes. */
  readonly db: Kysely<Database>;
  /**
   * Reads outside a transaction. It sees every committed change and nothing uncommitted: on
   * SQLite a second connection (WAL readers never wait for the writer), on PostgreSQL the pool.
   */
  readonly reader: Kysely<Database>;
  /**
   * The rows of one compiled read on the reader, without the query builder: for the queries
   * that every request runs (ScopedDb compiles them once). PostgreSQL keeps them prepared.
   */
  readRows<R>(sql: string, parameters: readonly unknown[]): Promise<R[]>;
  close(): Promise<void>;
}

export function openStore(database: Config['database'], options: { schema?: string } = {}): Store {
  if (database.kind === 'postgres') {
    const { db, readRows, close } = openPostgres(database.url, options);
    return { dialect: 'postgres', db, reader: db, readRows, close };
  }
  const { db, reader, readRows, close } = openSqlite(database.file);
  return { dialect: 'sqlite', db, reader, readRows, close };
}

export async function migrate(store: Store): Promise<string[]> {
  const migrator = new Migrator({ db: store.db, provider: migrationProvider(store.dialect) });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** A unique index was violated; `target` is the index name (`<table>_<columns>_key`). */
export class UniqueViolation extends Error {
  constructor(
    readonly target: string,
    override readonly cause: unknown,
  ) {
    super(`unique violation on ${target}`);
    this.name = 'UniqueViolation';
  }
}

/** A foreign key was violated: a row names one that does not exist, or one still named is deleted. */
export class ForeignKeyViolation extends Error {
  constructor(override readonly cause: unknown) {
    super('foreign key violation');
    this.name = 'ForeignKeyViolation';
  }
}

/** Driver errors become UniqueViolation, ForeignKeyViolation or a 503 ApiError; anything else passes unchanged. */
export function translateStoreError(error: unknown): unknown {
  const target = sqliteUniqueTarget(error) ?? postgresUniqueTarget(error);
  if (target) return new UniqueViolation(target, error);
  if (isSqliteForeignKeyError(error) || isPostgresForeignKeyError(error)) return new ForeignKeyViolation(error);
  if (isPostgresConnectionError(error) || (error as { code?: string })?.code === 'SQLITE_BUSY') return errors.storeUnavailable();
  return error;
}

/** Runs `work` in one transaction: it happens whole or not at all. */
export async function withTx<T>(store: Store, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  try {
    return await store.db.transaction().execute(work);
  } catch (error) {
    throw translateStoreError(error);
  }
}

/** Runs a read outside a transaction, with the same error translation. */
export async function read<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw translateStoreError(error);
  }
}
