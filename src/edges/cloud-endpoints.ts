// An account's cloud endpoints (POST /endpoints) as the public listeners serve them: each one a
// synthetic HTTPS edge of one route, matching every path, whose only module is the endpoint's
// traffic policy. So a cloud endpoint goes through the very pipeline of edge routes
// (ingress/edge-http.ts): the policy's request phase (forward-internal sends the request to the
// account's internal endpoint), then its response phase. Its route has no backend: a request its
// policy neither answers nor forwards is answered with an error page.
//
// A TCP cloud endpoint (`tcp://host:port`, a reserved address) is served as a TCP edge of that
// address whose only module is its traffic policy: the edges' TCP ports listen on it
// (tunnels/edge-ports.ts) and its on_tcp_connect rules run per connection (ingress/edge-stream.ts);
// a connection its policy does not forward (forward-internal) is closed.
import type { ScopedDb } from '../db/scoped.js';
import type { HttpsEdge, TcpEdge } from './edge-model.js';

export interface CloudEndpoint {
  id: string;
  accountId: string;
  /** The listener that serves it: `https` or `http`. */
  scheme: 'http' | 'https';
  /** Its host, lower case; `*.example.com` for a wildcard one. */
  host: string;
  url: string;
  /** The one-route edge it is served as. */
  edge: HttpsEdge;
}

/** A TCP cloud endpoint served as a TCP edge: its address and its traffic policy. */
function tcpEdgeOf(row: { id: string; url: string; traffic_policy: string }, accountId: string): TcpEdge {
  const addr = row.url.slice('tcp://'.length);
  return {
    id: row.id,
    accountId,
    addrs: [{ addr, port: Number(addr.slice(addr.lastIndexOf(':') + 1)) }],
    policy: { kind: 'traffic_policy', enabled: true, value: row.traffic_policy },
    cloud: { url: row.url },
  };
}

/** The account's cloud endpoints: the HTTP(S) ones each with the edge it is served as, and the TCP ones as TCP edges. */
export async function readCloudEndpoints(db: ScopedDb, accountId: string): Promise<{ http: CloudEndpoint[]; tcp: TcpEdge[] }> {
  const rows = await db.select('cloud_endpoints', {});
  const tcp = rows.filter((row) => row.proto === 'tcp').map((row) => tcpEdgeOf(row, accountId));
  const http = rows
    .filter((row) => row.proto !== 'tcp')
    .map((row): CloudEndpoint => {
      const scheme = row.proto === 'http' ? 'http' : 'https';
      const host = row.url.slice(`${scheme}://`.length);
      const edge: HttpsEdge = {
        id: row.id,
        accountId,
        hosts: [host],
        cloud: { scheme, url: row.url },
        routes: [
          {
            id: row.id,
            edgeId: row.id,
            matchType: 'path_prefix',
            match: '/',
            modules: { policy: { kind: 'traffic_policy', enabled: true, value: row.traffic_policy } },
          },
        ],
      };
      return { id: row.id, accountId, scheme, host, url: row.url, edge };
    });
  return { http, tcp };
}
