// The API keys' table, added to the store's `Database` (see src/db/schema.ts for why by augmentation).

export interface ApiKeysTable {
  id: string;
  account_id: string;
  owner_id: string;
  description: string;
  metadata: string;
  /** SHA-256 of the token's secret part, hex. The token itself is never stored. */
  secret_hash: string;
  created_at: string;
}

declare module '../../db/schema.js' {
  interface Database {
    api_keys: ApiKeysTable;
  }
}
