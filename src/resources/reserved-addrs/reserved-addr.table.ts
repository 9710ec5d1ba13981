// The reserved addresses' table, added to the store's `Database` (see src/db/schema.ts for why by augmentation).

export interface ReservedAddrsTable {
  id: string;
  account_id: string;
  description: string;
  metadata: string;
  created_at: string;
  /** `host:port`, unique across accounts. */
  addr: string;
  host: string;
  port: number;
  region: string;
  endpoint_configuration_id: string | null;
}

declare module '../../db/schema.js' {
  interface Database {
    reserved_addrs: ReservedAddrsTable;
  }
}
