// An account's cloud endpoints (POST /endpoints) as the public listeners serve them: each one a
// synthetic HTTPS edge of one route, matching every path, whose only module is the endpoint's
// traffic policy. So a cloud endpoint goes through the very pipeline of edge routes
// (ingress/edge-http.ts): the policy's request phase (forward-internal sends the request to the
// account's internal endpoint), then its response phase. Its route has no backend: a request its
// policy neither answers nor forwards is answered with an error page.
import type { ScopedDb } from '../db/scoped.js';
import type { HttpsEdge } from './edge-model.js';

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

/** The account's cloud endpoints, each with the edge it is served as. */
export async function readCloudEndpoints(db: ScopedDb, accountId: string): Promise<CloudEndpoint[]> {
  const rows = await db.select('cloud_endpoints', {});
  return rows.map((row) => {
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
}
