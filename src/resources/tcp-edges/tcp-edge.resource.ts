// TCP edges: the reserved addresses they serve (hostports) and their modules. A hostport is a
// reserved address of the account without an endpoint configuration, served by one edge at most:
// its row is locked while the edge claims it, and a unique index holds the rule whatever happens.
import { defineResource } from '../../crud/definition.js';
import type { ScopedDb } from '../../db/scoped.js';
import type { TcpEdgesTable } from './tcp-edge.table.js';
import { edgeSchemas, hostportEdge, type HostportKind } from '../../edge-config/hostports/hostport-edge.js';
import { hostportErrors } from '../../edge-config/hostports/hostport.errors.js';
import { backendModule, ipRestrictionModule, policyModule, trafficPolicyModule } from '../../edge-config/modules/edge-modules.js';
import { tcpEdgeCatalogue, tcpEdgeErrors } from './tcp-edge.errors.js';
import { endpointErrors } from '../endpoints/endpoint.errors.js';

const TCP_EDGE_MODULES = [backendModule, ipRestrictionModule, policyModule('tcp'), trafficPolicyModule('tcp')];

/** Hostports a TCP edge serves at most. */
export const MAX_HOSTPORTS = 10;

/** `host:port` values of a request, checked for form before any query. */
function readHostports(values: readonly string[]): string[] {
  if (values.length > MAX_HOSTPORTS) throw hostportErrors.tooManyHostports({ count: values.length, max: MAX_HOSTPORTS });
  const seen = new Set<string>();
  return values.map((value) => {
    const m = /^([A-Za-z0-9.-]+):(\d+)$/.exec(value);
    if (!m || m[1]!.startsWith('.') || m[1]!.endsWith('.')) throw hostportErrors.invalidHostport({ value });
    const port = Number(m[2]);
    if (m[2]!.length > 5 || port < 1 || port > 65535) throw hostportErrors.hostportPort({ value });
    const hostport = `${m[1]!.toLowerCase()}:${port}`;
    if (seen.has(hostport)) throw hostportErrors.duplicateHostport({ value });
    seen.add(hostport);
    return hostport;
  });
}

/** Makes `hostports` the addresses the edge serves, in order. */
async function claimHostports(db: ScopedDb, edgeId: string, hostports: readonly string[]): Promise<void> {
  // Locked: two edges claiming one address are serialized here, and the second sees the first.
  const addrs = await db.select('reserved_addrs', { addr: hostports }, { lock: 'update' });
  const byAddr = new Map(addrs.map((a) => [a.addr, a]));
  for (const value of hostports) {
    const addr = byAddr.get(value);
    if (!addr) throw tcpEdgeErrors.hostportNotReserved({ value });
    if (addr.endpoint_configuration_id !== null) throw tcpEdgeErrors.hostportHasConfiguration({ value, id: addr.id });
  }
  const ids = hostports.map((h) => byAddr.get(h)!.id);
  const served = await db.select('tcp_edge_hostports', { reserved_addr_id: ids });
  const other = served.find((s) => s.tcp_edge_id !== edgeId);
  if (other) throw hostportErrors.hostportInUse({ value: addrs.find((a) => a.id === other.reserved_addr_id)!.addr, edge: other.tcp_edge_id });
  // Nor may a TCP cloud endpoint serve it (the rows are locked: an endpoint claiming one waits for us).
  const [endpoint] = await db.select('cloud_endpoints', { tcp_addr_id: ids });
  if (endpoint) throw endpointErrors.hostportServedByEndpoint({ value: addrs.find((a) => a.id === endpoint.tcp_addr_id)!.addr, endpoint: endpoint.id });
  await db.delete('tcp_edge_hostports', { tcp_edge_id: edgeId });
  await db.insert(
    'tcp_edge_hostports',
    ids.map((reserved_addr_id, position) => ({ tcp_edge_id: edgeId, reserved_addr_id, position })),
  );
}

/** The addresses of a page of edges, `host:port` in order: two queries. */
async function hostportsOf(db: ScopedDb, edgeIds: readonly string[]): Promise<Map<string, string[]>> {
  const links = await db.select('tcp_edge_hostports', { tcp_edge_id: edgeIds }, { orderBy: ['tcp_edge_id', 'position'] });
  const addrs = await db.select('reserved_addrs', { id: links.map((l) => l.reserved_addr_id) });
  const addrOf = new Map(addrs.map((a) => [a.id, a.addr]));
  const byEdge = new Map<string, string[]>();
  for (const l of links) byEdge.set(l.tcp_edge_id, [...(byEdge.get(l.tcp_edge_id) ?? []), addrOf.get(l.reserved_addr_id)!]);
  return byEdge;
}

const tcpHostports: HostportKind = {
  read: readHostports,
  claim: claimHostports,
  release: async (db, edgeId) => void (await db.delete('tcp_edge_hostports', { tcp_edge_id: edgeId })),
  of: hostportsOf,
  uniqueIndex: 'tcp_edge_hostports_reserved_addr_id_key',
  served: { in: 'rows', table: 'tcp_edge_hostports', column: 'reserved_addr_id', referrer: 'tcp_edge_id', kinds: ['reserved_addr'] },
  requestDescription: `reserved addresses (host:port) of the account; at most ${MAX_HOSTPORTS}`,
  responseDescription: 'the reserved addresses served; null when none',
};

export const tcpEdgeDefinition = defineResource({
  kind: 'tcp_edge',
  title: 'TCP edge',
  errors: tcpEdgeCatalogue,
  prefix: 'edgtcp',
  path: '/edges/tcp',
  listKey: 'tcp_edges',
  table: 'tcp_edges',
  schemas: edgeSchemas({ prefix: 'edgtcp', title: 'TCP edge', hostports: tcpHostports, modules: TCP_EDGE_MODULES }),
  modules: TCP_EDGE_MODULES,
  references: [tcpHostports.served],

  ...hostportEdge<TcpEdgesTable>(tcpHostports),
});
