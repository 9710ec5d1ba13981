// The shapes of what the edges enforce: the stored module values as the edge reads them, routes,
// edges, backends and IP policies. Types only; edge-config.ts reads them from the store, and the
// readers it composes (cloud endpoints, endpoint configurations) and agent options share them.
import type { Static, TSchema } from '@sinclair/typebox';
import type { TunnelTarget } from '../core/live-agents.js';
import type { ModuleDefinition } from '../crud/modules.js';
import type { backendModule, tlsTerminationModule } from '../edge-config/modules/edge-modules.js';
import type { circuitBreakerModule, compressionModule, requestHeadersModule, userAgentFilterModule } from '../edge-config/modules/route-modules.js';
import type { OAuthValue, OidcValue, SamlValue } from '../edge-config/modules/sign-in-modules.js';
import type { EndpointPolicy } from '../edge-config/traffic-policy/traffic-policy.js';

export type ValueOf<M> = M extends ModuleDefinition<infer _R, infer S extends TSchema> ? Static<S> : never;

export type BackendModule = ValueOf<typeof backendModule>;
/** Declared by hand: the module's stored shape has a computed key, which TypeBox types loosely. */
export interface IpRestrictionModule {
  enabled: boolean;
  ip_policy_ids: string[];
}
export type TlsTerminationModule = ValueOf<typeof tlsTerminationModule>;
export type HeadersModule = ValueOf<typeof requestHeadersModule>;
export type CircuitBreakerModule = ValueOf<typeof circuitBreakerModule>;
export type UserAgentFilterModule = ValueOf<typeof userAgentFilterModule>;
export type SwitchModule = ValueOf<typeof compressionModule>;

/** Either form of an edge's traffic policy, as stored. */
export type PolicyModule = { kind: 'traffic_policy'; enabled: boolean; value: string } | { kind: 'policy'; value: EndpointPolicy };

export type OAuthModule = OAuthValue;
export type OidcModule = OidcValue;
export type SamlModule = SamlValue;

/** The webhook verification module as the edge reads it. */
export interface WebhookVerificationModule {
  enabled: boolean;
  provider: string;
  secret: string;
}

export interface RouteModules {
  backend?: BackendModule;
  ipRestriction?: IpRestrictionModule;
  circuitBreaker?: CircuitBreakerModule;
  compression?: SwitchModule;
  requestHeaders?: HeadersModule;
  responseHeaders?: HeadersModule;
  userAgentFilter?: UserAgentFilterModule;
  websocketTcpConverter?: SwitchModule;
  policy?: PolicyModule;
  /** Sign-in (sign-in/gate.ts): one of the three at most. */
  oauth?: OAuthModule;
  oidc?: OidcModule;
  saml?: SamlModule;
  webhookVerification?: WebhookVerificationModule;
}

export type RouteMatchType = 'exact_path' | 'path_prefix';

export interface HttpsRoute {
  id: string;
  edgeId: string;
  matchType: RouteMatchType;
  match: string;
  modules: RouteModules;
}

export interface HttpsEdge {
  id: string;
  accountId: string;
  /** The reserved domains it serves, lower case. */
  hosts: string[];
  routes: HttpsRoute[];
  mutualTls?: { enabled: boolean; caPems: string[] };
  tlsTermination?: TlsTerminationModule;
  /** Set when this edge is a cloud endpoint served as one (cloud-endpoints.ts): its scheme and URL. */
  cloud?: { scheme: 'http' | 'https'; url: string };
}

export interface StreamEdgeModules {
  backend?: BackendModule;
  ipRestriction?: IpRestrictionModule;
  policy?: PolicyModule;
}

export interface TlsEdge extends StreamEdgeModules {
  id: string;
  accountId: string;
  hosts: string[];
  mutualTls?: { enabled: boolean; caPems: string[] };
  tlsTermination?: TlsTerminationModule;
}

export interface TcpEdge extends StreamEdgeModules {
  id: string;
  accountId: string;
  /** The reserved addresses it serves: `host:port`, and the port listened on. */
  addrs: { addr: string; port: number }[];
  /** Set when this edge is a TCP cloud endpoint served as one (cloud-endpoints.ts): its URL. */
  cloud?: { url: string };
}

export type Backend =
  | { kind: 'tunnel_group'; id: string; labels: Record<string, string> }
  | { kind: 'http_response'; id: string; status: number; headers: Record<string, string>; body: string }
  | { kind: 'static_address'; id: string; host: string; port: number; tls: boolean }
  | { kind: 'failover'; id: string; backends: string[] }
  | { kind: 'weighted'; id: string; backends: { id: string; weight: number }[] }
  /** An agent's endpoint served through the edge pipeline (agent-endpoints.ts): its own tunnel. */
  | { kind: 'agent_endpoint'; id: string; target: TunnelTarget };

export interface IpPolicyRules {
  allow: string[];
  deny: string[];
}
