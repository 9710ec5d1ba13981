// How a kind says it keeps the id of another resource: one declaration per reference, with where
// the id is kept (a column, a join table, rows the kind's hooks write) and what it may name. The
// registry (kinds.ts) turns them, with parents and the modules' targets, into one existence check
// and one delete rule; modules name their targets with the same `Target`.
import type { ApiError } from '../core/errors.js';
import type { OwnedTable, RowOf, ScopedDb } from '../db/scoped.js';

/** What an id may name: the kinds it may be of, and the 400 for one that is none of them in the account. */
export interface Target {
  kinds: readonly string[];
  notFound(id: string): ApiError;
}

/** One entry of a list stored in a join table: the referenced id and, where the table has one, a weight. */
export interface LinkItem {
  id: string;
  weight: number | null;
}

/**
 * The join tables (ip_restriction_policies, backend_links, …): rows with no id of their own, each with the
 * owner column, the target column, account_id and position. Told by their shape, not named, because the
 * kinds declare their tables (src/db/schema.ts) and src/crud may not depend on the kinds.
 */
export type JoinTable = { [T in OwnedTable]: RowOf<T> extends { position: number } ? ('id' extends keyof RowOf<T> ? never : T) : never }[OwnedTable];

/** An id in a column of this kind's row (`owner_id`, `certificate_id`). */
export interface ColumnReference<Row> extends Target {
  in: 'column';
  column: keyof Row & string;
  /** When the referenced resource is deleted: refuse (409 naming this row) or delete this row too. */
  onDelete: 'restrict' | 'cascade';
}

/**
 * A body field of ids (`ip_policy_ids`, `backends`) kept as the rows of a join table, in order:
 * read into the row as `LinkItem`s before it is shown. Deleting a resource it names is refused.
 */
export interface JoinReference extends Target {
  in: 'join';
  /** The body and response field. */
  field: string;
  table: JoinTable;
  /** The column holding this resource's id. */
  from: string;
  /** The column holding the referenced id. */
  to: string;
  /** Whether the table has a `weight` column. */
  weighted?: boolean;
  /** The body's value as ordered items; refuses bad values (counts, duplicates) before any query. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each field's body value has its own shape, checked by the schema first
  parse(value: any): LinkItem[];
  /**
   * Checks that need the database beyond existence (a cycle), inside the transaction. A write
   * of a field with a check holds the account's lock on the join table from the transaction's
   * start (ScopedDb.serialize), so the check sees every such write committed before it.
   */
  check?(db: ScopedDb, ownerId: string, items: readonly LinkItem[]): Promise<void>;
}

/**
 * Ids in rows of another table that the kind's hooks write themselves (a TCP edge's hostports):
 * the hooks check them; deleting a resource they name is refused, naming the row of this kind.
 */
export interface RowsReference {
  in: 'rows';
  kinds: readonly string[];
  table: OwnedTable;
  column: string;
  /** The column naming the row of this kind. */
  referrer: string;
}

/**
 * Everywhere a kind keeps ids of other resources, said one way: where the id is kept, what it
 * may name and what a delete of the named resource does. The registry (kinds.ts) turns these,
 * the parents and the modules' targets into one existence check and one delete rule.
 */
export type Reference<Row> = ColumnReference<Row> | JoinReference | RowsReference;
