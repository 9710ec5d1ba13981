// IP policies: named sets of rules. Deleting one deletes its rules in the same transaction,
// unless an IP restriction still uses it (409 naming the restrictions).
import { errors } from '../../core/errors.js';
import { describedColumns } from '../../core/schema.js';
import { defineResource } from '../../crud/resource.js';
import type { IpPoliciesTable } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import { restrictionsUsing } from './ip-revision.js';
import { IpPolicy, IpPolicyCreate, IpPolicyUpdate } from './ip-policy.schema.js';

export function ipPoliciesResource(store: Store) {
  return defineResource(store, {
    kind: 'ip_policy',
    title: 'IP policy',
    prefix: 'ipp',
    path: '/ip_policies',
    listKey: 'ip_policies',
    table: 'ip_policies',
    schemas: { resource: IpPolicy, create: IpPolicyCreate, update: IpPolicyUpdate },

    prepare: (_ctx, body) => ({ row: describedColumns(body) }),

    toApi: (row: IpPoliciesTable) => ({ id: row.id, created_at: row.created_at, description: row.description, metadata: row.metadata }),

    hooks: {
      async beforeDelete(trx, ctx, row) {
        const users = await restrictionsUsing(trx, ctx.scope, row.id);
        if (users.length > 0) throw errors.ipPolicyInUse({ id: row.id, restrictions: users });
        await trx.deleteFrom('ip_policy_rules').where('account_id', '=', ctx.scope.accountId).where('ip_policy_id', '=', row.id).execute();
      },
    },
  });
}
