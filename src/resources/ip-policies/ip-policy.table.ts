// The IP policies' table and the account's IP revision (ip-revision.ts), added to the store's `Database` (see src/db/schema.ts).

export interface IpPoliciesTable {
  id: string;
  account_id: string;
  description: string;
  metadata: string;
  created_at: string;
}

export interface IpRevisionsTable {
  account_id: string;
  revision: number;
}

declare module '../../db/schema.js' {
  interface Database {
    ip_policies: IpPoliciesTable;
    ip_revisions: IpRevisionsTable;
  }
}
