// IP restrictions: at most one per type and account, each naming the IP policies that decide
// which addresses may pass. The `api` type is enforced on this API (see api-ip-guard.ts).
import { errors } from '../../core/errors.js';
import { describedColumns } from '../../core/schema.js';
import { defineResource } from '../../crud/resource.js';
import { toBool, type IpRestrictionsTable } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import { bumpIpRevision, requirePolicies } from '../ip-policies/ip-revision.js';
import { IpRestriction, IpRestrictionCreate, IpRestrictionUpdate } from './ip-restriction.schema.js';

type Row = IpRestrictionsTable & { ip_policy_ids?: string[] };

export function ipRestrictionsResource(store: Store, onChange: (accountId: string) => void) {
  return defineResource(store, {
    kind: 'ip_restriction',
    title: 'IP restriction',
    prefix: 'ipx',
    path: '/ip_restrictions',
    listKey: 'ip_restrictions',
    table: 'ip_restrictions',
    schemas: { resource: IpRestriction, create: IpRestrictionCreate, update: IpRestrictionUpdate },
    immutable: ['type'],
    virtualFields: ['ip_policy_ids'],
    adminOnlyWrites: 'create, update or delete IP restrictions',

    prepare: (_ctx, body) => ({
      row: { type: body.type, enforced: body.enforced ?? false, ...describedColumns(body) } as Omit<Row, 'id' | 'account_id' | 'created_at'>,
    }),

    async expand(executor, _ctx, rows: Row[]) {
      const links = await executor
        .selectFrom('ip_restriction_policies')
        .select(['ip_restriction_id', 'ip_policy_id'])
        .where('ip_restriction_id', 'in', rows.map((r) => r.id))
        .orderBy('ip_restriction_id')
        .orderBy('position')
        .execute();
      return rows.map((row) => ({ ...row, ip_policy_ids: links.filter((l) => l.ip_restriction_id === row.id).map((l) => l.ip_policy_id) }));
    },

    toApi: (row: Row, ctx) => ({
      id: row.id,
      created_at: row.created_at,
      description: row.description,
      metadata: row.metadata,
      enforced: toBool(row.enforced),
      type: row.type,
      ip_policies: (row.ip_policy_ids ?? []).map((id) => ({ id, uri: `${ctx.baseUrl}/ip_policies/${id}` })),
    }),

    hooks: {
      async beforeCreate(trx, ctx, row) {
        const existing = await trx.selectFrom('ip_restrictions').select('id').where('account_id', '=', ctx.scope.accountId).where('type', '=', row.type).executeTakeFirst();
        if (existing) throw errors.restrictionTypeTaken({ type: row.type, id: existing.id });
      },
      async afterWrite(trx, ctx, row, body) {
        const ids = body.ip_policy_ids as string[] | null | undefined;
        if (ids) {
          await requirePolicies(trx, ctx.scope, 'ip_policy_ids', ids);
          await trx.deleteFrom('ip_restriction_policies').where('ip_restriction_id', '=', row.id).execute();
          await trx.insertInto('ip_restriction_policies').values(ids.map((id, position) => ({ ip_restriction_id: row.id, ip_policy_id: id, position }))).execute();
        }
        await bumpIpRevision(trx, ctx.scope);
      },
      async beforeDelete(trx, ctx, row) {
        await trx.deleteFrom('ip_restriction_policies').where('ip_restriction_id', '=', row.id).execute();
        await bumpIpRevision(trx, ctx.scope);
      },
      afterCommit(ctx) {
        onChange(ctx.scope.accountId);
      },
      onUniqueViolation(target, row) {
        return target === 'ip_restrictions_account_id_type_key' ? errors.restrictionTypeTaken({ type: String(row.type) }) : undefined;
      },
    },
  });
}
