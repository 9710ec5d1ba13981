// Which route of an HTTPS edge a request takes, by its path. The path is normalized first, and the
// normalized path is also what the upstream receives, so that the route a request matched and the
// resource the upstream serves are the same one: `/public/../admin` is `/admin` for both, and
// cannot reach an upstream's admin pages through a route meant for public ones.
import type { HttpsRoute } from './edge-config.js';

/** Unreserved characters (RFC 3986 §2.3) that some clients percent-encode; decoded so that `/%61dmin` is `/admin`. */
const UNRESERVED = /%(2[dDeE]|3[0-9]|[46][1-9a-fA-F]|[57][0-9aA]|5[fF]|7[eE])/g;

/**
 * The request target's path normalized (RFC 3986 §6.2.2): percent-encoded unreserved characters
 * decoded, other escapes upper-cased, dot segments removed (`.`, `..`, and their encodings `%2e`),
 * and the query kept as sent. `%2F` stays encoded: it is a character of a segment, not a slash.
 * Undefined for a target that is not an origin-form path (`*`, an absolute URL with no path).
 */
export function normalizeTarget(target: string): { path: string; query: string } | undefined {
  let rest = target;
  // An absolute-form target (a proxy request): its path and query only.
  if (!rest.startsWith('/')) {
    const m = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(rest);
    if (!m) return undefined;
    rest = rest.slice(m[0].length) || '/';
    if (!rest.startsWith('/')) rest = `/${rest}`;
  }
  const hash = rest.indexOf('#');
  if (hash >= 0) rest = rest.slice(0, hash);
  const q = rest.indexOf('?');
  const rawPath = q >= 0 ? rest.slice(0, q) : rest;
  const query = q >= 0 ? rest.slice(q + 1) : '';
  const decoded = rawPath.replace(UNRESERVED, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))).replace(/%[0-9a-f]{2}/gi, (e) => e.toUpperCase());
  return { path: removeDotSegments(decoded), query };
}

/** RFC 3986 §5.2.4 on an absolute path: `.` segments dropped, `..` drops the segment before it (never above the root). */
function removeDotSegments(path: string): string {
  const segments = path.split('/');
  const out: string[] = [];
  for (let i = 1; i < segments.length; i++) {
    const segment = segments[i]!;
    const last = i === segments.length - 1;
    if (segment === '.') {
      if (last) out.push('');
    } else if (segment === '..') {
      out.pop();
      if (last) out.push('');
    } else out.push(segment);
  }
  return `/${out.join('/')}`;
}

/**
 * The route for a normalized path: an `exact_path` route whose match is the path, else the
 * `path_prefix` route with the longest match the path starts with (as a string: `/api` serves
 * `/api/v1` and `/apis`), else none. Two routes with the same match: the older one.
 */
export function matchRoute(routes: readonly HttpsRoute[], path: string): HttpsRoute | undefined {
  let best: HttpsRoute | undefined;
  for (const route of routes) {
    if (route.matchType === 'exact_path') {
      if (route.match === path) return route;
    } else if (path.startsWith(route.match) && (!best || route.match.length > best.match.length)) best = route;
  }
  return best;
}
