// IP policy rules: one CIDR, allow or deny, in one policy. CIDRs are stored in canonical
// network form and are unique within a policy. A rule of a policy that an IP restriction uses
// decides who may reach the account, so only admins may change those.
import { errors } from '../../core/errors.js';
import type { RequestContext } from '../../core/context.js';
import { describedChanges, describedColumns } from '../../core/schema.js';
import { defineResource } from '../../crud/resource.js';
import type { IpPolicyRulesTable } from '../../db/schema.js';
import type { Executor, Store } from '../../db/store.js';
import { parseCidr } from '../../lib/ip/cidr.js';
import { bumpIpRevision, requirePolicies, restrictionsUsing } from '../ip-policies/ip-revision.js';
import { IpPolicyRule, IpPolicyRuleCreate, IpPolicyRuleUpdate } from './ip-policy-rule.schema.js';

/** The canonical form of a CIDR, or the 400 that says what is wrong with it. */
export function canonicalCidr(text: string): string {
  const parsed = parseCidr(text);
  if (parsed.ok) return parsed.cidr;
  if (parsed.problem === 'not-network') throw errors.cidrNotNetwork({ cidr: text, suggestion: parsed.suggestion });
  if (parsed.problem === 'missing-mask') throw errors.cidrMissingMask({ cidr: text });
  throw errors.invalidCidr({ cidr: text });
}

async function requireAdminIfEnforcing(executor: Executor, ctx: RequestContext, policyId: string): Promise<void> {
  if (ctx.principal.role === 'admin') return;
  if ((await restrictionsUsing(executor, ctx.scope, policyId)).length > 0) {
    throw errors.adminRequired({ action: 'change the rules of an IP policy that an IP restriction uses' });
  }
}

export function ipPolicyRulesResource(store: Store, onChange: (accountId: string) => void) {
  return defineResource(store, {
    kind: 'ip_policy_rule',
    title: 'IP policy rule',
    prefix: 'ipr',
    path: '/ip_policy_rules',
    listKey: 'ip_policy_rules',
    table: 'ip_policy_rules',
    schemas: { resource: IpPolicyRule, create: IpPolicyRuleCreate, update: IpPolicyRuleUpdate },
    immutable: ['ip_policy_id', 'action'],

    prepare: (_ctx, body) => ({
      row: { cidr: canonicalCidr(body.cidr), action: body.action, ip_policy_id: body.ip_policy_id, ...describedColumns(body) },
    }),

    patch: (_ctx, body): Partial<IpPolicyRulesTable> => ({ ...describedChanges(body), ...(body.cidr != null && { cidr: canonicalCidr(body.cidr) }) }),

    toApi: (row: IpPolicyRulesTable, ctx) => ({
      id: row.id,
      created_at: row.created_at,
      description: row.description,
      metadata: row.metadata,
      cidr: row.cidr,
      ip_policy: { id: row.ip_policy_id, uri: `${ctx.baseUrl}/ip_policies/${row.ip_policy_id}` },
      action: row.action,
    }),

    hooks: {
      async beforeCreate(trx, ctx, row) {
        await requirePolicies(trx, ctx.scope, 'ip_policy_id', [row.ip_policy_id]);
        await requireAdminIfEnforcing(trx, ctx, row.ip_policy_id);
      },
      async beforeUpdate(trx, ctx, current) {
        await requireAdminIfEnforcing(trx, ctx, current.ip_policy_id);
      },
      async afterWrite(trx, ctx) {
        await bumpIpRevision(trx, ctx.scope);
      },
      async beforeDelete(trx, ctx, row) {
        await requireAdminIfEnforcing(trx, ctx, row.ip_policy_id);
        await bumpIpRevision(trx, ctx.scope);
      },
      afterCommit(ctx) {
        onChange(ctx.scope.accountId);
      },
      onUniqueViolation(target, row) {
        return target === 'ip_policy_rules_ip_policy_id_cidr_key' ? errors.duplicateRule({ cidr: String(row.cidr), policyId: String(row.ip_policy_id) }) : undefined;
      },
    },
  });
}
