// The account's IP revision: bumped in the transaction of every change that can alter which
// addresses a restriction allows, so every instance knows when to recompile its matcher.
import type { ScopedDb } from '../../db/scoped.js';

export async function bumpIpRevision(db: ScopedDb): Promise<void> {
  await db.increment('ip_revisions', 'revision');
}

export async function readIpRevision(db: ScopedDb): Promise<number> {
  const [row] = await db.select('ip_revisions', {});
  return Number(row?.revision ?? 0);
}

/** Ids of the IP restrictions that use the policy. */
export async function restrictionsUsing(db: ScopedDb, policyId: string): Promise<string[]> {
  const rows = await db.select('ip_restriction_policies', { ip_policy_id: policyId }, { orderBy: ['ip_restriction_id'] });
  return rows.map((r) => r.ip_restriction_id);
}
