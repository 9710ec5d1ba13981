// SQLite through better-sqlite3. The differences from PostgreSQL are absorbed here, so that the
// queries elsewhere are one set: better-sqlite3 refuses JS booleans as parameters (we bind 1/0),
// and it re-parses SQL on every prepare (we keep every prepared statement for reuse).
//
// The driver is our own rather than Kysely's SqliteDriver: that one guards its single connection
// with a mutex that wakes every waiter on each release, so under concurrent requests each query
// costs wake-ups in proportion to the queue (measured: more than half the throughput of an
// authenticated GET lost at 10 connections). Ours hands the connection to waiters in FIFO order.
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  Kysely,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
  type Transaction,
} from 'kysely';
import type { Database } from '../schema.js';
import { groupCommit } from './group-commit.js';

/**
 * Every better-sqlite3 object this process makes stays reachable until it exits: the garbage
 * collector never destroys one. On Node 24, better-sqlite3 12's Statement and Database
 * destructors abort the process (`Assertion failed: (env) != nullptr` in
 * RemoveEnvironmentCleanupHook) when the collector runs them outside a Node environment: a
 * server on SQLite died within seconds of load. better-sqlite3 13 fixes it, but it needs Node 22
 * and we support Node 20 too. Objects still alive at exit are destroyed by Node's environment
 * cleanup, which is safe. What is kept: one Database per connection, and one Statement per
 * distinct SQL text, which the code's query shapes bound (they were cached already).
 */
const retained: object[] = [];

/** Reads the reader keeps while the file is unchanged (see `allKept`): a GET by id, a page. */
const MAX_ROWS_READ = 512;

function bindable(parameters: readonly unknown[]): readonly unknown[] {
  // Most statements bind no boolean: they are bound as they are, without a copy.
  if (!parameters.some((p) => typeof p === 'boolean')) return parameters;
  return parameters.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p));
}

/**
 * `snapshots`: for the reader, reads share one read transaction per turn of the event loop
 * instead of one each. Every read transaction takes and releases SQLite's WAL read lock, two
 * `fcntl` calls that cost more than the read itself under load; a turn's reads now pay them
 * once. The snapshot never outlives the turn (it ends at `setImmediate`), and the writer ends it
 * in the same synchronous step as each commit, so a read never misses a committed write of this
 * instance (and the commit's checkpoint is never held back by it); another process's write is
 * seen from the next turn on.
 */
function wrap(db: BetterSqlite3.Database, options: { snapshots?: boolean } = {}) {
  const cache = new Map<string, Statement>();
  retained.push(cache);
  const prepare = (sql: string): Statement => {
    let statement = cache.get(sql);
    if (!statement) {
      statement = new Statement(db.prepare(sql));
      cache.set(sql, statement);
    }
    return statement;
  };
  let snapshot = false;
  const begin = options.snapshots ? prepare('begin') : undefined;
  const commit = options.snapshots ? prepare('commit') : undefined;
  const endSnapshot = () => {
    if (!snapshot) return;
    snapshot = false;
    if (db.open && db.inTransaction) commit!.run([]);
  };
  const dataVersion = options.snapshots ? prepare('pragma data_version') : undefined;
  let version: unknown;
  /** Rows read in snapshots of this version of the file; emptied when another connection commits (see rowReader). */
  const rowsRead = new Map<string, readonly Record<string, unknown>[]>();
  const beginSnapshot = () => {
    if (snapshot || !begin) return;
    begin.run([]);
    snapshot = true;
    setImmediate(endSnapshot);
    // Starts the snapshot's read transaction: the number changes when any other connection (the
    // writer of this or another process) has committed since the last snapshot.
    const now = dataVersion!.all([])[0]?.data_version;
    if (now !== version) {
      version = now;
      rowsRead.clear();
    }
  };
  return {
    close: () => db.close(),
    endSnapshot,
    /** Whether a transaction is open on the connection (SQLite rolls one back whole on some errors). */
    inTransaction: () => db.open && db.inTransaction,
    /** A statement that returns nothing, at once (savepoints). */
    exec: (sql: string) => void prepare(sql).run([]),
    /** How long a statement waits for another connection's lock (exec: no Statement object is made). */
    setBusyTimeout: (ms: number) => db.exec(`pragma busy_timeout = ${Math.max(0, Math.floor(ms))}`),
    prepare,
    /** The rows of a read (a statement that returns rows), in the turn's snapshot on the reader. */
    all<R>(statement: Statement, parameters: readonly unknown[]): R[] {
      beginSnapshot();
      return statement.all(parameters) as R[];
    },
    /**
     * On the reader: the rows of a read, kept while the file is unchanged (a snapshot of the same
     * data version reads the same rows), frozen, so that no caller can change what the next is
     * given. At most MAX_ROWS_READ reads are kept, the oldest dropped first.
     */
    allKept<R>(sql: string, parameters: readonly unknown[]): R[] {
      beginSnapshot();
      const key = sql + '\u0000' + JSON.stringify(parameters);
      let rows = rowsRead.get(key);
      if (!rows) {
        const read = prepare(sql).all(parameters);
        for (const row of read) Object.freeze(row);
        rows = Object.freeze(read);
        if (rowsRead.size >= MAX_ROWS_READ) rowsRead.delete(rowsRead.keys().next().value!);
        rowsRead.set(key, rows);
      }
      return rows as unknown as R[];
    },
  };
}

/**
 * A prepared statement. A read returns its rows as arrays (better-sqlite3's raw mode), made into
 * objects here: better-sqlite3 builds each row object through V8's C++ API, property by property,
 * which costs about a quarter more than the arrays and this loop (a page of 101 API keys: ~220 µs
 * against ~165 µs). The objects are the same: every column by name, in order, a later column of
 * the same name winning.
 */
class Statement {
  readonly reader: boolean;
  private readonly columns: string[];

  constructor(private readonly statement: BetterSqlite3.Statement) {
    this.reader = statement.reader;
    this.columns = this.reader ? statement.columns().map((c) => c.name) : [];
    if (this.reader) statement.raw(true);
  }

  all(parameters: readonly unknown[]): Record<string, unknown>[] {
    const arrays = this.statement.all(...bindable(parameters)) as unknown[][];
    const { columns } = this;
    const rows = new Array<Record<string, unknown>>(arrays.length);
    for (let r = 0; r < arrays.length; r++) {
      const values = arrays[r]!;
      const row: Record<string, unknown> = {};
      for (let c = 0; c < columns.length; c++) row[columns[c]!] = values[c];
      rows[r] = row;
    }
    return rows;
  }

  run(parameters: readonly unknown[]): BetterSqlite3.RunResult {
    return this.statement.run(...bindable(parameters));
  }
}

type Wrapped = ReturnType<typeof wrap>;

class SqliteConnection implements DatabaseConnection {
  constructor(private readonly db: Wrapped) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const statement = this.db.prepare(query.sql);
    if (statement.reader) return { rows: this.db.all<R>(statement, query.parameters) };
    const { changes, lastInsertRowid } = statement.run(query.parameters);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not used with SQLite');
  }
}

/** One connection, handed to one holder at a time, waiters served first come first served. */
class FifoSqliteDriver implements Driver {
  private readonly waiting: (() => void)[] = [];
  private held = false;
  private readonly connection: SqliteConnection;

  /** `beforeCommit` runs in the same synchronous step as the commit: nothing can come between. */
  constructor(
    private readonly db: Wrapped,
    private readonly beforeCommit: () => void = () => {},
    /** Set for a file's writer: `begin immediate` then waits for another connection's lock on timers (see beginTransaction). */
    private readonly busyTimeoutMs?: number,
  ) {
    this.connection = new SqliteConnection(db);
  }

  async init(): Promise<void> {}

  acquireConnection(): Promise<DatabaseConnection> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve(this.connection);
    }
    return new Promise((resolve) => this.waiting.push(() => resolve(this.connection)));
  }

  async releaseConnection(): Promise<void> {
    const next = this.waiting.shift();
    if (next) next();
    else this.held = false;
  }

  /**
   * `begin immediate` takes the file's write lock at the start, waiting for it up to the busy
   * timeout. A plain (deferred) `begin` would first read under a snapshot and only then ask for
   * the lock; if another process (the CLI, another server) committed in between, SQLite refuses
   * the write at once with SQLITE_BUSY_SNAPSHOT, without waiting.
   */
  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    if (this.busyTimeoutMs === undefined) return void (await connection.executeQuery(CompiledQuery.raw('begin immediate')));
    // SQLite waits for another connection's lock inside the call, which blocks the event loop:
    // had a connection of this process (a second store on the same file) taken the lock and then
    // awaited anything, it could never finish, and both would wait out the busy timeout. So
    // the lock is asked for without waiting, and the waits between tries are timers.
    const deadline = Date.now() + this.busyTimeoutMs;
    for (let pauseMs = 1; ; pauseMs = Math.min(pauseMs * 2, 50)) {
      this.db.setBusyTimeout(0);
      try {
        await connection.executeQuery(CompiledQuery.raw('begin immediate'));
        return;
      } catch (error) {
        if (!isSqliteBusy(error) || Date.now() >= deadline) throw error;
      } finally {
        this.db.setBusyTimeout(this.busyTimeoutMs);
      }
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    this.beforeCommit();
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    // SQLite may have rolled it back already (a full disk, an I/O error): nothing is left to undo.
    if (!this.db.inTransaction()) return;
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async destroy(): Promise<void> {
    this.db.close();
  }
}

class EdgeplaneSqliteDialect implements Dialect {
  constructor(
    private readonly db: Wrapped,
    private readonly beforeCommit?: () => void,
    private readonly busyTimeoutMs?: number,
  ) {}
  createAdapter() {
    return new SqliteAdapter();
  }
  createDriver() {
    return new FifoSqliteDriver(this.db, this.beforeCommit, this.busyTimeoutMs);
  }
  createQueryCompiler() {
    return new SqliteQueryCompiler();
  }
  createIntrospector(db: Kysely<unknown>) {
    return new SqliteIntrospector(db);
  }
}

/** `busyTimeoutMs`: how long a statement waits for another process's lock on the file (from the open on). */
function connect(file: string, readonly: boolean, busyTimeoutMs: number): BetterSqlite3.Database {
  const raw = new BetterSqlite3(file, { readonly, timeout: busyTimeoutMs });
  retained.push(raw);
  // exec rather than pragma(): it makes no Statement object (see `retained`).
  if (!readonly) raw.exec('pragma journal_mode = WAL; pragma synchronous = NORMAL');
  raw.exec('pragma foreign_keys = ON');
  return raw;
}

/**
 * A read on a connection no transaction holds: better-sqlite3 is synchronous, so nothing can
 * interleave, and the rows are returned at once (a failure is thrown).
 */
function rowReader(connection: Wrapped) {
  return <R>(sql: string, parameters: readonly unknown[]): R[] => connection.allKept<R>(sql, parameters);
}

/**
 * One statement on a connection a transaction holds (the writer, inside withTx's work), at once:
 * the rows of a read, none for a write. Kysely's executor would take the same statement through
 * its plugins, its connection provider and a few promises.
 */
function statementRunner(connection: Wrapped) {
  return <R>(sql: string, parameters: readonly unknown[]): R[] => {
    const statement = connection.prepare(sql);
    if (statement.reader) return connection.all<R>(statement, parameters);
    statement.run(parameters);
    return [];
  };
}

/**
 * Two connections: `db` for transactions and writes, `reader` for reads outside transactions.
 * In WAL mode the reader sees every committed change and never an open transaction's, and it
 * need not wait while a write transaction holds the writer (an in-memory database has one).
 */
export function openSqlite(
  file: string,
  options: { busyTimeoutMs: number },
): {
  db: Kysely<Database>;
  reader: Kysely<Database>;
  /** Write transactions, committed in groups (group-commit.ts). */
  transaction: <T>(work: (trx: Transaction<Database>) => Promise<T>) => Promise<T>;
  readRows: <R>(sql: string, parameters: readonly unknown[]) => R[] | Promise<R[]>;
  writerRows: <R>(sql: string, parameters: readonly unknown[]) => R[];
  onCommit: (listener: () => void) => () => void;
  close: () => Promise<void>;
} {
  const listeners = new Set<() => void>();
  const committed = () => {
    for (const listener of listeners) listener();
  };
  const onCommit = (listener: () => void) => {
    listeners.add(listener);
    return () => void listeners.delete(listener);
  };
  if (file === ':memory:') {
    // One connection: reads must wait for the transaction that holds it, so they go through the driver.
    const connection = wrap(connect(file, false, options.busyTimeoutMs));
    const db = new Kysely<Database>({ dialect: new EdgeplaneSqliteDialect(connection) });
    const readRows = async <R>(sql: string, parameters: readonly unknown[]) => (await db.executeQuery<R>(CompiledQuery.raw(sql, [...parameters]))).rows;
    return {
      db,
      reader: db,
      transaction: groupCommit(db, connection, committed),
      readRows,
      writerRows: statementRunner(connection),
      onCommit,
      close: () => db.destroy(),
    };
  }
  // Owner-only, whichever command creates them: SQLite would make the file 0644, and it gives
  // the -wal and -shm files the database file's mode. An empty file is an empty database.
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.closeSync(fs.openSync(file, 'a', 0o600));
  // The writer first: it creates the file and puts it in WAL mode; a read-only connection cannot.
  const writer = wrap(connect(file, false, options.busyTimeoutMs));
  const readConnection = wrap(connect(file, true, options.busyTimeoutMs), { snapshots: true });
  const db = new Kysely<Database>({ dialect: new EdgeplaneSqliteDialect(writer, readConnection.endSnapshot, options.busyTimeoutMs) });
  const reader = new Kysely<Database>({ dialect: new EdgeplaneSqliteDialect(readConnection) });
  return {
    db,
    reader,
    transaction: groupCommit(db, writer, committed),
    readRows: rowReader(readConnection),
    writerRows: statementRunner(writer),
    onCommit,
    async close() {
      await reader.destroy();
      await db.destroy();
    },
  };
}

/** The file is locked by another connection past the busy timeout (SQLITE_BUSY, SQLITE_LOCKED and their extended codes). */
export function isSqliteBusy(error: unknown): boolean {
  return /^SQLITE_(BUSY|LOCKED)/.test((error as { code?: string })?.code ?? '');
}

export function isSqliteForeignKeyError(error: unknown): boolean {
  return (error as { code?: string })?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/** `UNIQUE constraint failed: bot_users.account_id, bot_users.name` → `bot_users_account_id_name_key`. */
export function sqliteUniqueTarget(error: unknown): string | undefined {
  const e = error as { code?: string; message?: string };
  if (e?.code !== 'SQLITE_CONSTRAINT_UNIQUE' && e?.code !== 'SQLITE_CONSTRAINT_PRIMARYKEY') return undefined;
  const m = /constraint failed: (.+)$/.exec(e.message ?? '');
  if (!m) return 'unknown';
  const columns = m[1]!.split(',').map((c) => c.trim());
  const table = columns[0]!.split('.')[0];
  return `${table}_${columns.map((c) => c.split('.')[1]).join('_')}_key`;
}
