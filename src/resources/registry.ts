// Every resource kind the API serves. A new kind is one line here; the map of kinds (prefix →
// kind) that renders Refs and checks references is built from these definitions.
import { MUTATION_OBSERVERS } from './mutation-observers.js';
import type { Catalogue } from '../core/errors.js';
import type { AnyDefinition } from '../crud/definition.js';
import { Kinds } from '../crud/kinds.js';
import { createResource, type Resource } from '../crud/resource.js';
import { DOMAIN_DEFAULTS, type DomainSettings } from '../config.js';
import type { CrossAccountReader } from '../db/cross-account.js';
import type { Store } from '../db/store.js';
import type { Sealer } from '../lib/crypto/sealer.js';
import type { KeyAuthenticator } from './api-keys/api-key.auth.js';
import { apiKeyDefinition } from './api-keys/api-key.resource.js';
import { auditEventDefinition } from './audit-events/audit-event.resource.js';
import { failoverBackend } from './backends/failover-backend.resource.js';
import { httpResponseBackend } from './backends/http-response-backend.resource.js';
import { staticBackend } from './backends/static-backend.resource.js';
import { tunnelGroupBackend } from './backends/tunnel-group-backend.resource.js';
import { weightedBackend } from './backends/weighted-backend.resource.js';
import { botUserDefinition } from './bot-users/bot-user.resource.js';
import { credentialDefinition } from './credentials/credential.resource.js';
import { ipPolicyDefinition } from './ip-policies/ip-policy.resource.js';
import { ipPolicyRuleDefinition } from './ip-policy-rules/ip-policy-rule.resource.js';
import type { ApiIpGuard } from './ip-restrictions/api-ip-guard.js';
import { ipRestrictionDefinition } from './ip-restrictions/ip-restriction.resource.js';
import { sshCertificateAuthorityDefinition } from './ssh-certificate-authorities/ssh-certificate-authority.resource.js';
import { sshCertificateDefinitions } from './ssh-certificates/ssh-certificate.resource.js';
import { sshCredentialDefinition } from './ssh-credentials/ssh-credential.resource.js';
import { agentIngressDefinition } from './agent-ingresses/agent-ingress.resource.js';
import { endpointConfigurationDefinition } from './endpoint-configurations/endpoint-configuration.resource.js';
import { reservedDomainDefinition } from './reserved-domains/reserved-domain.resource.js';
import { tlsCertificateDefinition } from './tls-certificates/tls-certificate.resource.js';
import { reservedAddrDefinition } from './reserved-addrs/reserved-addr.resource.js';
import { tcpEdgeDefinition } from './tcp-edges/tcp-edge.resource.js';
import { certificateAuthorityDefinition } from './certificate-authorities/certificate-authority.resource.js';
import { tlsEdgeDefinition } from './tls-edges/tls-edge.resource.js';
import { httpsEdgeDefinitions } from './https-edges/https-edge.resource.js';
import { tunnelSessionDefinition } from './tunnel-sessions/tunnel-session.resource.js';
import { tunnelDefinition } from './tunnels/tunnel.resource.js';
import { endpointDefinition } from './endpoints/endpoint.resource.js';

export interface ResourceDeps {
  store: Store;
  /** The reads across accounts of the kinds whose values are unique across them (names, addresses). */
  acrossAccounts: CrossAccountReader;
  auth: KeyAuthenticator;
  ipGuard: ApiIpGuard;
  sealer: Sealer;
  domains: DomainSettings;
  /** Each credential or SSH credential deleted, after its commit (the listeners end its sessions). */
  credentialDeleted?: (credentialId: string) => void;
}

/** Kinds that resources reference but this API does not serve: users are made with the CLI. */
const PLAIN_KINDS = [{ kind: 'user', title: 'user', prefix: 'usr', table: 'users' as const }];

export function resourceDefinitions({ acrossAccounts, auth, ipGuard, sealer, domains, credentialDeleted }: Omit<ResourceDeps, 'store'>) {
  const ipChanged = (accountId: string) => ipGuard.invalidate(accountId);
  return {
    apiKeys: apiKeyDefinition(auth),
    botUsers: botUserDefinition(auth),
    credentials: credentialDefinition(credentialDeleted),
    sshCredentials: sshCredentialDefinition(credentialDeleted),
    ipPolicies: ipPolicyDefinition,
    ipPolicyRules: ipPolicyRuleDefinition(ipChanged),
    ipRestrictions: ipRestrictionDefinition(ipChanged),
    tunnelGroupBackends: tunnelGroupBackend,
    httpResponseBackends: httpResponseBackend,
    staticBackends: staticBackend,
    failoverBackends: failoverBackend,
    weightedBackends: weightedBackend,
    sshCertificateAuthorities: sshCertificateAuthorityDefinition(sealer),
    ...sshCertificateDefinitions(sealer),
    tlsCertificates: tlsCertificateDefinition(sealer),
    endpointConfigurations: endpointConfigurationDefinition(sealer),
    reservedDomains: reservedDomainDefinition(domains, acrossAccounts),
    agentIngresses: agentIngressDefinition(domains, acrossAccounts),
    reservedAddrs: reservedAddrDefinition(domains, acrossAccounts),
    tcpEdges: tcpEdgeDefinition,
    certificateAuthorities: certificateAuthorityDefinition,
    tlsEdges: tlsEdgeDefinition,
    ...httpsEdgeDefinitions(sealer),
    auditEvents: auditEventDefinition,
    tunnelSessions: tunnelSessionDefinition,
    tunnels: tunnelDefinition,
    endpoints: endpointDefinition,
  } satisfies Record<string, AnyDefinition>;
}

export type Resources = Record<keyof ReturnType<typeof resourceDefinitions>, Resource>;

export function buildResources(deps: ResourceDeps): Resources {
  const definitions = resourceDefinitions(deps);
  const kinds = new Kinds(Object.values(definitions), PLAIN_KINDS);
  return Object.fromEntries(
    Object.entries(definitions).map(([name, d]) => [name, createResource(deps.store, kinds, d as AnyDefinition, MUTATION_OBSERVERS)]),
  ) as Resources;
}

/**
 * The errors of every kind, by the kind that declares them (a catalogue several kinds share is
 * listed once, under the first). Built from definitions made with the default settings and no
 * working parts: declaring a kind uses none of them, and `noDependencies` throws if that changes.
 */
export function kindCatalogues(): Record<string, Catalogue> {
  const definitions = Object.values(resourceDefinitions(noDependencies())) as AnyDefinition[];
  const seen = new Set<Catalogue>();
  const out: Record<string, Catalogue> = {};
  for (const d of definitions) {
    if (!d.errors || seen.has(d.errors)) continue;
    seen.add(d.errors);
    out[d.kind] = d.errors;
  }
  return out;
}

/** The default settings, and working parts that refuse every use: what declaring the kinds may not need. */
function noDependencies(): Omit<ResourceDeps, 'store'> {
  const refuse = (name: string) =>
    new Proxy(
      {},
      {
        get() {
          throw new Error(`declaring the resource kinds used ${name}; declarations must not need it`);
        },
      },
    );
  return {
    acrossAccounts: refuse('acrossAccounts') as never,
    auth: refuse('auth') as never,
    ipGuard: refuse('ipGuard') as never,
    sealer: refuse('sealer') as never,
    domains: DOMAIN_DEFAULTS,
  };
}
