// TLS edges: reserved domains of the account as hostports (`<domain>:443`) and the modules of a
// TLS endpoint, each the definition TCP edges (and, later, HTTPS edges) use.
import { defineResource } from '../../crud/definition.js';
import type { TlsEdgesTable } from './tls-edge.table.js';
import {
  backendModule,
  ipRestrictionModule,
  mutualTlsModule,
  policyModule,
  tlsTerminationModule,
  trafficPolicyModule,
} from '../../edge-config/modules/edge-modules.js';
import { domainHostports } from '../../edge-config/hostports/domain-hostports.js';
import { edgeSchemas, hostportEdge } from '../../edge-config/hostports/hostport-edge.js';

const TLS_EDGE_MODULES = [backendModule, ipRestrictionModule, mutualTlsModule, tlsTerminationModule, policyModule('tcp'), trafficPolicyModule('tcp')];

export const tlsEdgeDefinition = defineResource({
  kind: 'tls_edge',
  title: 'TLS edge',
  prefix: 'edgtls',
  path: '/edges/tls',
  listKey: 'tls_edges',
  table: 'tls_edges',
  schemas: edgeSchemas({ prefix: 'edgtls', title: 'TLS edge', hostports: domainHostports, modules: TLS_EDGE_MODULES }),
  modules: TLS_EDGE_MODULES,
  references: [domainHostports.served],

  ...hostportEdge<TlsEdgesTable>(domainHostports),
});
