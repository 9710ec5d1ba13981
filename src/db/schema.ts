// Row types of the tables, as Kysely sees them. Times are RFC 3339 strings in both stores;
// booleans are SqlBool because SQLite hands back 0/1 (read them through `toBool`).
//
// Only the tables the store itself owns are declared here: accounts and users, the generic tables
// of the resource core (modules, idempotency keys, jobs, audit events), the ACME tables, the live
// agent records with their views and route claims, and the three kind tables that src/db reads
// itself (certificates served by name, ACME challenges of an account's domains). Every other resource
// kind declares its tables next to it, in src/resources/<kind>/<kind>.table.ts, and adds them to
// `Database` by module augmentation (`declare module '../../db/schema.js' { interface Database {…} }`).
// Augmentation, because the store must not import the kinds (src/db sits below src/resources), yet
// `Kysely<Database>`, `OwnedTable` and `RowOf` must see every table: the declarations merge into this
// one interface for the whole program. Each kind's resource file imports its table file, so the
// registry, which imports every kind, brings all of them in.
import type { SqlBool } from 'kysely';
import type { Role } from '../core/context.js';

export type { Role };

export interface AccountsTable {
  id: string;
  name: string;
  created_at: string;
}

export interface UsersTable {
  id: string;
  account_id: string;
  name: string;
  role: Role;
  created_at: string;
}

// Tables of resource kinds that stay here because src/db reads them (served-certificates.ts,
// acme.ts), and src/db may not import src/resources, not even for types.

export interface TlsCertificatesTable {
  id: string;
  account_id: string;
  description: string;
  metadata: string;
  created_at: string;
  certificate_pem: string;
  /** PKCS#8 PEM sealed with the master key, bound to the id. */
  private_key_sealed: string;
  private_key_type: 'rsa' | 'ecdsa' | 'ed25519';
  /** JSON array: the leaf's DNS names (SANs, else the common name), lower case. */
  dns_names: string;
  /** JSON object: the response fields derived from the leaf. */
  details: string;
  not_after: string;
  /** Set when edgeplane issued it (ACME); null for an uploaded certificate. */
  issued_at: string | null;
}

/** Certificate management of a reserved domain or an agent ingress: the policy, and the job while one runs. */
export interface CertificateManagementColumns {
  /** null: no policy (automatic management is off). */
  cert_authority: string | null;
  cert_key_type: string | null;
  cert_renews_at: string | null;
  /** null: no provisioning job. */
  cert_job_started_at: string | null;
  cert_job_msg: string | null;
  cert_job_error_code: string | null;
  cert_job_retries_at: string | null;
}

export interface ReservedDomainsTable extends CertificateManagementColumns {
  id: string;
  account_id: string;
  description: string;
  metadata: string;
  created_at: string;
  /** Lower case, A-labels, no trailing dot; unique across accounts. */
  domain: string;
  /** The labels in reverse order (`com.example.app`), for the names under a base. */
  domain_reversed: string;
  region: string | null;
  cname_target: string | null;
  acme_challenge_cname_target: string | null;
  certificate_id: string | null;
  http_endpoint_configuration_id: string | null;
  https_endpoint_configuration_id: string | null;
}

export interface AgentIngressesTable extends CertificateManagementColumns {
  id: string;
  account_id: string;
  description: string;
  metadata: string;
  created_at: string;
  /** Lower case, A-labels, no trailing dot; unique across accounts. */
  domain: string;
  /** The labels in reverse order (`com.example.app`), for the names under it. */
  domain_reversed: string;
  /** The certificate issued for it under its policy; null before the first. */
  certificate_id: string | null;
}

/** A module of an edge, a route or an endpoint configuration: its value as JSON. */
export interface ModulesTable {
  owner_id: string;
  name: string;
  account_id: string;
  value: string;
}

/** The ids a module names (a backend, IP policies), in order. */
export interface ModuleRefsTable {
  owner_id: string;
  name: string;
  account_id: string;
  target_id: string;
  position: number;
}

/** The ACME account edgeplane uses with one directory. */
export interface AcmeAccountsTable {
  directory_url: string;
  /** PKCS#8 PEM sealed with the master key, bound to the directory URL. */
  key_sealed: string;
  /** The account's URL at the CA (its key id), once registered. */
  account_url: string | null;
  created_at: string;
}

/** A challenge answer being served while the CA validates it. */
export interface AcmeChallengesTable {
  id: string;
  type: 'http-01' | 'dns-01';
  /** The HTTP-01 token, or the DNS name (lower case, no trailing dot) of a DNS-01 TXT record. */
  name: string;
  /** The key authorization (HTTP-01) or its digest (the DNS-01 TXT value). */
  value: string;
  subject_id: string;
  /** Served until then at most, in case the job that published it died before removing it. */
  expires_at: string;
}

/** The answer to a POST sent with an Idempotency-Key, replayed for the same key and request. */
export interface IdempotencyKeysTable {
  account_id: string;
  /** The API key that sent the request: a key is the credential's, never shared across credentials. */
  api_key_id: string;
  key: string;
  /** SHA-256 of the method, path and body: the same key with another request is refused. */
  request_hash: string;
  /** null while the first request is being answered. */
  status: number | null;
  /** The answer as recorded: a value shown once (a token) is kept as a later read shows it, null. */
  body: string | null;
  created_at: string;
  lease_until: string;
  /** The resource the request's change acted on, set in that change's transaction: null until it commits. */
  resource_id: string | null;
}

/**
 * A background job (src/db/jobs.ts): one per kind and subject. Instants are `toISOString()` text
 * (fixed width, so they sort as text). A claim sets the lease and counts the attempt.
 */
export interface JobsTable {
  id: string;
  account_id: string;
  kind: string;
  /** The resource the job works on. */
  subject_id: string;
  /** Due from this instant. */
  run_at: string;
  /** Claims so far, the current one included. */
  attempts: number;
  /** The runner holding the job until `lease_until`; null when none does. */
  lease_owner: string | null;
  lease_until: string | null;
  /** The last failure's message, for operators. */
  last_error: string | null;
  created_at: string;
}

/** One mutation made over the API (src/crud/audit.ts): who, what and when; never a request body. */
export interface AuditEventsTable {
  id: string;
  account_id: string;
  created_at: string;
  /** The operation id as the API names it: `ip_policy.create`, `tcp_edge.backend_module.replace`. */
  operation: string;
  /** The resource acted on (the new one's id for a create). */
  resource_id: string;
  /** The resource's parent, for a kind under another (an HTTPS edge route's edge); null otherwise. */
  parent_id: string | null;
  /** The API key that authenticated the request. */
  key_id: string;
  /** The key's owner: a user (usr_…) or a bot user (bot_…). */
  principal_id: string;
}

/** An agent session held by an instance (src/tunnels/live-records.ts), while its lease holds. */
export interface AgentSessionsTable {
  id: string;
  account_id: string;
  /** The instance that holds the session; a fresh random id per process. */
  instance_id: string;
  /** Instant (`toISOString()`) until which the row holds without being written again. */
  lease_expires_at: string;
  credential_id: string;
  transport: string;
  region: string;
  ip: string;
  os: string;
  agent_version: string;
  metadata: string;
  started_at: string;
  /** The same as `started_at`: every resource row has one. */
  created_at: string;
}

/** A tunnel of a live agent session: a bound endpoint (the `endpoint_*` columns) or a labeled tunnel (`labels`). */
export interface AgentTunnelsTable {
  id: string;
  account_id: string;
  session_id: string;
  instance_id: string;
  lease_expires_at: string;
  region: string;
  /** JSON object; null for a bound endpoint. */
  labels: string | null;
  metadata: string;
  forwards_to: string;
  started_at: string;
  created_at: string;
  endpoint_id: string | null;
  endpoint_proto: string | null;
  endpoint_public_url: string | null;
  endpoint_hostport: string | null;
  endpoint_domain_id: string | null;
  endpoint_tcp_addr_id: string | null;
  /** The Bind's options, sealed (migration 0023): the modules any instance enforces for this endpoint; null when it asked for none. */
  sealed_options: string | null;
}

/** An instance that carries public connections for its peers (migration 0023), with its lease. */
export interface PeerInstancesTable {
  id: string;
  /** host:port its peers dial (EDGEPLANE_PEER_ADDRESS). */
  peer_address: string;
  lease_expires_at: string;
}

/** A command for a session, queued by an instance that does not hold it; its holder runs it at its next sync. */
export interface AgentSessionCommandsTable {
  id: string;
  account_id: string;
  session_id: string;
  /** The SessionCommand as JSON. */
  command: string;
  created_at: string;
}

/** A public route held by a tunnel, across instances (src/db/route-claims.ts). */
export interface AgentRouteClaimsTable {
  route: string;
  tunnel_id: string;
  instance_id: string;
  /** 1 when the bind asked for pooling. */
  pooling: number;
  lease_expires_at: string;
}

/** The endpoint of a live bound tunnel (the view `live_endpoints` over agent_tunnels). */
export interface LiveEndpointsView {
  id: string;
  account_id: string;
  tunnel_id: string;
  proto: string;
  public_url: string;
  hostport: string;
  domain_id: string | null;
  tcp_addr_id: string | null;
  region: string;
  metadata: string;
  created_at: string;
  lease_expires_at: string;
}

/** The store's tables; each resource kind adds its own (see the top of this file). */
/** Each account's configuration revision (config-revisions.ts): one bump per change through the API. */
export interface ConfigRevisionsTable {
  account_id: string;
  revision: number;
}

/** The SSH listener's host key, one per algorithm (migration 0025), sealed with the master key. */
export interface SshHostKeysTable {
  algorithm: string;
  private_key_sealed: string;
  /** The public key in its authorized_keys form (`ssh-ed25519 AAAA…`). */
  public_key: string;
  created_at: string;
}

export interface Database {
  accounts: AccountsTable;
  users: UsersTable;
  tls_certificates: TlsCertificatesTable;
  reserved_domains: ReservedDomainsTable;
  agent_ingresses: AgentIngressesTable;
  modules: ModulesTable;
  module_refs: ModuleRefsTable;
  jobs: JobsTable;
  acme_accounts: AcmeAccountsTable;
  acme_challenges: AcmeChallengesTable;
  idempotency_keys: IdempotencyKeysTable;
  audit_events: AuditEventsTable;
  config_revisions: ConfigRevisionsTable;
  agent_sessions: AgentSessionsTable;
  agent_tunnels: AgentTunnelsTable;
  agent_session_commands: AgentSessionCommandsTable;
  agent_route_claims: AgentRouteClaimsTable;
  peer_instances: PeerInstancesTable;
  ssh_host_keys: SshHostKeysTable;
  /** Views (migration 0020): the rows above whose lease has not run out. */
  live_tunnel_sessions: AgentSessionsTable;
  live_tunnels: AgentTunnelsTable;
  live_endpoints: LiveEndpointsView;
}

/** Tables that belong to no account: the service's own (src/db/acme.ts reads and writes them). */
export type ServiceTable = 'accounts' | 'acme_accounts' | 'acme_challenges';

export function toBool(value: SqlBool): boolean {
  return value === true || value === 1;
}
