// Generic account-scoped queries over any resource table. Every function takes the executor
// and the scope first; none can be called without naming the account.
import type { Kysely } from 'kysely';
import type { Executor, Scope } from '../db/store.js';
import type { Database } from '../db/schema.js';

export type TableName = keyof Database;

export interface BaseRow {
  id: string;
  account_id: string;
  created_at: string;
}

// Kysely cannot type a query over a table chosen at run time; the row type is restored by the
// callers' generics.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const loose = (executor: Executor) => executor as unknown as Kysely<any>;

export async function findById<Row extends BaseRow>(executor: Executor, scope: Scope, table: TableName, id: string): Promise<Row | undefined> {
  return (await loose(executor).selectFrom(table).selectAll().where('account_id', '=', scope.accountId).where('id', '=', id).executeTakeFirst()) as Row | undefined;
}

export async function exists(executor: Executor, scope: Scope, table: TableName, id: string): Promise<boolean> {
  const row = await loose(executor).selectFrom(table).select('id').where('account_id', '=', scope.accountId).where('id', '=', id).executeTakeFirst();
  return row !== undefined;
}

/** One page, newest first; `hasMore` is true exactly when an older row exists. */
export async function listPage<Row extends BaseRow>(executor: Executor, scope: Scope, table: TableName, page: { limit: number; beforeId?: string }): Promise<{ rows: Row[]; hasMore: boolean }> {
  let query = loose(executor).selectFrom(table).selectAll().where('account_id', '=', scope.accountId);
  if (page.beforeId) query = query.where('id', '<', page.beforeId);
  const rows = (await query.orderBy('id', 'desc').limit(page.limit + 1).execute()) as Row[];
  const hasMore = rows.length > page.limit;
  return { rows: hasMore ? rows.slice(0, page.limit) : rows, hasMore };
}

export async function insert<Row extends BaseRow>(executor: Executor, table: TableName, row: Row): Promise<void> {
  await loose(executor).insertInto(table).values(row).execute();
}

export async function updateById(executor: Executor, scope: Scope, table: TableName, id: string, changes: Record<string, unknown>): Promise<void> {
  if (Object.keys(changes).length === 0) return;
  await loose(executor).updateTable(table).set(changes).where('account_id', '=', scope.accountId).where('id', '=', id).execute();
}

export async function deleteById(executor: Executor, scope: Scope, table: TableName, id: string): Promise<boolean> {
  const result = await loose(executor).deleteFrom(table).where('account_id', '=', scope.accountId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
