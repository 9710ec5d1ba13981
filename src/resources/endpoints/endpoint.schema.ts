// The endpoint as the API shows it: the public address a live agent bound (an "ephemeral"
// endpoint, as the public API calls those of agents). Cloud endpoints are not served.
import { Type } from '@sinclair/typebox';
import { Body, Nullable, Ref, Timestamp, Uri } from '../../core/schema.js';

export const Endpoint = Type.Object(
  {
    id: Type.String({ description: 'ep_…' }),
    uri: Uri,
    region: Type.String(),
    created_at: Timestamp,
    updated_at: Timestamp,
    public_url: Type.String(),
    proto: Type.String({ description: 'http, https, tcp or tls' }),
    hostport: Type.String({ description: 'host:port it is served on' }),
    type: Type.String({ description: '`ephemeral`: bound by an agent, for as long as its tunnel lives' }),
    metadata: Type.String({ description: "the tunnel's metadata" }),
    domain: Nullable(Ref),
    tcp_addr: Nullable(Ref),
    tunnel: Ref,
  },
  { description: 'endpoint: the address of a tunnel bound by a live agent' },
);

export const NoEndpointBody = Body({});
