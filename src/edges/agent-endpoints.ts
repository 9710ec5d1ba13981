// Agent endpoints served through the edges' pipeline: an endpoint whose Bind asked for modules,
// or whose reserved domain or address has an endpoint configuration attached, becomes a
// synthetic one-route edge (HTTP) or stream edge (TCP, TLS) whose backend is its own tunnel, and
// the same module code as edge routes enforces it. An endpoint with neither is not touched: the
// listeners serve it as they always did, after one lookup here.
//
// Precedence (docs/ingress.md): both the configuration's modules and the Bind's apply. IP rules:
// the client must pass both. Headers: both lists, the configuration's value winning for a name
// both add. Compression: on when either asks. Circuit breaker and identity modules: the
// configuration's when it has one, else the Bind's.
import type { TunnelTarget } from '../core/live-agents.js';
import { IpMatcher } from '../lib/ip/cidr.js';
import type { AgentEndpointModules, AgentIpRestriction } from './agent-options.js';
import { basicAuthAllowed } from './basic-auth.js';
import type { AccountEdges, HeadersModule, HttpsEdge, RouteModules, StreamEdgeModules } from './edge-config.js';
import type { EndpointConfigurationModules } from './endpoint-configurations.js';

export type AgentScheme = 'http' | 'https';

/** A stream edge made for an agent's TCP or TLS endpoint (the shape edge-stream.ts serves). */
export interface AgentStreamEdge extends StreamEdgeModules {
  id: string;
  accountId: string;
  serverName?: string;
}

/** What the pipeline needs of an agent endpoint beside its synthetic edge. */
export interface AgentEndpointView {
  /** The endpoint's id (the tunnel's, for a tunnel without one): what its traffic is counted and logged under. */
  endpointId: string;
  /** The account as its backend and IP policies are resolved: the snapshot's, with the endpoint's own tunnel as backend. */
  account: AccountEdges;
  scheme: AgentScheme | 'tcp' | 'tls';
  /**
   * The endpoint's own checks, run after the route's IP restriction: what refused, or undefined.
   * `unenforceable`: its configuration asks what agent endpoints cannot hold to (`modules`).
   */
  check(clientIp: string, authorization: string | undefined): AgentRefusal | undefined;
}

export type AgentRefusal = { refused: 'ip_restriction' } | { refused: 'basic_auth' } | { refused: 'unenforceable'; modules: string[] };

const views = new WeakMap<object, AgentEndpointView>();

/** The agent endpoint a synthetic edge stands for; undefined for an edge of the API. */
export function agentEndpointOf(edge: object): AgentEndpointView | undefined {
  return views.get(edge);
}

/** The configuration that applies to an endpoint: its reserved domain's for its scheme, or its reserved address's. */
function configurationOf(target: TunnelTarget, snapshot: AccountEdges | undefined): EndpointConfigurationModules | undefined {
  const configurations = snapshot?.endpointConfigurations;
  const endpoint = target.endpoint;
  if (!configurations || !endpoint) return undefined;
  if (endpoint.tcpAddrId !== undefined) return configurations.byAddr.get(endpoint.tcpAddrId);
  if (endpoint.domainId === undefined || (target.proto !== 'http' && target.proto !== 'https')) return undefined;
  return configurations.byDomain.get(endpoint.domainId)?.[target.proto];
}

/** The agent's CIDRs as ngrok applies them: a deny match refuses; with allow CIDRs, only an address they match passes. */
function agentIpCheck(rules: AgentIpRestriction | undefined): ((ip: string) => boolean) | undefined {
  if (!rules) return undefined;
  const everyone = [
    { cidr: '0.0.0.0/0', action: 'allow' as const },
    { cidr: '::/0', action: 'allow' as const },
  ];
  const notDenied = new IpMatcher([...everyone, ...rules.deny.map((cidr) => ({ cidr, action: 'deny' as const }))]);
  const allowed = new IpMatcher(rules.allow.map((cidr) => ({ cidr, action: 'allow' as const })));
  return (ip) => notDenied.allows(ip) && (rules.allow.length === 0 || allowed.allows(ip));
}

const on = <M extends { enabled: boolean }>(module: M | undefined): M | undefined => (module?.enabled ? module : undefined);

/** Both headers modules: every name either removes; the configuration's value for a name both add. */
function mergedHeaders(configuration: HeadersModule | undefined, bind: HeadersModule | undefined): HeadersModule | undefined {
  const a = on(configuration);
  if (!a || !bind) return a ?? bind;
  return { enabled: true, add: { ...bind.add, ...a.add }, remove: [...new Set([...a.remove, ...bind.remove])] };
}

/** The view of an endpoint: its account with its tunnel as backend, and the Bind's own checks. */
function viewOf(
  target: TunnelTarget,
  snapshot: AccountEdges | undefined,
  configuration: EndpointConfigurationModules | undefined,
  scheme: AgentEndpointView['scheme'],
  backendId: string,
): AgentEndpointView {
  const modules = target.endpoint?.modules;
  const unenforceable = configuration?.unenforceable ?? [];
  const ipAllowed = agentIpCheck(modules?.ipRestriction);
  const basicAuth = modules?.basicAuth;
  return {
    endpointId: target.endpoint?.id ?? target.tunnelId,
    account: {
      accountId: target.accountId,
      https: [],
      tls: [],
      tcp: [],
      cloud: [],
      backends: new Map([[backendId, { kind: 'agent_endpoint', id: backendId, target }]]),
      ipPolicies: snapshot?.ipPolicies ?? new Map(),
    },
    scheme,
    check(clientIp, authorization) {
      if (unenforceable.length > 0) return { refused: 'unenforceable', modules: unenforceable };
      if (ipAllowed && !ipAllowed(clientIp)) return { refused: 'ip_restriction' };
      if (basicAuth && !basicAuthAllowed(basicAuth, authorization)) return { refused: 'basic_auth' };
      return undefined;
    },
  };
}

function routeModules(bind: AgentEndpointModules | undefined, configuration: EndpointConfigurationModules | undefined, backendId: string): RouteModules {
  const c = configuration;
  const identity = { ...bind?.identity };
  // The configuration's sign-in module, when it has one, is the one in force; so is its webhook verification.
  if (c && (c.identity.oauth ?? c.identity.oidc ?? c.identity.saml) !== undefined) {
    delete identity.oauth;
    delete identity.oidc;
  }
  if (c?.identity.webhookVerification !== undefined) delete identity.webhookVerification;
  const combined = { ...identity, ...c?.identity };
  const compression = on(c?.compression) ?? bind?.compression;
  const modules: RouteModules = {
    // The identity values, under the names routes give them (a route's own enforcement reads them there).
    ...(combined as object),
    backend: { enabled: true, backend_id: backendId },
    ipRestriction: on(c?.ipRestriction),
    circuitBreaker: on(c?.circuitBreaker) ?? bind?.circuitBreaker,
    compression,
    requestHeaders: mergedHeaders(c?.requestHeaders, bind?.requestHeaders),
    responseHeaders: mergedHeaders(c?.responseHeaders, bind?.responseHeaders),
    userAgentFilter: bind?.userAgentFilter,
    websocketTcpConverter: bind?.websocketTcpConverter,
    policy: bind?.policy,
  };
  return modules;
}

interface Cached<E> {
  snapshot: AccountEdges | undefined;
  scheme: string;
  edge: E;
}

/** Agent endpoints' synthetic edges, made once per tunnel and account snapshot (a configuration change makes new ones). */
export class AgentEndpoints {
  private readonly httpEdges = new WeakMap<TunnelTarget, Cached<HttpsEdge>>();
  private readonly streamEdges = new WeakMap<TunnelTarget, Cached<AgentStreamEdge>>();

  constructor(private readonly edges: { account(accountId: string): AccountEdges | undefined }) {}

  /** What applies to an endpoint now; undefined when it has neither options nor a configuration (served as it is). */
  private inForce(target: TunnelTarget) {
    const endpoint = target.endpoint;
    if (!endpoint) return undefined;
    const snapshot = this.edges.account(target.accountId);
    const configuration = configurationOf(target, snapshot);
    return endpoint.modules || configuration ? { endpoint, snapshot, configuration } : undefined;
  }

  /** The synthetic edge of an HTTP(S) endpoint, or undefined when nothing is to be enforced on it. */
  httpEdge(target: TunnelTarget, scheme: AgentScheme): HttpsEdge | undefined {
    const now = this.inForce(target);
    if (!now) return undefined;
    const { endpoint, snapshot, configuration } = now;
    const cached = this.httpEdges.get(target);
    if (cached && cached.snapshot === snapshot && cached.scheme === scheme) return cached.edge;
    const backendId = `agent:${target.tunnelId}`;
    const edge: HttpsEdge = {
      id: endpoint.id,
      accountId: target.accountId,
      hosts: [],
      // The tunnel's id names the route: its circuit breaker and compiled policy are the tunnel's.
      routes: [
        { id: target.tunnelId, edgeId: endpoint.id, matchType: 'path_prefix', match: '/', modules: routeModules(endpoint.modules, configuration, backendId) },
      ],
    };
    views.set(edge, viewOf(target, snapshot, configuration, scheme, backendId));
    this.httpEdges.set(target, { snapshot, scheme, edge });
    return edge;
  }

  /** The synthetic stream edge of a TCP or TLS endpoint (`serverName` for TLS), or undefined when nothing is to be enforced. */
  streamEdge(target: TunnelTarget, serverName?: string): AgentStreamEdge | undefined {
    const now = this.inForce(target);
    if (!now) return undefined;
    const { endpoint, snapshot, configuration } = now;
    const key = serverName ?? '';
    const cached = this.streamEdges.get(target);
    if (cached && cached.snapshot === snapshot && cached.scheme === key) return cached.edge;
    const backendId = `agent:${target.tunnelId}`;
    const edge: AgentStreamEdge = {
      // The tunnel's id names the edge: its compiled policy is the tunnel's.
      id: target.tunnelId,
      accountId: target.accountId,
      ...(serverName !== undefined && { serverName }),
      backend: { enabled: true, backend_id: backendId },
      ipRestriction: on(configuration?.ipRestriction),
      policy: endpoint.modules?.policy,
    };
    views.set(edge, viewOf(target, snapshot, configuration, target.proto === 'tls' ? 'tls' : 'tcp', backendId));
    this.streamEdges.set(target, { snapshot, scheme: key, edge });
    return edge;
  }
}
