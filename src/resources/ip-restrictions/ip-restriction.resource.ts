// IP restrictions: at most one per type and account, each naming the IP policies that decide
// which addresses may pass. The `api` type is enforced on this API (see api-ip-guard.ts).
import { describedColumns } from '../../core/schema.js';
import { defineResource } from '../../crud/definition.js';
import { adminWrites } from '../../crud/authorization.js';
import { toBool } from '../../db/schema.js';
import type { IpRestrictionsTable } from './ip-restriction.table.js';
import { policyNotFound } from '../../edge-config/values/named-resources.js';
import { bumpIpRevision } from '../ip-policies/ip-revision.js';
import { ipRestrictionCatalogue, ipRestrictionErrors } from './ip-restriction.errors.js';
import { IpRestriction, IpRestrictionCreate, IpRestrictionUpdate } from './ip-restriction.schema.js';

export function ipRestrictionDefinition(onChange: (accountId: string) => void) {
  return defineResource({
    kind: 'ip_restriction',
    title: 'IP restriction',
    errors: ipRestrictionCatalogue,
    prefix: 'ipx',
    path: '/ip_restrictions',
    listKey: 'ip_restrictions',
    table: 'ip_restrictions',
    schemas: { resource: IpRestriction, create: IpRestrictionCreate, update: IpRestrictionUpdate },
    immutable: ['type'],
    authorize: adminWrites('create, update or delete IP restrictions'),
    references: [
      {
        in: 'join',
        field: 'ip_policy_ids',
        table: 'ip_restriction_policies',
        from: 'ip_restriction_id',
        to: 'ip_policy_id',
        kinds: ['ip_policy'],
        notFound: policyNotFound('ip_policy_ids'),
        parse: (ids: string[]) => ids.map((id) => ({ id, weight: null })),
      },
    ],

    prepare: (_ctx, body) => ({ row: { type: body.type, enforced: body.enforced ?? false, ...describedColumns(body) } }),

    toApi: (row: IpRestrictionsTable & { ip_policy_ids: { id: string }[] }, view) => ({
      id: row.id,
      created_at: row.created_at,
      description: row.description,
      metadata: row.metadata,
      enforced: toBool(row.enforced),
      type: row.type,
      ip_policies: row.ip_policy_ids.map((link) => view.ref(link.id)),
    }),

    hooks: {
      async beforeCreate(db, _ctx, row) {
        const [existing] = await db.select('ip_restrictions', { type: row.type });
        if (existing) throw ipRestrictionErrors.restrictionTypeTaken({ type: row.type, id: existing.id });
      },
      afterWrite: (db) => bumpIpRevision(db),
      afterCommit(ctx) {
        onChange(ctx.scope.accountId);
      },
      onUniqueViolation(target, row) {
        return target === 'ip_restrictions_account_id_type_key' ? ipRestrictionErrors.restrictionTypeTaken({ type: String(row.type) }) : undefined;
      },
    },
  });
}
