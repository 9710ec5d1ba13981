// The endpoint as the API shows it: a cloud endpoint (`type: cloud`, made through the API, served
// by its traffic policy) or the public address a live agent bound (`type: ephemeral`, for as long
// as its tunnel lives). Only cloud endpoints are created, changed and deleted through the API.
import { Type } from '@sinclair/typebox';
import { Body, DescribedCreate, DescribedPatch, Nullable, Patch, Ref, StringEnum, Timestamp, Uri } from '../../core/schema.js';

const Bindings = Type.Array(Type.String({ maxLength: 64 }), {
  maxItems: 8,
  description: 'where the endpoint is served: `["public"]` (the only binding a cloud endpoint takes here)',
});

export const Endpoint = Type.Object(
  {
    id: Type.String({ description: 'ep_…' }),
    uri: Uri,
    region: Type.String({ description: '`global` for a cloud endpoint; the agent session’s region for an agent’s' }),
    created_at: Timestamp,
    updated_at: Timestamp,
    url: Type.String({ description: 'the URL the endpoint serves: `https://name`, `http://name` or `tcp://host:port`' }),
    public_url: Type.String(),
    proto: Type.String({ description: 'http, https, tcp or tls' }),
    hostport: Type.String({ description: 'host:port it is served on' }),
    type: Type.String({ description: '`cloud`: made through the API; `ephemeral`: bound by an agent, for as long as its tunnel lives' }),
    description: Type.String(),
    metadata: Type.String({ description: "user-defined data; an agent's endpoint shows its tunnel's metadata" }),
    traffic_policy: Type.String({ description: 'the traffic policy document, as sent; `""` for an agent’s endpoint' }),
    bindings: Type.Array(Type.String(), { description: '`public`, or `internal` for an agent’s `.internal` endpoint' }),
    pooling_enabled: Type.Boolean(),
    domain: Nullable(Ref),
    tcp_addr: Nullable(Ref),
    tunnel: Nullable(Ref),
  },
  { description: 'endpoint: a cloud endpoint, or the address of a tunnel bound by a live agent' },
);

export const EndpointCreate = Body({
  ...DescribedCreate,
  url: Type.String({
    maxLength: 300,
    description:
      'https://name or http://name (the name is a reserved domain of the account, or under a wildcard one), or tcp://host:port (a reserved address of the account)',
  }),
  type: Type.Optional(StringEnum(['cloud'], { description: '`cloud` (the default): only cloud endpoints are made through the API' })),
  traffic_policy: Type.String({
    description: 'a traffic policy document (YAML or JSON, at most 256 KiB): on_http_request, on_http_response; on_tcp_connect for a tcp:// URL',
  }),
  bindings: Type.Optional(Bindings),
  pooling_enabled: Type.Optional(Type.Boolean()),
});

export const EndpointUpdate = Body({
  ...DescribedPatch,
  url: Patch(Type.String({ maxLength: 300 })),
  traffic_policy: Patch(Type.String()),
  bindings: Patch(Bindings),
  pooling_enabled: Patch(Type.Boolean()),
});
