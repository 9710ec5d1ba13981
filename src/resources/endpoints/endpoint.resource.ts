// Endpoints: read-only, those of the bound tunnels of live agent sessions (the view
// live_endpoints). Creating cloud endpoints is not served.
import { defineResource } from '../../crud/definition.js';
import type { LiveEndpointsView } from '../../db/schema.js';
import { Endpoint, NoEndpointBody } from './endpoint.schema.js';

export const endpointDefinition = defineResource({
  kind: 'endpoint',
  title: 'endpoint',
  prefix: 'ep',
  path: '/endpoints',
  listKey: 'endpoints',
  table: 'live_endpoints',
  schemas: { resource: Endpoint, create: NoEndpointBody, update: NoEndpointBody },
  operations: ['get', 'list'],

  toApi: (row: LiveEndpointsView, view) => ({
    id: row.id,
    region: row.region,
    created_at: row.created_at,
    // An endpoint never changes while it lives: a new bind is a new endpoint.
    updated_at: row.created_at,
    public_url: row.public_url,
    proto: row.proto,
    hostport: row.hostport,
    type: 'ephemeral',
    metadata: row.metadata,
    domain: row.domain_id === null ? null : view.ref(row.domain_id),
    tcp_addr: row.tcp_addr_id === null ? null : view.ref(row.tcp_addr_id),
    tunnel: view.ref(row.tunnel_id),
  }),
});
