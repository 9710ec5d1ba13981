// The tables of the five backend kinds and of their children, added to the store's `Database` (see src/db/schema.ts).
import type { SqlBool } from 'kysely';

interface BackendBase {
  id: string;
  account_id: string;
  description: string;
  metadata: string;
  created_at: string;
}

export interface TunnelGroupBackendsTable extends BackendBase {
  /** JSON object of label → value. */
  labels: string;
}

export interface HttpResponseBackendsTable extends BackendBase {
  body: string;
  /** JSON object of lower-case header name → value. */
  headers: string;
  status_code: number;
}

export interface StaticBackendsTable extends BackendBase {
  address: string;
  tls_enabled: SqlBool;
}

export type FailoverBackendsTable = BackendBase;
export type WeightedBackendsTable = BackendBase;

/** A failover (ordered) or weighted (weight set) backend's child. */
export interface BackendLinksTable {
  parent_id: string;
  child_id: string;
  account_id: string;
  position: number;
  weight: number | null;
}

declare module '../../db/schema.js' {
  interface Database {
    backends_tunnel_group: TunnelGroupBackendsTable;
    backends_http_response: HttpResponseBackendsTable;
    backends_static: StaticBackendsTable;
    backends_failover: FailoverBackendsTable;
    backends_weighted: WeightedBackendsTable;
    backend_links: BackendLinksTable;
  }
}
