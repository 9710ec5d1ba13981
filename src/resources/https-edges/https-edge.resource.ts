// HTTPS edges: reserved domains of the account as hostports (`<domain>:443`, shared with TLS
// edges: a domain is served by one edge of either kind), the mutual TLS and TLS termination
// modules, and their routes, shown whole inside the edge. Deleting an edge deletes its routes
// and every module of the edge and its routes, in the same transaction: the routes declare the
// edge their parent with `onDelete: 'cascade'`.
import { Type } from '@sinclair/typebox';
import { defineResource } from '../../crud/definition.js';
import { readModules, type StoredModule } from '../../crud/modules.js';
import type { ScopedDb } from '../../db/scoped.js';
import type { HttpsEdgeRoutesTable } from './https-edge-route.table.js';
import type { HttpsEdgesTable } from './https-edge.table.js';
import type { Sealer } from '../../lib/crypto/sealer.js';
import { domainHostports } from '../../edge-config/hostports/domain-hostports.js';
import { edgeSchemas, hostportEdge } from '../../edge-config/hostports/hostport-edge.js';
import { httpsTlsTerminationModule, mutualTlsModule } from '../../edge-config/modules/edge-modules.js';
import { httpsEdgeRouteDefinition, showRoute } from './https-edge-route.resource.js';
import { httpsEdgeCatalogue } from './https-edge.errors.js';

const HTTPS_EDGE_MODULES = [mutualTlsModule, httpsTlsTerminationModule];

type EdgeRow = HttpsEdgesTable & { routes?: { row: HttpsEdgeRoutesTable; modules: Map<string, StoredModule> | undefined }[] };

/** The routes of a page of edges, oldest first, with their modules: three queries. */
async function routesOf(db: ScopedDb, edgeIds: readonly string[]) {
  const routes = await db.select('https_edge_routes', { edge_id: edgeIds }, { orderBy: ['edge_id', 'created_at', 'id'] });
  const modules = await readModules(
    db,
    routes.map((r) => r.id),
  );
  const out = new Map<string, NonNullable<EdgeRow['routes']>>();
  for (const row of routes) out.set(row.edge_id, [...(out.get(row.edge_id) ?? []), { row, modules: modules.get(row.id) }]);
  return out;
}

/** HTTPS edges and their routes: the edge shows its routes as the route kind does. */
export function httpsEdgeDefinitions(sealer: Sealer) {
  const route = httpsEdgeRouteDefinition(sealer);
  const routeModules = route.modules ?? [];
  const schemas = edgeSchemas({ prefix: 'edghts', title: 'HTTPS edge', hostports: domainHostports, modules: HTTPS_EDGE_MODULES });
  const edge = hostportEdge<EdgeRow>(domainHostports);
  const httpsEdges = defineResource({
    kind: 'https_edge',
    title: 'HTTPS edge',
    errors: httpsEdgeCatalogue,
    prefix: 'edghts',
    path: '/edges/https',
    listKey: 'https_edges',
    table: 'https_edges',
    schemas: {
      ...schemas,
      resource: Type.Object(
        { ...schemas.resource.properties, routes: Type.Array(route.schemas.resource, { description: 'its routes, oldest first' }) },
        { description: 'HTTPS edge' },
      ),
    },
    modules: HTTPS_EDGE_MODULES,
    references: [domainHostports.served],

    prepare: edge.prepare,
    patch: edge.patch,
    hooks: {
      ...edge.hooks,
      async expand(db, rows) {
        const [expanded, routes] = await Promise.all([
          edge.hooks.expand(db, rows),
          routesOf(
            db,
            rows.map((r) => r.id),
          ),
        ]);
        return expanded.map((r) => ({ ...r, routes: routes.get(r.id) ?? [] }));
      },
    },
    toApi: (row, view) => ({
      ...edge.toApi(row),
      routes: ((row as EdgeRow).routes ?? []).map((r) => showRoute(r.row, r.modules, routeModules, view)),
    }),
  });
  return { httpsEdges, httpsEdgeRoutes: route };
}
