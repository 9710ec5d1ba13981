// The store: a Kysely instance over SQLite or PostgreSQL, its migrations, transactions, and
// the translation of driver errors into what the rest of the code understands.
import { Migrator, sql, type Kysely, type Transaction } from 'kysely';
import { errors } from '../core/errors.js';
import { DATABASE_TIMEOUT_DEFAULTS, type Config } from '../config.js';
import { isPostgresForeignKeyError, listenOn, openPostgres, postgresOutage, postgresUniqueTarget, type ListenHandlers } from './dialects/postgres.js';
import { isSqliteBusy, isSqliteForeignKeyError, openSqlite, sqliteUniqueTarget } from './dialects/sqlite.js';
import { migrationProvider } from './migrations/index.js';
import { explainStoreProblem, StoreStartError } from './store-problems.js';
import type { Dialect } from './dialects/dialect.js';
import type { Database } from './schema.js';
import type { MaybePromise } from '../core/maybe.js';

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
   * Runs `work` in a write transaction (withTx adds the retries and the error translation). On
   * SQLite, transactions waiting for the writer together are committed together, each in a
   * savepoint of its own (dialects/group-commit.ts); on PostgreSQL each is its own.
   */
  transaction<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T>;
  /**
   * The rows of one compiled read on the reader, without the query builder: for the queries
   * that every request runs (ScopedDb compiles them once). SQLite answers at once (a read of a
   * file is synchronous in better-sqlite3, and throws when it fails); PostgreSQL keeps them
   * prepared, and answers with a promise.
   */
  readRows<R>(sql: string, parameters: readonly unknown[]): MaybePromise<R[]>;
  /**
   * SQLite only: runs one compiled statement on the writer's connection at once, without the
   * query builder, and returns its rows (none for a write). Only for the work of a transaction
   * (withTx), which holds that connection until it ends: ScopedDb runs its compiled statements
   * there through it. PostgreSQL has none: a transaction's statements go to its pooled client.
   */
  writerRows?<R>(sql: string, parameters: readonly unknown[]): R[];
  /**
   * Notifications sent with `ScopedDb.notifyAtCommit(channel)` by any instance, on a connection
   * of their own: PostgreSQL only (SQLite has no such thing; its callers poll).
   */
  listen?(channel: string, handlers: ListenHandlers): Promise<{ close(): Promise<void> }>;
  /**
   * SQLite only: `listener` is called after each commit of this process's writer (not another
   * process's: their pollers find those), so that a poller can read at once; returns the unsubscribe.
   */
  onCommit?(listener: () => void): () => void;
  close(): Promise<void>;
}

/**
 * `timeouts` (defaults: the settings' defaults): `statementMs` bounds every statement, lock waits
 * included (PostgreSQL's statement_timeout, SQLite's busy timeout); `poolMs` bounds the wait for
 * a PostgreSQL connection.
 */
export function openStore(database: Config['database'], options: { schema?: string; timeouts?: Partial<Config['databaseTimeouts']> } = {}): Store {
  const timeouts = { ...DATABASE_TIMEOUT_DEFAULTS, ...options.timeouts };
  if (database.kind === 'postgres') {
    const { db, readRows, close } = openPostgres(database.url, {
      schema: options.schema,
      statementTimeoutMs: timeouts.statementMs,
      poolTimeoutMs: timeouts.poolMs,
    });
    const listen = (channel: string, handlers: ListenHandlers) => listenOn(database.url, options.schema, channel, handlers);
    const transaction = <T>(work: (trx: Transaction<Database>) => Promise<T>) => db.transaction().execute(work);
    return { dialect: 'postgres', db, reader: db, transaction, readRows, listen, close };
  }
  const { db, reader, transaction, readRows, writerRows, onCommit, close } = openSqlite(database.file, { busyTimeoutMs: timeouts.statementMs });
  return { dialect: 'sqlite', db, reader, transaction, readRows, writerRows, onCommit, close };
}

async function migrateWith(db: Kysely<Database>, dialect: Dialect, migrationTableSchema?: string): Promise<string[]> {
  const migrator = new Migrator({ db, provider: migrationProvider(dialect), migrationTableSchema });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

export async function migrate(store: Store): Promise<string[]> {
  return store.dialect === 'sqlite' ? migrateWith(store.db, 'sqlite') : migratePostgres(store);
}

async function migratePostgres(store: Store): Promise<string[]> {
  return store.db.connection().execute(async (db) => {
    // Kysely looks for its migration tables in every schema unless told which one: with another
    // edgeplane schema in the same database it would find those and skip creating its own.
    const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
    // A migration may rewrite a table, or wait for another instance's migration to finish: the
    // statement time limit, meant for requests, does not apply on this connection meanwhile.
    await sql`set statement_timeout = 0`.execute(db);
    try {
      return await migrateWith(db, 'postgres', rows[0]?.schema ?? undefined);
    } finally {
      // Back to the session's limit before the pool hands the connection to a request. Should
      // this fail, the connection is broken and the pool drops it.
      await sql`reset statement_timeout`.execute(db).catch(() => {});
    }
  });
}

/**
 * Opens the store and brings its schema up to date, as every command does first. A failure from
 * outside edgeplane (the server unreachable, a password refused, a file that cannot be written)
 * becomes a StoreStartError whose message says what to check.
 */
export async function openMigrated(config: Pick<Config, 'database' | 'databaseTimeouts'>): Promise<{ store: Store; applied: string[] }> {
  let store: Store | undefined;
  try {
    store = openStore(config.database, { timeouts: config.databaseTimeouts });
    return { store, applied: await migrate(store) };
  } catch (error) {
    await store?.close().catch(() => {});
    const problem = explainStoreProblem(error, config.database, config.databaseTimeouts);
    throw problem ? new StoreStartError(problem, { cause: error }) : error;
  }
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

const OUTAGE_ERRORS = {
  unreachable: errors.storeUnavailable,
  lost: errors.storeConnectionLost,
  timeout: errors.storeTimeout,
  missing: errors.storeMissing,
} as const;

/** Driver errors become UniqueViolation, ForeignKeyViolation or a 503 ApiError; anything else passes unchanged. */
export function translateStoreError(error: unknown): unknown {
  const target = sqliteUniqueTarget(error) ?? postgresUniqueTarget(error);
  if (target) return new UniqueViolation(target, error);
  if (isSqliteForeignKeyError(error) || isPostgresForeignKeyError(error)) return new ForeignKeyViolation(error);
  if (isSqliteBusy(error)) return errors.storeTimeout();
  const outage = postgresOutage(error);
  if (outage) return OUTAGE_ERRORS[outage]();
  return error;
}

/**
 * PostgreSQL aborts one of two transactions that wait for each other (40P01) or that cannot both
 * commit at their isolation level (40001); running the aborted one again is the remedy the
 * manual gives. Each try is a new transaction of the same work, a little later.
 */
const RETRIED_CODES = new Set(['40P01', '40001']);
export const TRANSACTION_TRIES = 3;

/**
 * Runs `work` in one transaction: it happens whole or not at all. `work` may run again (after
 * a deadlock), so it must do nothing outside the transaction that cannot be done twice.
 */
export async function withTx<T>(store: Store, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await store.transaction(work);
    } catch (error) {
      if (!RETRIED_CODES.has((error as { code?: string })?.code ?? '')) throw translateStoreError(error);
      if (attempt >= TRANSACTION_TRIES) throw errors.concurrentChanges({ tries: TRANSACTION_TRIES });
      // A random pause, so that the two transactions do not collide again in step.
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20 * attempt));
    }
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

/** `read` for work that may be done at once (a SQLite read): its value then, else its promise; errors translated alike. */
export function readSoon<T>(work: () => MaybePromise<T>): MaybePromise<T> {
  let result: MaybePromise<T>;
  try {
    result = work();
  } catch (error) {
    throw translateStoreError(error);
  }
  return result instanceof Promise
    ? result.catch((error: unknown) => {
        throw translateStoreError(error);
      })
    : result;
}
