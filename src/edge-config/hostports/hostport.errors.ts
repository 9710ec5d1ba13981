// The errors of the hostports of edges, as TCP edges (addresses) and TLS and HTTPS edges (domains,
// domain-hostports.ts) read them.
import { entry, throwersOf } from '../../core/errors.js';

export const hostportCatalogue = {
  invalidHostport: entry<{ value: string }>(
    7104,
    400,
    'A hostport is not of the form hostname:port.',
    (a) =>
      `hostport '${a.value.slice(0, 300)}' must be specified in the format 'hostname:portnumber', as the addr of a reserved address (1.tcp.edgeplane.app:20000).`,
  ),
  hostportPort: entry<{ value: string }>(
    7112,
    400,
    'The port of a hostport is not from 1 to 65535.',
    (a) => `hostport '${a.value}' has a port outside 1 to 65535.`,
  ),
  hostportInUse: entry<{ value: string; edge: string }>(
    7122,
    409,
    'A hostport is already served by another edge.',
    (a) => `hostport '${a.value}' is already served by edge ${a.edge}; an address is served by one edge at a time.`,
  ),
  duplicateHostport: entry<{ value: string }>(7123, 400, 'A hostport is listed twice.', (a) => `hostport '${a.value}' is listed twice.`),
  tooManyHostports: entry<{ count: number; max: number }>(
    7129,
    400,
    'An edge has more hostports than the limit.',
    (a) => `an edge serves at most ${a.max} hostports; ${a.count} were given.`,
  ),
  hostportPort443: entry<{ value: string }>(
    7116,
    400,
    'A hostport of a TLS or HTTPS edge is not on port 443.',
    (a) => `hostport '${a.value}' must use port 443 (a reserved domain as '<domain>:443').`,
  ),
  hostportNotDomain: entry<{ value: string }>(
    7133,
    400,
    'A hostport of a TLS or HTTPS edge is not a reserved domain of this account.',
    (a) => `hostport '${a.value}' is not a reserved domain of your account; reserve it with POST /reserved_domains and use '<domain>:443'.`,
  ),
} as const;

/** Error factories: `throw hostportErrors.invalidHostport(…)`. */
export const hostportErrors = throwersOf(hostportCatalogue);
