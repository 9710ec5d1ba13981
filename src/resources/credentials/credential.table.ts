// The credentials' table, added to the store's `Database` (see src/db/schema.ts for why by augmentation).

/** An agent authtoken. */
export interface CredentialsTable {
  id: string;
  account_id: string;
  owner_id: string;
  description: string;
  metadata: string;
  /** JSON array of ACL rules in their stored form (`bind:app.example.com`, `bind:env=prod`). */
  acl: string;
  /** SHA-256 of the token's secret part, hex. The token itself is never stored. */
  secret_hash: string;
  created_at: string;
}

declare module '../../db/schema.js' {
  interface Database {
    credentials: CredentialsTable;
  }
}
