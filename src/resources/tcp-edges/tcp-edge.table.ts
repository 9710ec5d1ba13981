// The TCP edges' table and the reserved addresses they serve, added to the store's `Database` (see src/db/schema.ts).

export interface TcpEdgesTable {
  id: string;
  account_id: string;
  description: string;
  metadata: string;
  created_at: string;
}

/** The reserved addresses a TCP edge serves; an address is served by one edge at most. */
export interface TcpEdgeHostportsTable {
  tcp_edge_id: string;
  reserved_addr_id: string;
  account_id: string;
  position: number;
}

declare module '../../db/schema.js' {
  interface Database {
    tcp_edges: TcpEdgesTable;
    tcp_edge_hostports: TcpEdgeHostportsTable;
  }
}
