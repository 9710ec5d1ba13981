// The children of failover and weighted backends: which kinds a child may be, and the check
// that children do not lead back to their parent.
import type { LinkItem } from '../../crud/references.js';
import type { ScopedDb } from '../../db/scoped.js';
import { BACKEND_KINDS, backendNotFound } from '../../edge-config/values/named-resources.js';
import { backendErrors } from './backend.errors.js';

export const MAX_CHILDREN = 32;

/** The 400 for a child that is no backend of the account. */
export const childNotFound = backendNotFound('backends');

/** Every backend kind refuses to be deleted while something uses it, naming what does. */
export const backendInUse = (id: string, referrers: readonly string[]) => backendErrors.backendInUse({ id, referrers });

/** How failover and weighted backends keep their children: rows of backend_links, checked for cycles. */
export const backendChildren = {
  in: 'join',
  field: 'backends',
  table: 'backend_links',
  from: 'parent_id',
  to: 'child_id',
  kinds: BACKEND_KINDS,
  notFound: childNotFound,
  check: checkNoCycle,
} as const;

/**
 * Children must not lead back to the parent: walks the links breadth first, one query per
 * level, and reports the first cycle found as a path.
 */
export async function checkNoCycle(db: ScopedDb, parentId: string, children: readonly LinkItem[]): Promise<void> {
  const ids = children.map((c) => c.id);
  if (ids.includes(parentId)) throw backendErrors.backendCycle({ cycle: [parentId, parentId] });
  const cameFrom = new Map<string, string>(ids.map((id) => [id, parentId]));
  let frontier = [...new Set(ids)];
  while (frontier.length > 0) {
    const links = await db.select('backend_links', { parent_id: frontier });
    const next: string[] = [];
    for (const { parent_id, child_id } of links) {
      if (child_id === parentId) {
        const path = [parentId];
        for (let at: string | undefined = parent_id; at !== undefined && at !== parentId; at = cameFrom.get(at)) path.splice(1, 0, at);
        throw backendErrors.backendCycle({ cycle: [...path, parentId] });
      }
      if (!cameFrom.has(child_id)) {
        cameFrom.set(child_id, parent_id);
        next.push(child_id);
      }
    }
    frontier = next;
  }
}
