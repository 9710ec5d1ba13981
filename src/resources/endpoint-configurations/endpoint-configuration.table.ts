// The endpoint configurations' table, added to the store's `Database` (see src/db/schema.ts for why by augmentation).

export type EndpointConfigurationType = 'http' | 'https' | 'tcp';

export interface EndpointConfigurationsTable {
  id: string;
  account_id: string;
  description: string;
  metadata: string;
  created_at: string;
  type: EndpointConfigurationType;
}

declare module '../../db/schema.js' {
  interface Database {
    endpoint_configurations: EndpointConfigurationsTable;
  }
}
