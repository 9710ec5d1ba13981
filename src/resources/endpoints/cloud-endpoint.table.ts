// The cloud endpoints' table and the view `endpoints` (migration 0022), added to the store's
// `Database` (see src/db/schema.ts for why by augmentation).

export interface CloudEndpointsTable {
  id: string;
  account_id: string;
  description: string;
  metadata: string;
  created_at: string;
  updated_at: string;
  /** `https://name` (scheme and lower-case host, no port) or `tcp://host:port`; unique across accounts. */
  url: string;
  /** `https`, `http` or `tcp`. */
  proto: string;
  hostport: string;
  /** The reserved domain the URL's host is, or is under (a wildcard); null for a TCP endpoint. */
  domain_id: string | null;
  /** A TCP endpoint's reserved address; null for the others. */
  tcp_addr_id: string | null;
  /** The traffic policy document as sent (YAML or JSON). */
  traffic_policy: string;
  /** JSON list of strings. */
  bindings: string;
  pooling_enabled: number;
}

/** A row of the view `endpoints`: a cloud endpoint, or a live agent's (`ephemeral`), under one set of columns. */
export interface EndpointsView extends Omit<CloudEndpointsTable, 'bindings' | 'domain_id' | 'tcp_addr_id'> {
  type: 'cloud' | 'ephemeral';
  domain_id: string | null;
  tcp_addr_id: string | null;
  tunnel_id: string | null;
  region: string;
  /** null for an agent's endpoint. */
  bindings: string | null;
}

declare module '../../db/schema.js' {
  interface Database {
    cloud_endpoints: CloudEndpointsTable;
    endpoints: EndpointsView;
  }
}
