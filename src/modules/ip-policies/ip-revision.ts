// The account's IP revision: bumped in the transaction of every change that can alter which
// addresses a restriction allows, so every instance knows when to recompile its matcher.
import { sql } from 'kysely';
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
