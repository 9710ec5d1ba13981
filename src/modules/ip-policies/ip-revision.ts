// The account's IP revision: bumped in the transaction of every change that can alter which
// addresses a restriction allows, so every instance knows when to recompile its matcher.
import { sql } from 'kysely';
import { errors } from '../../core/errors.js';
import { hasPrefix } from '../../core/ids.js';
import type { Executor, Scope } from '../../db/store.js';

export async function bumpIpRevision(executor: Executor, scope: Scope): Promise<void> {
  await executor
    .insertInto('ip_revisions')
    .values({ account_id: scope.accountId, revision: 1 })
    .onConflict((oc) => oc.column('account_id').doUpdateSet({ revision: sql<number>`ip_revisions.revision + 1` }))
    .execute();
}

export async function readIpRevision(executor: Executor, scope: Scope): Promise<number> {
  const row = await executor.selectFrom('ip_revisions').select('revision').where('account_id', '=', scope.accountId).executeTakeFirst();
  return Number(row?.revision ?? 0);
}

/** Ids of the IP restrictions that use the policy. */
export async function restrictionsUsing(executor: Executor, scope: Scope, policyId: string): Promise<string[]> {
  const rows = await executor
    .selectFrom('ip_restriction_policies as p')
    .innerJoin('ip_restrictions as r', 'r.id', 'p.ip_restriction_id')
    .select('r.id')
    .where('r.account_id', '=', scope.accountId)
    .where('p.ip_policy_id', '=', policyId)
    .orderBy('r.id')
    .execute();
  return rows.map((r) => r.id);
}

/** Refuses (400 naming the first) any id in `ids` that is not an IP policy of the account. */
export async function requirePolicies(executor: Executor, scope: Scope, field: string, ids: readonly string[]): Promise<void> {
  const wellFormed = ids.filter((id) => hasPrefix(id, 'ipp'));
  const found = wellFormed.length === 0 ? [] : await executor.selectFrom('ip_policies').select('id').where('account_id', '=', scope.accountId).where('id', 'in', wellFormed).execute();
  const known = new Set(found.map((r) => r.id));
  const missing = ids.find((id) => !known.has(id));
  if (missing !== undefined) throw errors.ipPolicyNotFound({ field, id: missing });
}
