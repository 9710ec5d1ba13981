// The HTTPS edges' table, added to the store's `Database` (see src/db/schema.ts for why by augmentation).

export interface HttpsEdgesTable {
  id: string;
  account_id: string;
  description: string;
  metadata: string;
  created_at: string;
}

declare module '../../db/schema.js' {
  interface Database {
    https_edges: HttpsEdgesTable;
  }
}
