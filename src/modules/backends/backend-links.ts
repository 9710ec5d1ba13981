// What the five backend kinds share: which table holds which prefix, child links of failover and
// weighted backends, the checks on children (same account, at most 32, no cycle) and the check
// that nothing still uses a backend that is about to be deleted.
import { errors } from '../../core/errors.js';
import type { Database } from '../../db/schema.js';
import type { Executor, Scope } from '../../db/store.js';

export const BACKEND_TABLES = {
  bkdtg: 'backends_tunnel_group',
  bkdhr: 'backends_http_response',
  bkdsc: 'backends_static',
  bkdfo: 'backends_failover',
  bkdwd: 'backends_weighted',
} as const satisfies Record<string, keyof Database>;

export const MAX_CHILDREN = 32;

export interface Child {
  id: string;
  /** Weighted backends only. */
  weight: number | null;
}

function tableOf(id: string): (typeof BACKEND_TABLES)[keyof typeof BACKEND_TABLES] | undefined {
  const prefix = id.slice(0, id.indexOf('_'));
  return Object.hasOwn(BACKEND_TABLES, prefix) ? BACKEND_TABLES[prefix as keyof typeof BACKEND_TABLES] : undefined;
}

/** The ids among `ids` that are backends of the account: one query per backend kind named. */
async function existing(executor: Executor, scope: Scope, ids: readonly string[]): Promise<Set<string>> {
  const byTable = new Map<string, string[]>();
  for (const id of ids) {
    const table = tableOf(id);
    if (table) byTable.set(table, [...(byTable.get(table) ?? []), id]);
  }
  const found = new Set<string>();
  for (const [table, group] of byTable) {
    // Every backend table has id and account_id; Kysely cannot type a table chosen at run time.
    const rows = await executor.selectFrom(table as 'backends_static').select('id').where('account_id', '=', scope.accountId).where('id', 'in', group).execute();
    for (const row of rows) found.add(row.id);
  }
  return found;
}

/**
 * Children must be backends of the account, and must not lead back to the parent: walks the
 * links breadth first, one query per level, and reports the first cycle found as a path.
 */
export async function checkChildren(executor: Executor, scope: Scope, parentId: string, children: readonly Child[]): Promise<void> {
  const ids = children.map((c) => c.id);
  if (ids.includes(parentId)) throw errors.backendCycle({ cycle: [parentId, parentId] });
  const found = await existing(executor, scope, ids);
  const missing = ids.find((id) => !found.has(id));
  if (missing !== undefined) throw errors.backendNotFound({ field: 'backends', id: missing });

  const cameFrom = new Map<string, string>(ids.map((id) => [id, parentId]));
  let frontier = [...new Set(ids)];
  while (frontier.length > 0) {
    const links = await executor.selectFrom('backend_links').select(['parent_id', 'child_id']).where('account_id', '=', scope.accountId).where('parent_id', 'in', frontier).execute();
    const next: string[] = [];
    for (const { parent_id, child_id } of links) {
      if (child_id === parentId) {
        const path = [parentId];
        for (let at: string | undefined = parent_id; at !== undefined && at !== parentId; at = cameFrom.get(at)) path.splice(1, 0, at);
        throw errors.backendCycle({ cycle: [...path, parentId] });
      }
      if (!cameFrom.has(child_id)) {
        cameFrom.set(child_id, parent_id);
        next.push(child_id);
      }
    }
    frontier = next;
  }
}

export async function writeChildren(executor: Executor, scope: Scope, parentId: string, children: readonly Child[]): Promise<void> {
  await executor.deleteFrom('backend_links').where('parent_id', '=', parentId).execute();
  if (children.length === 0) return;
  await executor
    .insertInto('backend_links')
    .values(children.map((c, position) => ({ parent_id: parentId, child_id: c.id, account_id: scope.accountId, position, weight: c.weight })))
    .execute();
}

/** Each parent's children, in order. */
export async function readChildren(executor: Executor, parentIds: readonly string[]): Promise<Map<string, Child[]>> {
  const rows = await executor.selectFrom('backend_links').select(['parent_id', 'child_id', 'weight']).where('parent_id', 'in', parentIds).orderBy('parent_id').orderBy('position').execute();
  const out = new Map<string, Child[]>(parentIds.map((id) => [id, []]));
  for (const row of rows) out.get(row.parent_id)!.push({ id: row.child_id, weight: row.weight === null ? null : Number(row.weight) });
  return out;
}

/** Refuses (409 naming them) while anything uses the backend; then drops its own links. */
export async function releaseBackend(executor: Executor, scope: Scope, id: string): Promise<void> {
  const users = await executor.selectFrom('backend_links').select('parent_id').where('account_id', '=', scope.accountId).where('child_id', '=', id).orderBy('parent_id').execute();
  if (users.length > 0) throw errors.backendInUse({ id, referrers: users.map((u) => u.parent_id) });
  await executor.deleteFrom('backend_links').where('parent_id', '=', id).execute();
}
