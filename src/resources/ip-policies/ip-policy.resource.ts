// IP policies: named sets of rules. Deleting one deletes its rules in the same transaction
// (their reference cascades), unless an IP restriction still uses it (409 naming them).
import { describedColumns } from '../../core/schema.js';
import { defineResource } from '../../crud/definition.js';
import type { IpPoliciesTable } from './ip-policy.table.js';
import { ipPolicyCatalogue, ipPolicyErrors } from './ip-policy.errors.js';
import { IpPolicy, IpPolicyCreate, IpPolicyUpdate } from './ip-policy.schema.js';

export const ipPolicyDefinition = defineResource({
  kind: 'ip_policy',
  title: 'IP policy',
  errors: ipPolicyCatalogue,
  prefix: 'ipp',
  path: '/ip_policies',
  listKey: 'ip_policies',
  table: 'ip_policies',
  schemas: { resource: IpPolicy, create: IpPolicyCreate, update: IpPolicyUpdate },
  inUse: (id, referrers) => ipPolicyErrors.ipPolicyInUse({ id, referrers }),

  prepare: (_ctx, body) => ({ row: describedColumns(body) }),

  toApi: (row: IpPoliciesTable) => ({ id: row.id, created_at: row.created_at, description: row.description, metadata: row.metadata }),
});
