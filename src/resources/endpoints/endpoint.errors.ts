// The errors of cloud endpoints: their URL (its form, its protocol, its domain or reserved
// address, one endpoint per URL), the body's type and bindings, and changes asked of an agent's endpoint.
import { entry, throwersOf } from '../../core/errors.js';

export const endpointCatalogue = {
  endpointUrlInvalid: entry<{ value: string; problem: string }>(
    18001,
    400,
    'The cloud endpoint URL is not https://name, http://name or tcp://host:port.',
    (a) => `url '${a.value}' is not a cloud endpoint URL (https://name, http://name or tcp://host:port): ${a.problem}.`,
  ),
  endpointProtocolNotServed: entry<{ value: string; scheme: string }>(
    18002,
    400,
    'TLS cloud endpoints are not served.',
    (a) =>
      `url '${a.value}' is a ${a.scheme} endpoint; this server makes cloud endpoints for https://, http:// and tcp:// URLs only. Bind ${a.scheme} endpoints with an agent.`,
  ),
  endpointDomainNotReserved: entry<{ value: string; host: string }>(
    18003,
    400,
    "The cloud endpoint URL's host is not a reserved domain of the account.",
    (a) =>
      `url '${a.value}': '${a.host}' is not one of this account's reserved domains, nor under one of its wildcard domains; reserve it first (POST /reserved_domains).`,
  ),
  endpointUrlTaken: entry<{ url: string; id?: string }>(
    18004,
    409,
    'Another cloud endpoint already serves the URL.',
    (a) => `a cloud endpoint already serves '${a.url}'${a.id ? ` (${a.id})` : ''}; change or delete it first.`,
  ),
  endpointInternalUrl: entry<{ value: string }>(
    18005,
    400,
    'A cloud endpoint URL names an internal (.internal) host.',
    (a) =>
      `url '${a.value}' names an internal host; cloud endpoints here are public, and .internal names are the internal endpoints agents bind (forward to one with the forward-internal action).`,
  ),
  endpointBindingsInvalid: entry<{ value: string }>(
    18006,
    400,
    'The bindings of a cloud endpoint are not ["public"].',
    (a) => `bindings ${a.value} is not accepted; a cloud endpoint here takes ["public"] (the default).`,
  ),
  endpointNotCloud: entry<{ id: string }>(
    18007,
    400,
    "An agent's endpoint is changed or deleted through the API.",
    (a) =>
      `endpoint ${a.id} is an agent's endpoint (type ephemeral): it lives as long as its tunnel; stop the agent's tunnel to remove it. Only cloud endpoints are changed through the API.`,
  ),
  endpointAddrNotReserved: entry<{ value: string; addr: string }>(
    18008,
    400,
    "A TCP cloud endpoint URL's address is not a reserved address of the account.",
    (a) => `url '${a.value}': '${a.addr}' is not one of this account's reserved addresses; reserve one (POST /reserved_addrs) and use its addr in the URL.`,
  ),
  endpointAddrHasConfiguration: entry<{ value: string; id: string }>(
    18009,
    400,
    'A TCP cloud endpoint URL is a reserved address with an endpoint configuration.',
    (a) =>
      `url '${a.value}' is reserved address ${a.id}, which has an endpoint configuration (its agents' endpoint); detach it first (DELETE /reserved_addrs/${a.id}/endpoint_configuration).`,
  ),
  endpointAddrServedByEdge: entry<{ value: string; edge: string }>(
    18010,
    409,
    "A TCP cloud endpoint URL's address is served by a TCP edge.",
    (a) =>
      `url '${a.value}': its address is served by TCP edge ${a.edge}; an address is served by one edge or one cloud endpoint at a time: remove it from the edge's hostports first.`,
  ),
  hostportServedByEndpoint: entry<{ value: string; endpoint: string }>(
    18011,
    409,
    "A TCP edge's hostport is served by a TCP cloud endpoint.",
    (a) =>
      `hostport '${a.value}' is served by cloud endpoint ${a.endpoint}; an address is served by one edge or one cloud endpoint at a time: delete the endpoint or change its url first.`,
  ),
} as const;

/** Error factories: `throw endpointErrors.endpointUrlInvalid(…)`. */
export const endpointErrors = throwersOf(endpointCatalogue);
