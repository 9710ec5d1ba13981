// IP policy rules: one CIDR, allow or deny, in one policy. CIDRs are stored in canonical
// network form and are unique within a policy. A rule of a policy that an IP restriction uses
// decides who may reach the account, so only admins may change those.
import { errors } from '../../core/errors.js';
import { describedChanges, describedColumns } from '../../core/schema.js';
import { defineResource } from '../../crud/definition.js';
import { readOnlyMayOnlyRead } from '../../crud/authorization.js';
import type { IpPolicyRulesTable } from './ip-policy-rule.table.js';
import { parseCidr } from '../../lib/ip/cidr.js';
import { policyNotFound } from '../../edge-config/values/named-resources.js';
import { bumpIpRevision, restrictionsUsing } from '../ip-policies/ip-revision.js';
import { ipPolicyRuleCatalogue, ipPolicyRuleErrors } from './ip-policy-rule.errors.js';
import { IpPolicyRule, IpPolicyRuleCreate, IpPolicyRuleUpdate } from './ip-policy-rule.schema.js';

/** The canonical form of a CIDR, or the 400 that says what is wrong with it. */
export function canonicalCidr(text: string): string {
  const parsed = parseCidr(text);
  if (parsed.ok) return parsed.cidr;
  if (parsed.problem === 'not-network') throw ipPolicyRuleErrors.cidrNotNetwork({ cidr: text, suggestion: parsed.suggestion });
  if (parsed.problem === 'missing-mask') throw ipPolicyRuleErrors.cidrMissingMask({ cidr: text });
  throw ipPolicyRuleErrors.invalidCidr({ cidr: text });
}

export function ipPolicyRuleDefinition(onChange: (accountId: string) => void) {
  return defineResource({
    kind: 'ip_policy_rule',
    title: 'IP policy rule',
    errors: ipPolicyRuleCatalogue,
    prefix: 'ipr',
    path: '/ip_policy_rules',
    listKey: 'ip_policy_rules',
    table: 'ip_policy_rules',
    schemas: { resource: IpPolicyRule, create: IpPolicyRuleCreate, update: IpPolicyRuleUpdate },
    immutable: ['ip_policy_id', 'action'],
    references: [{ in: 'column', column: 'ip_policy_id', kinds: ['ip_policy'], notFound: policyNotFound('ip_policy_id'), onDelete: 'cascade' }],

    async authorize(ctx, operation, { row, body }, db) {
      readOnlyMayOnlyRead(ctx, operation);
      if (operation === 'get' || operation === 'list' || ctx.principal.role === 'admin') return;
      const policyId = row?.ip_policy_id ?? (body as { ip_policy_id: string }).ip_policy_id;
      if ((await restrictionsUsing(db, policyId)).length > 0) {
        throw errors.adminRequired({ action: 'change the rules of an IP policy that an IP restriction uses' });
      }
    },

    prepare: (_ctx, body) => ({
      row: { cidr: canonicalCidr(body.cidr), action: body.action, ip_policy_id: body.ip_policy_id, ...describedColumns(body) },
    }),

    patch: (_ctx, body): Partial<IpPolicyRulesTable> => ({ ...describedChanges(body), ...(body.cidr != null && { cidr: canonicalCidr(body.cidr) }) }),

    toApi: (row: IpPolicyRulesTable, view) => ({
      id: row.id,
      created_at: row.created_at,
      description: row.description,
      metadata: row.metadata,
      cidr: row.cidr,
      ip_policy: view.ref(row.ip_policy_id),
      action: row.action,
    }),

    hooks: {
      afterWrite: (db) => bumpIpRevision(db),
      afterCommit(ctx) {
        onChange(ctx.scope.accountId);
      },
      onUniqueViolation(target, row) {
        return target === 'ip_policy_rules_ip_policy_id_cidr_key'
          ? ipPolicyRuleErrors.duplicateRule({ cidr: String(row.cidr), policyId: String(row.ip_policy_id) })
          : undefined;
      },
    },
  });
}
