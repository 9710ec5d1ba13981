// The TLS edges' table and the reserved domains that TLS and HTTPS edges serve, added to the store's `Database` (see src/db/schema.ts).

export interface TlsEdgesTable {
  id: string;
  account_id: string;
  description: string;
  metadata: string;
  created_at: string;
}

/**
 * The reserved domains an edge (TLS or HTTPS) serves; a domain is served by one edge at most. It
 * came with TLS edges, and HTTPS edges share it (src/edge-config/hostports/domain-hostports.ts
 * writes it for both), so that one index keeps a domain on one edge of either kind.
 */
export interface EdgeDomainsTable {
  edge_id: string;
  reserved_domain_id: string;
  account_id: string;
  position: number;
}

declare module '../../db/schema.js' {
  interface Database {
    tls_edges: TlsEdgesTable;
    edge_domains: EdgeDomainsTable;
  }
}
