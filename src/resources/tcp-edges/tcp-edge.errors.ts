// The errors of TCP edges: hostports that are not reserved addresses the edge can serve. What
// all edges do alike with their hostports is src/edge-config/hostports/hostport.errors.ts.
import { entry, throwersOf } from '../../core/errors.js';

export const tcpEdgeCatalogue = {
  hostportNotReserved: entry<{ value: string }>(
    7113,
    400,
    'A hostport is not a reserved address of this account.',
    (a) => `hostport '${a.value}' is not a reserved address of your account; reserve one with POST /reserved_addrs and use its addr.`,
  ),
  hostportHasConfiguration: entry<{ value: string; id: string }>(
    7115,
    400,
    'A hostport is a reserved address with an endpoint configuration, which an edge cannot serve.',
    (a) =>
      `hostport '${a.value}' is reserved address ${a.id}, which has an endpoint configuration; detach it first (DELETE /reserved_addrs/${a.id}/endpoint_configuration).`,
  ),
} as const;

/** Error factories: `throw tcpEdgeErrors.hostportNotReserved(…)`. */
export const tcpEdgeErrors = throwersOf(tcpEdgeCatalogue);
