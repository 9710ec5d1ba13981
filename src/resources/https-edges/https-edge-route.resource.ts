// Routes of HTTPS edges (`/edges/https/{edge_id}/routes`): a path selector (exact or prefix,
// unique in the edge) and the route's modules. Every write under one edge locks the edge row
// (`parent.serialize`), so the count of routes, the unique match and "OAuth, OIDC or SAML on one
// route of the edge" are checked against every change committed before; a unique index on
// (edge_id, match) holds the match rule whatever happens.
import { Type } from '@sinclair/typebox';
import { errors } from '../../core/errors.js';
import { Body, DescribedCreate, DescribedFields, DescribedPatch, Patch, describedChanges, describedColumns, describedResponse } from '../../core/schema.js';
import { defineResource, type View } from '../../crud/definition.js';
import { moduleFields, moduleRequestFields, showModules, type ModuleDefinition, type StoredModule } from '../../crud/modules.js';
import type { ScopedDb } from '../../db/scoped.js';
import type { HttpsEdgeRoutesTable, RouteMatchType } from './https-edge-route.table.js';
import type { Sealer } from '../../lib/crypto/sealer.js';
import { routeModules } from '../../edge-config/modules/route-modules.js';
import { SIGN_IN_MODULES } from '../../edge-config/modules/sign-in-modules.js';
import { httpsEdgeCatalogue, httpsEdgeErrors } from './https-edge.errors.js';

export const MAX_ROUTES_PER_EDGE = 100;
const ROUTES_PATH = '/edges/https/:edge_id/routes';
export const MAX_MATCH_LENGTH = 1024;
const MATCH_TYPES: readonly RouteMatchType[] = ['exact_path', 'path_prefix'];

function routeSchemas(modules: readonly ModuleDefinition[]) {
  const MatchType = Type.String({ maxLength: 32, description: 'exact_path or path_prefix' });
  // The length is checked by the definition, so that it has its own code.
  const Match = Type.String({ description: `a path starting with '/', unique in the edge; at most ${MAX_MATCH_LENGTH} characters` });
  return {
    resource: Type.Object(
      {
        ...DescribedFields('edghtsrt'),
        edge_id: Type.String({ description: 'edghts_…' }),
        match_type: Type.String(),
        match: Type.String(),
        ...moduleFields(modules),
      },
      { description: 'HTTPS edge route' },
    ),
    create: Body({ ...DescribedCreate, match_type: MatchType, match: Match, ...moduleRequestFields(modules) }),
    update: Body({ ...DescribedPatch, match_type: Patch(MatchType), match: Patch(Match), ...moduleRequestFields(modules) }),
  };
}

function readMatchType(value: string): RouteMatchType {
  if (!MATCH_TYPES.includes(value as RouteMatchType)) throw httpsEdgeErrors.invalidMatchType({ value });
  return value as RouteMatchType;
}

/** A path selector: starts with '/', no whitespace or control characters, bounded. */
function readMatch(value: string): string {
  const length = Array.from(value).length;
  if (length > MAX_MATCH_LENGTH) throw httpsEdgeErrors.routeMatchTooLong({ length, max: MAX_MATCH_LENGTH });
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (!value.startsWith('/') || /[\s\u0000-\u001f\u007f]/.test(value)) throw httpsEdgeErrors.invalidRouteMatch({ value });
  return value;
}

/** The other route of the edge that already has `match`, if any. */
async function routeWithMatch(db: ScopedDb, edgeId: string, match: string, except?: string) {
  return (await db.select('https_edge_routes', { edge_id: edgeId, match })).find((r) => r.id !== except);
}

type RouteRow = HttpsEdgeRoutesTable;

/** A route's fields other than `uri` and its modules. */
function routeFields(row: RouteRow) {
  return { ...describedResponse(row), edge_id: row.edge_id, match_type: row.match_type, match: row.match };
}

/** A route as responses show it, inside its edge too: its fields, `uri` and modules. */
export function showRoute(row: RouteRow, stored: ReadonlyMap<string, StoredModule> | undefined, modules: readonly ModuleDefinition[], view: View) {
  return { ...routeFields(row), uri: `${view.baseUrl}${ROUTES_PATH.replace(':edge_id', row.edge_id)}/${row.id}`, ...showModules(modules, stored, view) };
}

export function httpsEdgeRouteDefinition(sealer: Sealer) {
  const modules = routeModules(sealer);
  return defineResource({
    kind: 'https_edge_route',
    title: 'HTTPS edge route',
    errors: httpsEdgeCatalogue,
    prefix: 'edghtsrt',
    path: ROUTES_PATH,
    table: 'https_edge_routes',
    operations: ['create', 'get', 'update', 'delete'],
    parent: { param: 'edge_id', column: 'edge_id', kind: 'https_edge', serialize: true, onDelete: 'cascade' },
    schemas: routeSchemas(modules),
    modules,

    prepare(_ctx, body) {
      return {
        row: { ...describedColumns(body), match_type: readMatchType(body.match_type), match: readMatch(body.match) } as Omit<
          RouteRow,
          'id' | 'account_id' | 'created_at' | 'edge_id'
        > as never,
      };
    },

    patch(_ctx, body) {
      return {
        ...describedChanges(body),
        ...(body.match_type != null && { match_type: readMatchType(body.match_type) }),
        ...(body.match != null && { match: readMatch(body.match) }),
      };
    },

    toApi: (row) => routeFields(row),

    moduleRules: [
      // One route of an edge signs its users in: a sign-in module set here while another route has one is refused.
      async ({ db, owner: route, changed }) => {
        const module = changed.find((name) => (SIGN_IN_MODULES as readonly string[]).includes(name));
        if (!module) return undefined;
        const others = (await db.select('https_edge_routes', { edge_id: route.edge_id })).filter((r) => r.id !== route.id);
        if (others.length === 0) return undefined;
        const [holder] = await db.select('modules', { owner_id: others.map((r) => r.id), name: [...SIGN_IN_MODULES] }, { orderBy: ['owner_id'] });
        return holder ? httpsEdgeErrors.authModuleOnOtherRoute({ module, other: holder.name, route: holder.owner_id }) : undefined;
      },
    ],

    hooks: {
      async beforeCreate(db, _ctx, row) {
        const routes = await db.select('https_edge_routes', { edge_id: row.edge_id });
        if (routes.length >= MAX_ROUTES_PER_EDGE) throw httpsEdgeErrors.tooManyRoutes({ edge: row.edge_id, max: MAX_ROUTES_PER_EDGE });
        const same = routes.find((r) => r.match === row.match);
        if (same) throw httpsEdgeErrors.duplicateRouteMatch({ match: row.match, route: same.id });
      },
      async beforeUpdate(db, _ctx, current, changes) {
        if (changes.match === undefined || changes.match === current.match) return;
        const same = await routeWithMatch(db, current.edge_id, changes.match, current.id);
        if (same) throw httpsEdgeErrors.duplicateRouteMatch({ match: changes.match, route: same.id });
      },
      // The edge row is locked by every write under it, so only a change no lock saw could trip the index.
      onUniqueViolation: (target) =>
        target === 'https_edge_routes_edge_id_match_key'
          ? errors.conflict({ title: 'HTTPS edge route', reason: 'another route of the edge took the same match at the same moment' })
          : undefined,
    },
  });
}
