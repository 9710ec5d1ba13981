// TLS edges: reserved domains of the account as hostports (`<domain>:443`) and the modules of a
// TLS endpoint, each the definition TCP edges (and, later, HTTPS edges) use.
import { Type } from '@sinclair/typebox';
import { Body, DescribedCreate, DescribedFields, DescribedPatch, Nullable, Patch } from '../../core/schema.js';
import { defineResource } from '../../crud/definition.js';
import { moduleFields, moduleRequestFields } from '../../crud/modules.js';
import type { TlsEdgesTable } from '../../db/schema.js';
import { backendModule, ipRestrictionModule, mutualTlsModule, policyModule, tlsTerminationModule, trafficPolicyModule } from '../edge-modules/edge-modules.js';
import { domainHostports, MAX_DOMAIN_HOSTPORTS } from '../edge-hostports/domain-hostports.js';
import { hostportEdge } from '../edge-hostports/hostport-edge.js';

const TLS_EDGE_MODULES = [backendModule, ipRestrictionModule, mutualTlsModule, tlsTerminationModule, policyModule('tcp'), trafficPolicyModule('tcp')];

const Hostports = Type.Array(Type.String({ maxLength: 300 }), {
  description: `reserved domains of the account as <domain>:443; at most ${MAX_DOMAIN_HOSTPORTS}`,
});

export const TlsEdge = Type.Object(
  {
    ...DescribedFields('edgtls'),
    hostports: Nullable(Type.Array(Type.String(), { description: 'the reserved domains served, as <domain>:443; null when none' })),
    ...moduleFields(TLS_EDGE_MODULES),
  },
  { description: 'TLS edge' },
);
const TlsEdgeCreate = Body({ ...DescribedCreate, hostports: Type.Optional(Nullable(Hostports)), ...moduleRequestFields(TLS_EDGE_MODULES) });
const TlsEdgeUpdate = Body({ ...DescribedPatch, hostports: Patch(Hostports), ...moduleRequestFields(TLS_EDGE_MODULES) });

export const tlsEdgeDefinition = defineResource({
  kind: 'tls_edge',
  title: 'TLS edge',
  prefix: 'edgtls',
  path: '/edges/tls',
  listKey: 'tls_edges',
  table: 'tls_edges',
  schemas: { resource: TlsEdge, create: TlsEdgeCreate, update: TlsEdgeUpdate },
  modules: TLS_EDGE_MODULES,
  holds: [{ table: 'edge_domains', column: 'reserved_domain_id', referrer: 'edge_id', kinds: ['reserved_domain'] }],

  ...hostportEdge<TlsEdgesTable>(domainHostports),
});
