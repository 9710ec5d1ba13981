// The IP restrictions' table and their policies (a join table), added to the store's `Database` (see src/db/schema.ts).
import type { SqlBool } from 'kysely';

export type IpRestrictionType = 'dashboard' | 'api' | 'agent' | 'endpoints';

export interface IpRestrictionsTable {
  id: string;
  account_id: string;
  type: IpRestrictionType;
  enforced: SqlBool;
  description: string;
  metadata: string;
  created_at: string;
}

export interface IpRestrictionPoliciesTable {
  ip_restriction_id: string;
  ip_policy_id: string;
  account_id: string;
  position: number;
}

declare module '../../db/schema.js' {
  interface Database {
    ip_restrictions: IpRestrictionsTable;
    ip_restriction_policies: IpRestrictionPoliciesTable;
  }
}
