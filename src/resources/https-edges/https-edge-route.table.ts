// The HTTPS edge routes' table, added to the store's `Database` (see src/db/schema.ts for why by augmentation).

export type RouteMatchType = 'exact_path' | 'path_prefix';

export interface HttpsEdgeRoutesTable {
  id: string;
  account_id: string;
  edge_id: string;
  match_type: RouteMatchType;
  match: string;
  description: string;
  metadata: string;
  created_at: string;
}

declare module '../../db/schema.js' {
  interface Database {
    https_edge_routes: HttpsEdgeRoutesTable;
  }
}
