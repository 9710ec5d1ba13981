// The errors of HTTPS edge routes: their match, how many an edge has, and the sign-in module one
// route of an edge may have.
import { entry, throwersOf } from '../../core/errors.js';

export const httpsEdgeCatalogue = {
  invalidMatchType: entry<{ value: string }>(
    7130,
    400,
    'The match_type of a route is not exact_path or path_prefix.',
    (a) => `match_type '${a.value.slice(0, 40)}' is not valid; it is exact_path or path_prefix.`,
  ),
  invalidRouteMatch: entry<{ value: string }>(
    7131,
    400,
    "The match of a route is not a path starting with '/'.",
    (a) => `match '${a.value.slice(0, 80)}' must be a path starting with '/', such as '/' or '/blog'.`,
  ),
  routeMatchTooLong: entry<{ length: number; max: number }>(
    7135,
    400,
    'The match of a route is longer than the limit.',
    (a) => `match is ${a.length} characters long; at most ${a.max} are allowed.`,
  ),
  duplicateRouteMatch: entry<{ match: string; route: string }>(
    7126,
    409,
    'Another route of the edge has the same match.',
    (a) => `route ${a.route} of this edge already matches '${a.match.slice(0, 80)}'; a match is used by one route of an edge.`,
  ),
  tooManyRoutes: entry<{ edge: string; max: number }>(
    7128,
    409,
    'The edge already has as many routes as allowed.',
    (a) => `edge ${a.edge} already has ${a.max} routes, the most an edge may have; delete one first.`,
  ),
  authModuleOnOtherRoute: entry<{ module: string; other: string; route: string }>(
    7155,
    409,
    'Another route of the edge already has an OAuth, OIDC or SAML module; one route of an edge may have one.',
    (a) =>
      `route ${a.route} of this edge already has the ${a.other} module; OAuth, OIDC and SAML are allowed on one route of an edge, so delete it there before setting ${a.module} here.`,
  ),
} as const;

/** Error factories: `throw httpsEdgeErrors.invalidMatchType(…)`. */
export const httpsEdgeErrors = throwersOf(httpsEdgeCatalogue);
