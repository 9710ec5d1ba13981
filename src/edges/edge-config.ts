// What the edges of one account are, as the public listeners enforce them: an in-memory snapshot
// read from the store in one go (edges, their hostports, routes, modules, the backends and IP
// policies they name), rebuilt when the account's configuration changes (edge-directory.ts). No
// request reads the store: everything a request needs is here.
import type { ScopedDb } from '../db/scoped.js';
import {
  backendModule,
  httpsTlsTerminationModule,
  ipRestrictionModule,
  mutualTlsModule,
  tlsTerminationModule,
  trafficPolicyModule,
} from '../edge-config/modules/edge-modules.js';
import {
  circuitBreakerModule,
  compressionModule,
  requestHeadersModule,
  responseHeadersModule,
  userAgentFilterModule,
  webhookVerificationModule,
  websocketTcpConverterModule,
} from '../edge-config/modules/route-modules.js';
import { oauthModule, oidcModule, samlModule } from '../edge-config/modules/sign-in-modules.js';
import type { EndpointPolicy } from '../edge-config/traffic-policy/traffic-policy.js';
import type { Sealer } from '../lib/crypto/sealer.js';
import { readModules, type ModuleDefinition, type StoredModule } from '../crud/modules.js';
import { readEndpointConfigurations, type EndpointConfigurations } from './endpoint-configurations.js';
import { readCloudEndpoints, type CloudEndpoint } from './cloud-endpoints.js';
import type {
  Backend,
  HttpsEdge,
  HttpsRoute,
  IpPolicyRules,
  IpRestrictionModule,
  OAuthModule,
  PolicyModule,
  RouteModules,
  StreamEdgeModules,
  TcpEdge,
  TlsEdge,
  ValueOf,
} from './edge-model.js';

export type * from './edge-model.js';

// The sign-in modules' definitions, to read their stored values with: reading checks the stored
// shape and seals nothing, so their sealer is one that refuses to be used.
const refuse = (): never => {
  throw new Error('edge configuration reads sign-in modules; it never seals or opens');
};
const readOnly = { seal: refuse, open: refuse, derive: refuse } as unknown as Sealer;
const webhookVerification = webhookVerificationModule('webhook_verification');
const signInModules = { oauth: oauthModule(readOnly), oidc: oidcModule(readOnly), saml: samlModule(readOnly) };

export interface AccountEdges {
  accountId: string;
  https: HttpsEdge[];
  tls: TlsEdge[];
  tcp: TcpEdge[];
  /** The account's cloud endpoints (cloud-endpoints.ts). */
  cloud: CloudEndpoint[];
  backends: ReadonlyMap<string, Backend>;
  ipPolicies: ReadonlyMap<string, IpPolicyRules>;
  /** The endpoint configurations attached to reserved domains and addresses (agent endpoints on them). */
  endpointConfigurations?: EndpointConfigurations;
}

/** A stored module's value checked against its definition's stored shape, when it is set. */
function moduleValue<D extends ModuleDefinition>(stored: ReadonlyMap<string, StoredModule> | undefined, definition: D): ValueOf<D> | undefined {
  const module = stored?.get(definition.name);
  return module ? (definition.read(module.value) as ValueOf<D>) : undefined;
}

const tcpPolicy = trafficPolicyModule('tcp');

/** Either policy module of an owner; the API keeps at most one of them set. */
function policyOf(stored: ReadonlyMap<string, StoredModule> | undefined): PolicyModule | undefined {
  const document = moduleValue(stored, tcpPolicy);
  if (document) return { kind: 'traffic_policy', enabled: document.enabled, value: document.value };
  const policy = stored?.get('policy');
  return policy ? { kind: 'policy', value: policy.value as EndpointPolicy } : undefined;
}

function routeModulesOf(stored: ReadonlyMap<string, StoredModule> | undefined): RouteModules {
  return {
    backend: moduleValue(stored, backendModule),
    ipRestriction: moduleValue(stored, ipRestrictionModule) as IpRestrictionModule | undefined,
    circuitBreaker: moduleValue(stored, circuitBreakerModule),
    compression: moduleValue(stored, compressionModule),
    requestHeaders: moduleValue(stored, requestHeadersModule),
    responseHeaders: moduleValue(stored, responseHeadersModule),
    userAgentFilter: moduleValue(stored, userAgentFilterModule),
    websocketTcpConverter: moduleValue(stored, websocketTcpConverterModule),
    policy: policyOf(stored),
    oauth: moduleValue(stored, signInModules.oauth) as OAuthModule | undefined,
    oidc: moduleValue(stored, signInModules.oidc),
    saml: moduleValue(stored, signInModules.saml),
    webhookVerification: moduleValue(stored, webhookVerification),
  };
}

function mutualTlsOf(stored: ReadonlyMap<string, StoredModule> | undefined, caPems: ReadonlyMap<string, string>): HttpsEdge['mutualTls'] {
  const module = stored?.get(mutualTlsModule.name);
  if (!module) return undefined;
  const value = mutualTlsModule.read(module.value) as { enabled: boolean; certificate_authority_ids: string[] };
  return { enabled: value.enabled, caPems: value.certificate_authority_ids.flatMap((id) => caPems.get(id) ?? []) };
}

function byPosition<T extends { position: number }>(rows: T[]): T[] {
  return rows.sort((a, b) => a.position - b.position);
}

/** The backends of the account, by id. */
async function readBackends(db: ScopedDb): Promise<Map<string, Backend>> {
  const [groups, responses, statics, failovers, weighted, links] = await Promise.all([
    db.select('backends_tunnel_group', {}),
    db.select('backends_http_response', {}),
    db.select('backends_static', {}),
    db.select('backends_failover', {}),
    db.select('backends_weighted', {}),
    db.select('backend_links', {}),
  ]);
  const children = new Map<string, { id: string; weight: number; position: number }[]>();
  for (const link of links)
    children.set(link.parent_id, [...(children.get(link.parent_id) ?? []), { id: link.child_id, weight: link.weight ?? 0, position: link.position }]);
  const linked = (id: string) => byPosition(children.get(id) ?? []);
  const out = new Map<string, Backend>();
  for (const g of groups) out.set(g.id, { kind: 'tunnel_group', id: g.id, labels: JSON.parse(g.labels) as Record<string, string> });
  for (const r of responses)
    out.set(r.id, { kind: 'http_response', id: r.id, status: r.status_code, headers: JSON.parse(r.headers) as Record<string, string>, body: r.body });
  for (const s of statics) {
    const colon = s.address.lastIndexOf(':');
    const host = s.address.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
    out.set(s.id, { kind: 'static_address', id: s.id, host, port: Number(s.address.slice(colon + 1)), tls: Boolean(s.tls_enabled) });
  }
  for (const f of failovers) out.set(f.id, { kind: 'failover', id: f.id, backends: linked(f.id).map((c) => c.id) });
  for (const w of weighted) out.set(w.id, { kind: 'weighted', id: w.id, backends: linked(w.id).map((c) => ({ id: c.id, weight: c.weight })) });
  return out;
}

async function readIpPolicies(db: ScopedDb): Promise<Map<string, IpPolicyRules>> {
  const [policies, rules] = await Promise.all([db.select('ip_policies', {}), db.select('ip_policy_rules', {})]);
  const out = new Map<string, IpPolicyRules>(policies.map((p) => [p.id, { allow: [], deny: [] }]));
  for (const rule of rules) out.get(rule.ip_policy_id)?.[rule.action].push(rule.cidr);
  return out;
}

/** Every edge of the account with what it needs, read in one go. */
export async function readAccountEdges(db: ScopedDb, accountId: string): Promise<AccountEdges> {
  const [httpsRows, tlsRows, tcpRows, routeRows, edgeDomains, domains, tcpAddrs, addrs, cas, backends, ipPolicies, endpointConfigurations, cloud] =
    await Promise.all([
      db.select('https_edges', {}),
      db.select('tls_edges', {}),
      db.select('tcp_edges', {}),
      db.select('https_edge_routes', {}),
      db.select('edge_domains', {}),
      db.select('reserved_domains', {}),
      db.select('tcp_edge_hostports', {}),
      db.select('reserved_addrs', {}),
      db.select('certificate_authorities', {}),
      readBackends(db),
      readIpPolicies(db),
      readEndpointConfigurations(db),
      readCloudEndpoints(db, accountId),
    ]);
  const owners = [...httpsRows, ...tlsRows, ...tcpRows, ...routeRows].map((r) => r.id);
  const modules = await readModules(db, owners);
  const domainNames = new Map(domains.map((d) => [d.id, d.domain]));
  const hostsOf = (edgeId: string) => byPosition(edgeDomains.filter((d) => d.edge_id === edgeId)).flatMap((d) => domainNames.get(d.reserved_domain_id) ?? []);
  const addrById = new Map(addrs.map((a) => [a.id, a]));
  const caPems = new Map(cas.map((c) => [c.id, c.ca_pem]));
  // Routes in creation order; the order of matching is the router's (routes.ts).
  const routes = routeRows
    .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id))
    .map((r): HttpsRoute => ({ id: r.id, edgeId: r.edge_id, matchType: r.match_type, match: r.match, modules: routeModulesOf(modules.get(r.id)) }));
  const streamModules = (id: string): StreamEdgeModules => ({
    backend: moduleValue(modules.get(id), backendModule),
    ipRestriction: moduleValue(modules.get(id), ipRestrictionModule) as IpRestrictionModule | undefined,
    policy: policyOf(modules.get(id)),
  });
  return {
    accountId,
    https: httpsRows.map((e) => ({
      id: e.id,
      accountId,
      hosts: hostsOf(e.id),
      routes: routes.filter((r) => r.edgeId === e.id),
      mutualTls: mutualTlsOf(modules.get(e.id), caPems),
      tlsTermination: moduleValue(modules.get(e.id), httpsTlsTerminationModule),
    })),
    tls: tlsRows.map((e) => ({
      id: e.id,
      accountId,
      hosts: hostsOf(e.id),
      ...streamModules(e.id),
      mutualTls: mutualTlsOf(modules.get(e.id), caPems),
      tlsTermination: moduleValue(modules.get(e.id), tlsTerminationModule),
    })),
    tcp: tcpRows
      .map((e): TcpEdge => ({
        id: e.id,
        accountId,
        addrs: byPosition(tcpAddrs.filter((h) => h.tcp_edge_id === e.id)).flatMap((h) => {
          const addr = addrById.get(h.reserved_addr_id);
          return addr ? [{ addr: addr.addr, port: addr.port }] : [];
        }),
        ...streamModules(e.id),
      }))
      // A TCP cloud endpoint is served as a TCP edge of its address.
      .concat(cloud.tcp),
    cloud: cloud.http,
    backends,
    ipPolicies,
    endpointConfigurations,
  };
}
