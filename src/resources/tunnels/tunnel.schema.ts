// The tunnel as the API shows it: an endpoint an agent bound, or a labeled tunnel that
// tunnel-group backends route to. Made by agents, never through the API.
import { Type } from '@sinclair/typebox';
import { Body, Nullable, Ref, Timestamp, Uri } from '../../core/schema.js';

export const Tunnel = Type.Object(
  {
    id: Type.String({ description: 'tn_…' }),
    uri: Uri,
    public_url: Nullable(Type.String({ description: 'the endpoint’s address; null for a labeled tunnel' })),
    started_at: Timestamp,
    metadata: Type.String(),
    proto: Nullable(Type.String({ description: 'http, https, tcp or tls; null for a labeled tunnel' })),
    region: Type.String(),
    tunnel_session: Ref,
    endpoint: Nullable(Ref),
    labels: Nullable(Type.Record(Type.String(), Type.String(), { description: "a labeled tunnel's labels; null for a bound endpoint" })),
    backends: Nullable(Type.Array(Ref, { description: 'the tunnel-group backends whose labels this labeled tunnel matches; null for a bound endpoint' })),
    forwards_to: Type.String({ description: 'where the agent sends what it is given, as it says' }),
  },
  { description: 'tunnel: an endpoint bound by an agent, or a labeled tunnel, online now' },
);

export const NoTunnelBody = Body({});
