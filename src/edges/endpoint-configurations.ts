// The endpoint configurations (the legacy API) attached to an account's reserved domains (one for
// http, one for https) and reserved addresses: their modules, read into the account's snapshot
// with its edges, so that an agent endpoint on such a domain or address is served with them and
// no request reads the store.
import { readModules, type StoredModule } from '../crud/modules.js';
import type { ScopedDb } from '../db/scoped.js';
import { ipPolicyModule } from '../edge-config/modules/edge-modules.js';
import { circuitBreakerModule, compressionModule, requestHeadersModule, responseHeadersModule } from '../edge-config/modules/route-modules.js';
import type { AgentIdentityModules } from './agent-options.js';
import type { CircuitBreakerModule, HeadersModule, IpRestrictionModule, SwitchModule, TlsTerminationModule } from './edge-model.js';

/** The modules of one endpoint configuration, as agent endpoints on its domain or address enforce them. */
export interface EndpointConfigurationModules {
  id: string;
  ipRestriction?: IpRestrictionModule;
  circuitBreaker?: CircuitBreakerModule;
  compression?: SwitchModule;
  requestHeaders?: HeadersModule;
  responseHeaders?: HeadersModule;
  /** oauth, oidc, saml and webhook_validation (as `webhookVerification`): their stored values. */
  identity: AgentIdentityModules & { saml?: unknown };
  /** Modules set that agent endpoints cannot hold to (mutual TLS, TLS 1.3 at least): every request is refused (501), never passed around them. */
  unenforceable: string[];
}

export interface EndpointConfigurations {
  /** By reserved domain id: the configuration of each scheme. */
  byDomain: ReadonlyMap<string, { http?: EndpointConfigurationModules; https?: EndpointConfigurationModules }>;
  /** By reserved address id. */
  byAddr: ReadonlyMap<string, EndpointConfigurationModules>;
}

export const NO_ENDPOINT_CONFIGURATIONS: EndpointConfigurations = { byDomain: new Map(), byAddr: new Map() };

const enabled = (module: StoredModule | undefined) => module !== undefined && (module.value as { enabled?: boolean }).enabled !== false;

function modulesOf(id: string, stored: ReadonlyMap<string, StoredModule>): EndpointConfigurationModules {
  const value = <T>(name: string, read: (v: unknown) => unknown): T | undefined => {
    const module = stored.get(name);
    return module ? (read(module.value) as T) : undefined;
  };
  const out: EndpointConfigurationModules = { id, identity: {}, unenforceable: [] };
  const ip = value<IpRestrictionModule>(ipPolicyModule.name, (v) => ipPolicyModule.read(v));
  if (ip) out.ipRestriction = ip;
  const breaker = value<CircuitBreakerModule>(circuitBreakerModule.name, (v) => circuitBreakerModule.read(v));
  if (breaker) out.circuitBreaker = breaker;
  const compression = value<SwitchModule>(compressionModule.name, (v) => compressionModule.read(v));
  if (compression) out.compression = compression;
  const request = value<HeadersModule>(requestHeadersModule.name, (v) => requestHeadersModule.read(v));
  if (request) out.requestHeaders = request;
  const response = value<HeadersModule>(responseHeadersModule.name, (v) => responseHeadersModule.read(v));
  if (response) out.responseHeaders = response;
  // Identity: the values as routes hold them (the route's sign-in and webhook code enforces them).
  for (const [stored_, route] of [
    ['oauth', 'oauth'],
    ['oidc', 'oidc'],
    ['saml', 'saml'],
    ['webhook_validation', 'webhook_verification'],
  ] as const) {
    const module = stored.get(stored_);
    if (!enabled(module)) continue;
    const key = route === 'webhook_verification' ? 'webhookVerification' : route;
    out.identity[key] = module!.value;
  }
  // Client certificates are not asked for on agent endpoints; a minimum of TLS 1.3 is not held to either
  // (the listener's own minimum, TLS 1.2, covers 1.0 to 1.2).
  if (enabled(stored.get('mutual_tls'))) out.unenforceable.push('mutual_tls');
  const termination = stored.get('tls_termination')?.value as TlsTerminationModule | undefined;
  if (termination?.enabled && termination.min_version === '1.3') out.unenforceable.push('tls_termination');
  return out;
}

/** The account's endpoint configurations that are attached, by what they are attached to. */
export async function readEndpointConfigurations(db: ScopedDb): Promise<EndpointConfigurations> {
  const [configurations, domains, addrs] = await Promise.all([
    db.select('endpoint_configurations', {}),
    db.select('reserved_domains', {}),
    db.select('reserved_addrs', {}),
  ]);
  if (configurations.length === 0) return NO_ENDPOINT_CONFIGURATIONS;
  const stored = await readModules(
    db,
    configurations.map((c) => c.id),
  );
  const byId = new Map(configurations.map((c) => [c.id, modulesOf(c.id, stored.get(c.id) ?? new Map())]));
  const byDomain = new Map<string, { http?: EndpointConfigurationModules; https?: EndpointConfigurationModules }>();
  for (const d of domains) {
    const http = d.http_endpoint_configuration_id ? byId.get(d.http_endpoint_configuration_id) : undefined;
    const https = d.https_endpoint_configuration_id ? byId.get(d.https_endpoint_configuration_id) : undefined;
    if (http || https) byDomain.set(d.id, { ...(http && { http }), ...(https && { https }) });
  }
  const byAddr = new Map<string, EndpointConfigurationModules>();
  for (const a of addrs) {
    const configuration = a.endpoint_configuration_id ? byId.get(a.endpoint_configuration_id) : undefined;
    if (configuration) byAddr.set(a.id, configuration);
  }
  return { byDomain, byAddr };
}
