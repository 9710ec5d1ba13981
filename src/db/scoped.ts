// The account-scoped executor: the only way code outside db/ and crud/ reaches account-owned
// rows. Every query it runs adds `account_id = <scope>` itself, so no query can forget it. It knows
// tables and scoping, not features; the few reads that look across accounts go through a
// CrossAccountReader (db/cross-account.ts).
//
// The queries that every request runs (a row by id, a page of a list) are built with Kysely once
// per table and dialect and kept as SQL with named parameter slots; a request only binds values.
// Building and compiling them again per request was a quarter of the server's busy time.
import { CompiledQuery, sql, type Kysely } from 'kysely';
import type { Scope } from '../core/context.js';
import { then, type MaybePromise } from '../core/maybe.js';
import type { Database, ServiceTable } from './schema.js';
import { read, withTx, type Dialect, type Executor, type Store } from './store.js';

/** Every table whose rows belong to one account (all of them carry `account_id`). */
export type OwnedTable = Exclude<keyof Database, ServiceTable>;
export type RowOf<T extends OwnedTable> = Database[T];
type Column<T extends OwnedTable> = keyof RowOf<T> & string;
/** Column equals value, or (an array) is one of the values; an empty array matches nothing. */
export type Filter<T extends OwnedTable> = { [K in Column<T>]?: RowOf<T>[K] | readonly RowOf<T>[K][] };
export type NewRow<T extends OwnedTable> = Omit<RowOf<T>, 'account_id'>;

/**
 * A row lock taken on PostgreSQL for the rest of the transaction (SQLite runs one write
 * transaction at a time, so it needs none): `update` before changing or deleting a row,
 * `key share` on a row that the change is about to reference, so that it cannot be deleted
 * before the change commits.
 */
export type Lock = 'update' | 'key share';

export interface SelectOptions<T extends OwnedTable> {
  lock?: Lock;
  orderBy?: readonly Column<T>[];
}

// Kysely cannot type a query over a table chosen at run time; the row types are restored by the
// signatures above.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = Kysely<any>;
const loose = (executor: Executor) => executor as unknown as Loose;

/** A named slot in a query compiled once; its value is bound per execution. */
class Slot {
  constructor(readonly name: string) {}
}

interface Prepared {
  sql: string;
  slots: string[];
}

const prepared = new Map<string, Prepared>();
/** The compiled `find` of each table without a lock, by dialect. */
const unlockedFinds: Record<Dialect, Map<string, Prepared>> = { sqlite: new Map(), postgres: new Map() };

function prepare(dialect: Dialect, key: string, executor: Executor, build: (db: Loose) => { compile(): CompiledQuery }): Prepared {
  const cacheKey = `${dialect}:${key}`;
  let entry = prepared.get(cacheKey);
  if (!entry) {
    const compiled = build(loose(executor)).compile();
    entry = {
      sql: compiled.sql,
      slots: compiled.parameters.map((p) => {
        if (!(p instanceof Slot)) throw new Error(`${key}: every value of a compiled query must be a slot`);
        return p.name;
      }),
    };
    prepared.set(cacheKey, entry);
  }
  return entry;
}

const slot = (name: string) => new Slot(name) as unknown as string;

/** An inserted row's `account_id`: the scope's, bound apart from the row's own values (which never name it). */
const ACCOUNT_SLOT = '\0account';

/** `column = value` (`in` for an array, `is null` for null) for each entry of the filter. */
function where<Q>(query: Q, filter: Record<string, unknown>): Q {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the builder's where() is generic over columns named at run time
  let q = query as any;
  for (const [column, value] of Object.entries(filter)) {
    if (value === undefined) continue;
    q = Array.isArray(value) ? q.where(column, 'in', value) : value === null ? q.where(column, 'is', null) : q.where(column, '=', value);
  }
  return q as Q;
}

function withLock<Q extends { forUpdate(): Q; forKeyShare(): Q }>(query: Q, lock: Lock | undefined): Q {
  if (lock === 'update') return query.forUpdate();
  if (lock === 'key share') return query.forKeyShare();
  return query;
}

const matchesNothing = (filter: Record<string, unknown>) => Object.values(filter).some((v) => Array.isArray(v) && v.length === 0);

type RunRows = <R>(sql: string, parameters: readonly unknown[]) => MaybePromise<R[]>;

export class ScopedDb {
  /**
   * `runRows`: how the compiled queries run without the query builder: for a reader, the store's
   * `readRows`; in a SQLite transaction, its `writerRows`.
   */
  constructor(
    private readonly executor: Executor,
    readonly scope: Scope,
    private readonly dialect: Dialect,
    private readonly runRows?: RunRows,
  ) {}

  /** The rows: at once on SQLite (see Store.readRows and writerRows), else a promise. */
  private run<R>(query: Prepared, values: Record<string, unknown>, account?: string): MaybePromise<R[]> {
    const parameters = query.slots.map((name) => (name === ACCOUNT_SLOT ? account : values[name]));
    if (this.runRows) return this.runRows<R>(query.sql, parameters);
    return this.executor.executeQuery<R>(CompiledQuery.raw(query.sql, parameters)).then((result) => result.rows);
  }

  /** The row with this id in the account, or undefined: at once on a SQLite reader, else a promise. */
  find<T extends OwnedTable>(table: T, id: string, lock?: Lock): MaybePromise<RowOf<T> | undefined> {
    const locked = lock && this.dialect === 'postgres' ? lock : undefined;
    // Every GET of one resource runs this: its unlocked query is found by the table's name alone.
    let query = locked ? undefined : unlockedFinds[this.dialect].get(table);
    if (!query) {
      query = prepare(this.dialect, `find:${table}:${locked ?? ''}`, this.executor, (db) =>
        withLock(
          db
            .selectFrom(table as string)
            .selectAll()
            .where('account_id', '=', slot('account'))
            .where('id', '=', slot('id')),
          locked,
        ),
      );
      if (!locked) unlockedFinds[this.dialect].set(table, query);
    }
    return then(this.run<RowOf<T>>(query, { account: this.scope.accountId, id }), (rows) => rows[0]);
  }

  /**
   * One page of the account's rows, newest (highest id) first, optionally only those older than
   * `beforeId` and with `column = value` for the given filter; `hasMore` says an older row exists.
   * At once on a SQLite reader, else a promise.
   */
  page<T extends OwnedTable>(
    table: T,
    page: { limit: number; beforeId?: string; equal?: { column: Column<T>; value: string } },
  ): MaybePromise<{ rows: RowOf<T>[]; hasMore: boolean }> {
    const { beforeId, equal } = page;
    const key = `page:${table}:${beforeId === undefined ? '' : 'before'}:${equal?.column ?? ''}`;
    const query = prepare(this.dialect, key, this.executor, (db) => {
      let q = db
        .selectFrom(table as string)
        .selectAll()
        .where('account_id', '=', slot('account'));
      if (equal) q = q.where(equal.column as string, '=', slot('equal'));
      if (beforeId !== undefined) q = q.where('id', '<', slot('before'));
      return q.orderBy('id', 'desc').limit(slot('limit') as unknown as number);
    });
    return then(this.run<RowOf<T>>(query, { account: this.scope.accountId, equal: equal?.value, before: beforeId, limit: page.limit + 1 }), (rows) => {
      const hasMore = rows.length > page.limit;
      return { rows: hasMore ? rows.slice(0, page.limit) : rows, hasMore };
    });
  }

  async exists<T extends OwnedTable>(table: T, id: string, lock?: Lock): Promise<boolean> {
    return (await this.find(table, id, lock)) !== undefined;
  }

  async select<T extends OwnedTable>(table: T, filter: Filter<T>, options: SelectOptions<T> = {}): Promise<RowOf<T>[]> {
    if (matchesNothing(filter)) return [];
    let query = where(
      loose(this.executor)
        .selectFrom(table as string)
        .selectAll()
        .where('account_id', '=', this.scope.accountId),
      filter,
    );
    for (const column of options.orderBy ?? []) query = query.orderBy(column);
    if (options.lock && this.dialect === 'postgres') query = withLock(query, options.lock);
    return (await query.execute()) as RowOf<T>[];
  }

  async insert<T extends OwnedTable>(table: T, rows: NewRow<T> | readonly NewRow<T>[]): Promise<void> {
    const list = (Array.isArray(rows) ? rows : [rows]) as NewRow<T>[];
    if (list.length === 0) return;
    if (list.length === 1) {
      // A resource's own row: the statement for its columns is compiled once.
      const row = list[0] as Record<string, unknown>;
      // The scope names the account, whatever the row says.
      const columns = Object.keys(row).filter((column) => column !== 'account_id');
      const query = prepare(this.dialect, `insert:${table}:${columns.join(',')}`, this.executor, (db) =>
        db.insertInto(table as string).values({ ...Object.fromEntries(columns.map((c) => [c, slot(c)])), account_id: slot(ACCOUNT_SLOT) }),
      );
      await this.run(query, row, this.scope.accountId);
      return;
    }
    await loose(this.executor)
      .insertInto(table as string)
      .values(list.map((row) => ({ ...row, account_id: this.scope.accountId })))
      .execute();
  }

  /** Changes the matching rows; returns how many matched. */
  async update<T extends OwnedTable>(table: T, filter: Filter<T>, changes: Partial<NewRow<T>>): Promise<number> {
    if (Object.keys(changes).length === 0 || matchesNothing(filter)) return 0;
    const query = where(
      loose(this.executor)
        .updateTable(table as string)
        .set(changes as Record<string, unknown>)
        .where('account_id', '=', this.scope.accountId),
      filter,
    );
    return Number((await query.executeTakeFirst()).numUpdatedRows);
  }

  /** Deletes the matching rows; returns how many there were. */
  async delete<T extends OwnedTable>(table: T, filter: Filter<T>): Promise<number> {
    if (matchesNothing(filter)) return 0;
    const query = where(
      loose(this.executor)
        .deleteFrom(table as string)
        .where('account_id', '=', this.scope.accountId),
      filter,
    );
    return Number((await query.executeTakeFirst()).numDeletedRows);
  }

  /**
   * Makes this transaction the only one of the account changing `what` until it ends. For checks
   * that read many rows and that row locks cannot protect, because the rows that matter are not
   * known in advance: two PATCHes that each add one edge of a ring both see no cycle at READ
   * COMMITTED. Take it before any row lock, so that two writers never wait for each other in a
   * circle. PostgreSQL: a transaction-level advisory lock on the account and `what` (a hash
   * collision only makes unrelated writers wait); SQLite runs one write transaction at a time.
   */
  async serialize(what: string): Promise<void> {
    if (this.dialect !== 'postgres') return;
    await sql`select pg_advisory_xact_lock(hashtextextended(${`${what}:${this.scope.accountId}`}, 0))`.execute(this.executor);
  }

  /**
   * As `serialize`, for every account at once: for values unique across accounts whose check
   * reads rows that no unique index can name (a wildcard covering another account's name).
   */
  async serializeAcrossAccounts(what: string): Promise<void> {
    if (this.dialect !== 'postgres') return;
    await sql`select pg_advisory_xact_lock(hashtextextended(${what}, 0))`.execute(this.executor);
  }

  /**
   * Tells every `Store.listen(channel)` of the database, with the account's id, when this
   * transaction commits, and never if it rolls back (PostgreSQL's NOTIFY, on the channel named for
   * the session's schema). SQLite has no notifications: its listeners poll.
   */
  async notifyAtCommit(channel: string): Promise<void> {
    if (this.dialect !== 'postgres') return;
    await sql`select pg_notify(${channel} || ':' || current_schema(), ${this.scope.accountId})`.execute(this.executor);
  }

  /**
   * Adds one to `column` of the account's row in a table that holds one row per account (its
   * primary key is `account_id`), making the row with 1 the first time: a counter that concurrent
   * transactions bump without losing a step.
   */
  async increment<T extends OwnedTable>(table: T, column: Column<T>): Promise<void> {
    const counter: string = `${table}.${column}`;
    // Every mutation bumps its account's configuration revision: compiled once.
    const query = prepare(this.dialect, `increment:${table}:${column}`, this.executor, (db) =>
      db
        .insertInto(table as string)
        .values({ account_id: slot('account'), [column]: slot('one') })
        .onConflict((oc) => oc.column('account_id').doUpdateSet((eb) => ({ [column]: eb(eb.ref(counter), '+', slot('one')) }))),
    );
    await this.run(query, { account: this.scope.accountId, one: 1 });
  }

  /**
   * The executor under `db`, for reads across accounts in its transaction: only
   * `readAcrossAccountsIn` (db/cross-account.ts) calls it, for a feature handed a CrossAccountReader.
   */
  static executorOf(db: ScopedDb): Executor {
    return db.executor;
  }
}

/** Reads of one account outside a transaction (they see every committed change). */
export function scopedReader(store: Store, scope: Scope): ScopedDb {
  return new ScopedDb(store.reader, scope, store.dialect, store.readRows);
}

/** One transaction over one account's rows, with the store's error translation. */
export function scopedTx<R>(store: Store, scope: Scope, work: (db: ScopedDb) => Promise<R>): Promise<R> {
  return withTx(store, (trx) => work(scopedIn(store, trx, scope)));
}

/** The account's rows in a transaction of withTx (`trx`); on SQLite its compiled statements run at once on the connection the transaction holds. */
export function scopedIn(store: Store, trx: Executor, scope: Scope): ScopedDb {
  return new ScopedDb(trx, scope, store.dialect, store.writerRows);
}

/** A read of one account's rows, with the store's error translation (a 503 when it is down). */
export function scopedRead<R>(store: Store, scope: Scope, work: (db: ScopedDb) => MaybePromise<R>): Promise<R> {
  return read(async () => work(scopedReader(store, scope)));
}
