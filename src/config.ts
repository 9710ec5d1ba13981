// One typed schema for every setting. Settings come from environment variables; command-line
// flags of the same name override them. Every problem is reported at once.
import path from 'node:path';
import net from 'node:net';
import { parseCidr } from './lib/ip/cidr.js';
import { parseDomainName } from './lib/dns/names.js';
import { parseResolverAddress } from './lib/dns/resolver.js';
import { withoutCredentials } from './lib/http/url.js';
import { OAUTH_PROVIDERS, type OAuthProvider } from './core/oauth-providers.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** The level the data plane's access-log lines are written at, or off (EDGEPLANE_ACCESS_LOG). */
export type AccessLogSetting = 'info' | 'debug' | 'off';

/** What an instance runs: the HTTP API, the background job runner, or both. */
export type RunMode = 'api' | 'worker' | 'all';

export interface Config {
  dataDir: string;
  database: { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string };
  /** Milliseconds: a statement's limit, lock waits included (PostgreSQL statement_timeout, SQLite busy timeout); the wait for a PostgreSQL connection. */
  databaseTimeouts: { statementMs: number; poolMs: number };
  listen: { host: string; port: number };
  /** Milliseconds a client has for its headers, its whole request, and idling between requests; open connections at most. */
  connections: { headersTimeoutMs: number; requestTimeoutMs: number; keepAliveTimeoutMs: number; max: number };
  baseUrl: string;
  tls: { mode: 'off' } | { mode: 'auto' } | { mode: 'files'; cert: string; key: string };
  logLevel: LogLevel;
  /** Proxies whose X-Forwarded-For is believed (CIDRs); empty: the socket peer is the client. */
  trustedProxies: string[];
  /** Create a default account with an admin key when the store has no account yet. */
  bootstrap: boolean;
  /** As configured; main.ts resolves it (or the key file) into the key itself. */
  masterKey?: string;
  domains: DomainSettings;
  runMode: RunMode;
  certificates: CertificateSettings;
  /** Bearer token `/metrics` requires; unset, it answers loopback clients only. */
  metricsToken?: string;
  /** Requests an account may send per minute (0: no limit), counted in Redis when it is set, else per process. */
  rateLimit: { perMinute: number; redisUrl?: string };
  /** Where ngrok agents dial in (TLS); undefined: off. `tls` files, else the local CA's certificate. */
  agentListen?: { host: string; port: number; tls?: { cert: string; key: string } };
  /** Milliseconds a stopping server lets the data plane's requests and streams in flight finish before it cuts them. */
  drainTimeoutMs: number;
  /** Where public clients reach agents' endpoints: HTTPS and TLS on one port, plain HTTP on another; undefined: off. */
  ingress: {
    https?: { host: string; port: number };
    http?: { host: string; port: number };
    tcpHost: string;
    signIn?: SignInConfig;
    /** The ports public clients reach the listeners at, which endpoint URLs name (default: the listeners' own). */
    publicPorts?: { https?: number; http?: number };
  };
  /** The level of the line each public request or connection leaves in the log, or off. */
  accessLog: AccessLogSetting;
  /**
   * Where other instances dial this one to reach its agents, and the address they are told;
   * undefined: off (public connections reach the agents of this instance only). `address`
   * undefined: the listener's own host and port, once it listens.
   */
  peer?: { listen: { host: string; port: number }; address?: string };
  /** Where `ssh -R` agents dial in (off when unset). */
  sshListen?: { host: string; port: number };
}

/** OAuth providers moved to another host, and the server's own OAuth application per provider (set only when configured). */
export interface SignInConfig {
  providerUrls?: Partial<Record<OAuthProvider, string>>;
  defaultClients?: Partial<Record<OAuthProvider, { clientId: string; clientSecret: string }>>;
}

/** How certificates of reserved domains and agent ingresses are checked, ordered and proven. */
export interface CertificateSettings {
  /** The RFC 8555 directory certificates are ordered from. */
  acmeDirectoryUrl: string;
  /** External account binding, when the CA requires one. */
  acmeEab?: { kid: string; hmacKey: string };
  /** PEM file of CAs trusted for the directory's own HTTPS, beside the public ones. */
  acmeCaFile?: string;
  /** Contact address given to the CA with the account. */
  acmeEmail?: string;
  /** DNS server (IP, optionally with a port) that DNS checks ask; the system's when unset. */
  dnsResolver?: { host: string; port: number };
  /** Where the built-in HTTP-01 challenge responder listens; off when unset. */
  http01Listen?: { host: string; port: number };
  /** Where the built-in authoritative DNS server listens (UDP and TCP); off when unset. */
  dnsListen?: { host: string; port: number };
}

export const LETS_ENCRYPT_DIRECTORY = 'https://acme-v02.api.letsencrypt.org/directory';

/** What the operator's platform owns in DNS: the names domains and agent ingresses are checked and given against. */
export interface DomainSettings {
  /** Base domains the service owns: names under them need no CNAME and take no certificate. */
  serviceDomains: string[];
  /** Zone of the generated `cname_target`s. */
  cnameZone: string;
  /** Zone of the generated `acme_challenge_cname_target`s. */
  acmeChallengeZone: string;
  /** `ns_targets` of agent ingresses: FQDNs with a trailing dot. */
  nameservers: string[];
  /** Regions served; agent ingresses get `tunnel.<region>.<domain>` for each, reserved domains may name one. */
  regions: string[];
  /** The pool reserved TCP addresses are allocated from: host names with port ranges, tried in order. */
  tcpAddresses: TcpAddressRange[];
}

export interface TcpAddressRange {
  host: string;
  from: number;
  to: number;
}

/** The seven regions of the API this one follows. */
export const KNOWN_REGIONS = ['us', 'eu', 'ap', 'au', 'sa', 'jp', 'in'] as const;

export const DOMAIN_DEFAULTS: DomainSettings = {
  serviceDomains: ['edgeplane.app'],
  cnameZone: 'edgeplane-cname.app',
  acmeChallengeZone: 'edgeplane-acme.app',
  nameservers: ['ns1.edgeplane.app.', 'ns2.edgeplane.app.'],
  regions: [...KNOWN_REGIONS],
  tcpAddresses: [{ host: '1.tcp.edgeplane.app', from: 10000, to: 65535 }],
};

/** name → [environment variable, flag, what it sets]; docs/configuration.md describes each. */
export const SETTINGS = {
  dataDir: ['EDGEPLANE_DATA_DIR', '--data-dir', 'directory for the SQLite store and generated TLS files (default ./data)'],
  databaseUrl: ['EDGEPLANE_DATABASE_URL', '--database-url', 'postgres://… selects PostgreSQL; unset means SQLite in the data directory'],
  databaseStatementTimeout: [
    'EDGEPLANE_DATABASE_STATEMENT_TIMEOUT',
    '--database-statement-timeout',
    'seconds one database statement may take, waits for locks included (default 5)',
  ],
  databasePoolTimeout: ['EDGEPLANE_DATABASE_POOL_TIMEOUT', '--database-pool-timeout', 'seconds a request may wait for a PostgreSQL connection (default 5)'],
  listen: ['EDGEPLANE_LISTEN', '--listen', 'host:port to listen on (default 127.0.0.1:8443)'],
  baseUrl: ['EDGEPLANE_BASE_URL', '--base-url', 'public address used in every uri (default derived from the listen address)'],
  tlsCert: ['EDGEPLANE_TLS_CERT', '--tls-cert', 'PEM certificate chain to serve (with EDGEPLANE_TLS_KEY)'],
  tlsKey: ['EDGEPLANE_TLS_KEY', '--tls-key', 'PEM private key of that certificate'],
  tls: ['EDGEPLANE_TLS', '--tls', '"off" serves plain HTTP (behind a TLS proxy); default on'],
  logLevel: ['EDGEPLANE_LOG_LEVEL', '--log-level', 'fatal, error, warn, info (default), debug, trace or silent'],
  trustedProxies: ['EDGEPLANE_TRUSTED_PROXIES', '--trusted-proxies', 'comma-separated CIDRs of proxies whose X-Forwarded-For is believed'],
  headersTimeout: ['EDGEPLANE_HEADERS_TIMEOUT', '--headers-timeout', 'seconds a client has to send its request headers (default 10)'],
  requestTimeout: ['EDGEPLANE_REQUEST_TIMEOUT', '--request-timeout', 'seconds a client has to send a whole request, body included (default 30)'],
  keepAliveTimeout: ['EDGEPLANE_KEEPALIVE_TIMEOUT', '--keepalive-timeout', 'seconds an idle connection stays open between requests (default 5)'],
  maxConnections: ['EDGEPLANE_MAX_CONNECTIONS', '--max-connections', 'open connections at most; more are closed at once (default 1000)'],
  masterKey: [
    'EDGEPLANE_MASTER_KEY',
    '--master-key',
    '32-byte key (base64 or hex) sealing private keys at rest; default: <data dir>/master.key, created on first start',
  ],
  serviceDomains: [
    'EDGEPLANE_SERVICE_DOMAINS',
    '--service-domains',
    'comma-separated base domains the service owns; names under them need no CNAME (default edgeplane.app)',
  ],
  cnameZone: ['EDGEPLANE_CNAME_ZONE', '--cname-zone', 'zone of the generated cname_target of reserved domains (default edgeplane-cname.app)'],
  acmeChallengeZone: [
    'EDGEPLANE_ACME_CHALLENGE_ZONE',
    '--acme-challenge-zone',
    'zone of the generated acme_challenge_cname_target of wildcard domains (default edgeplane-acme.app)',
  ],
  agentIngressNameservers: [
    'EDGEPLANE_AGENT_INGRESS_NAMESERVERS',
    '--agent-ingress-nameservers',
    'comma-separated nameservers agent ingress domains are delegated to (default ns1.edgeplane.app,ns2.edgeplane.app)',
  ],
  tcpAddresses: [
    'EDGEPLANE_TCP_ADDRESSES',
    '--tcp-addresses',
    'comma-separated host:first-last port ranges reserved TCP addresses are allocated from (default 1.tcp.edgeplane.app:10000-65535)',
  ],
  regions: ['EDGEPLANE_REGIONS', '--regions', 'comma-separated regions served, of us, eu, ap, au, sa, jp, in (default all seven)'],
  bootstrap: ['EDGEPLANE_BOOTSTRAP', '--bootstrap', '"off" skips creating the default account on an empty store'],
  runMode: ['EDGEPLANE_RUN_MODE', '--run-mode', 'api (the HTTP API only), worker (background jobs only) or all (both, the default)'],
  acmeDirectoryUrl: [
    'EDGEPLANE_ACME_DIRECTORY_URL',
    '--acme-directory-url',
    `ACME directory certificates are ordered from (default Let's Encrypt, ${LETS_ENCRYPT_DIRECTORY})`,
  ],
  acmeEabKid: [
    'EDGEPLANE_ACME_EAB_KID',
    '--acme-eab-kid',
    'key id of the external account binding, when the CA requires one (with EDGEPLANE_ACME_EAB_HMAC_KEY)',
  ],
  acmeEabHmacKey: ['EDGEPLANE_ACME_EAB_HMAC_KEY', '--acme-eab-hmac-key', 'base64url HMAC key of the external account binding'],
  acmeCaFile: ['EDGEPLANE_ACME_CA_FILE', '--acme-ca-file', "PEM file of CAs to trust for the ACME directory's HTTPS when it is not publicly trusted"],
  acmeEmail: ['EDGEPLANE_ACME_EMAIL', '--acme-email', 'contact address registered with the ACME account (optional)'],
  dnsResolver: ['EDGEPLANE_DNS_RESOLVER', '--dns-resolver', "IP[:port] of the DNS server DNS checks ask (default the system's resolvers)"],
  http01Listen: ['EDGEPLANE_HTTP01_LISTEN', '--http01-listen', 'host:port of the built-in HTTP-01 challenge responder, e.g. 0.0.0.0:80 (off when unset)'],
  metricsToken: [
    'EDGEPLANE_METRICS_TOKEN',
    '--metrics-token',
    'bearer token that GET /metrics requires (16 characters or more); unset, /metrics answers loopback clients only',
  ],
  rateLimit: ['EDGEPLANE_RATE_LIMIT', '--rate-limit', 'requests an account may send per minute, per account (default 1200; 0 turns the limit off)'],
  redisUrl: ['EDGEPLANE_REDIS_URL', '--redis-url', 'redis://… (or rediss://) shared by every instance for rate limits; unset: each process counts its own'],
  agentListen: [
    'EDGEPLANE_AGENT_LISTEN',
    '--agent-listen',
    "host:port where ngrok agents dial in over TLS, or off (default 127.0.0.1 at the API's port + 1: 8444)",
  ],
  agentTlsCert: [
    'EDGEPLANE_AGENT_TLS_CERT',
    '--agent-tls-cert',
    "PEM certificate chain the agent listener serves (default: the local CA's server certificate)",
  ],
  agentTlsKey: ['EDGEPLANE_AGENT_TLS_KEY', '--agent-tls-key', 'PEM private key of that certificate'],
  ingressHttpsListen: [
    'EDGEPLANE_INGRESS_HTTPS_LISTEN',
    '--ingress-https-listen',
    "host:port where public clients reach agents' HTTPS and TLS endpoints, or off (default 127.0.0.1 at the API's port + 2: 8445)",
  ],
  ingressHttpListen: [
    'EDGEPLANE_INGRESS_HTTP_LISTEN',
    '--ingress-http-listen',
    "host:port where public clients reach agents' HTTP endpoints, or off (default 127.0.0.1 at the API's port + 3: 8446)",
  ],
  sshListen: [
    'EDGEPLANE_SSH_LISTEN',
    '--ssh-listen',
    'host:port where OpenSSH clients put local ports online with ssh -R, authenticated by SSH credentials (off when unset)',
  ],
  peerListen: [
    'EDGEPLANE_PEER_LISTEN',
    '--peer-listen',
    "host:port where other instances of the same store dial in to reach this instance's agents (a private network; off when unset)",
  ],
  peerAddress: [
    'EDGEPLANE_PEER_ADDRESS',
    '--peer-address',
    'host:port other instances dial to reach this one (default: the EDGEPLANE_PEER_LISTEN address; required when that is 0.0.0.0 or ::)',
  ],
  publicHttpsPort: [
    'EDGEPLANE_PUBLIC_HTTPS_PORT',
    '--public-https-port',
    "port public clients reach the HTTPS listener at, through a balancer or a port mapping; endpoint URLs name it (default: the listener's port)",
  ],
  publicHttpPort: [
    'EDGEPLANE_PUBLIC_HTTP_PORT',
    '--public-http-port',
    "port public clients reach the HTTP listener at, through a balancer or a port mapping; endpoint URLs name it (default: the listener's port)",
  ],
  ingressTcpHost: [
    'EDGEPLANE_INGRESS_TCP_HOST',
    '--ingress-tcp-host',
    "local address agents' TCP endpoints listen on, at the port of their address (default 127.0.0.1)",
  ],
  oauthProviderUrls: [
    'EDGEPLANE_OAUTH_PROVIDER_URLS',
    '--oauth-provider-urls',
    'comma-separated provider=base-url pairs moving OAuth providers to another host, e.g. github=https://github.example.com (GitHub Enterprise Server), gitlab=https://gitlab.example.com',
  ],
  oauthDefaultClients: [
    'EDGEPLANE_OAUTH_DEFAULT_CLIENTS',
    '--oauth-default-clients',
    "comma-separated provider=client-id:client-secret pairs: the server's own OAuth application, for oauth modules that name no client_id",
  ],
  accessLog: [
    'EDGEPLANE_ACCESS_LOG',
    '--access-log',
    'level of the line each public request or connection leaves: info (default), debug (written only at EDGEPLANE_LOG_LEVEL=debug) or off',
  ],
  dnsListen: ['EDGEPLANE_DNS_LISTEN', '--dns-listen', 'host:port of the built-in authoritative DNS server, UDP and TCP, e.g. 0.0.0.0:53 (off when unset)'],
  drainTimeout: [
    'EDGEPLANE_DRAIN_TIMEOUT',
    '--drain-timeout',
    "seconds a stopping server lets public requests and streams in flight finish before it cuts them and ends the agents' sessions (default 10)",
  ],
} as const;

export const DATABASE_TIMEOUT_DEFAULTS: Config['databaseTimeouts'] = { statementMs: 5000, poolMs: 5000 };

/** How long a stopping server drains the data plane by default (EDGEPLANE_DRAIN_TIMEOUT). */
export const DRAIN_TIMEOUT_DEFAULT_MS = 10_000;
const MAX_DRAIN_TIMEOUT_MS = 3_600_000;

export const CONNECTION_DEFAULTS: Config['connections'] = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5_000, max: 1000 };

export type SettingName = keyof typeof SETTINGS;
export type RawSettings = Partial<Record<SettingName, string>>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const RUN_MODES: readonly RunMode[] = ['api', 'worker', 'all'];
const ACCESS_LOG_SETTINGS: readonly AccessLogSetting[] = ['info', 'debug', 'off'];

/** Settings from the environment, then overridden by whatever `flags` carries. */
export function readSettings(env: NodeJS.ProcessEnv, flags: RawSettings = {}): RawSettings {
  const out: RawSettings = {};
  for (const [name, [variable]] of Object.entries(SETTINGS) as [SettingName, readonly string[]][]) {
    const value = flags[name] ?? env[variable as string];
    if (value !== undefined && value !== '') out[name] = value;
  }
  return out;
}

export function parseHostPort(value: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s]+)):(\d{1,5})$/.exec(value);
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port > 65535) return undefined;
  return { host: m[1] ?? m[2]!, port };
}

/**
 * The setting in milliseconds: a number of seconds greater than 0, to the millisecond (`5`,
 * `0.5`); `defaultMs` when it is unset, or when it is no such number (then also a problem).
 */
function readSeconds(raw: RawSettings, name: SettingName, defaultMs: number, problems: string[]): number {
  const value = raw[name];
  if (value === undefined) return defaultMs;
  const ms = /^\d+(\.\d{1,3})?$/.test(value) ? Math.round(Number(value) * 1000) : 0;
  // The largest limit both PostgreSQL and Node's timers take.
  if (ms >= 1 && ms <= 2_147_483_647) return ms;
  problems.push(`${SETTINGS[name][0]} must be a number of seconds greater than 0, such as 5 or 0.5 (at most 2147483); got '${value}'`);
  return defaultMs;
}

export function loadConfig(raw: RawSettings, cwd: string = process.cwd()): Config {
  const problems: string[] = [];
  const dataDir = path.resolve(cwd, raw.dataDir ?? 'data');

  let database: Config['database'] = { kind: 'sqlite', file: path.join(dataDir, 'edgeplane.db') };
  if (raw.databaseUrl) {
    if (/^postgres(ql)?:\/\//.test(raw.databaseUrl)) database = { kind: 'postgres', url: raw.databaseUrl };
    else if (raw.databaseUrl.startsWith('sqlite:')) database = { kind: 'sqlite', file: path.resolve(cwd, raw.databaseUrl.slice('sqlite:'.length)) };
    else problems.push(`EDGEPLANE_DATABASE_URL must start with postgres:// or sqlite:; got '${withoutCredentials(raw.databaseUrl)}'`);
  }

  const databaseTimeouts: Config['databaseTimeouts'] = {
    statementMs: readSeconds(raw, 'databaseStatementTimeout', DATABASE_TIMEOUT_DEFAULTS.statementMs, problems),
    poolMs: readSeconds(raw, 'databasePoolTimeout', DATABASE_TIMEOUT_DEFAULTS.poolMs, problems),
  };

  const listen = parseHostPort(raw.listen ?? '127.0.0.1:8443');
  if (!listen) problems.push(`EDGEPLANE_LISTEN must be host:port with a port from 0 to 65535; got '${raw.listen}'`);

  const connections: Config['connections'] = {
    headersTimeoutMs: readSeconds(raw, 'headersTimeout', CONNECTION_DEFAULTS.headersTimeoutMs, problems),
    requestTimeoutMs: readSeconds(raw, 'requestTimeout', CONNECTION_DEFAULTS.requestTimeoutMs, problems),
    keepAliveTimeoutMs: readSeconds(raw, 'keepAliveTimeout', CONNECTION_DEFAULTS.keepAliveTimeoutMs, problems),
    max: CONNECTION_DEFAULTS.max,
  };
  // Node refuses it, and the request timeout runs from the same first byte as the headers timeout.
  if (connections.headersTimeoutMs > connections.requestTimeoutMs)
    problems.push(
      `EDGEPLANE_HEADERS_TIMEOUT (${connections.headersTimeoutMs / 1000} s) must not be longer than EDGEPLANE_REQUEST_TIMEOUT (${connections.requestTimeoutMs / 1000} s), which counts the headers too`,
    );
  if (raw.maxConnections !== undefined) {
    const max = /^\d{1,7}$/.test(raw.maxConnections) ? Number(raw.maxConnections) : 0;
    if (max < 1) problems.push(`EDGEPLANE_MAX_CONNECTIONS must be a whole number from 1 to 9999999; got '${raw.maxConnections}'`);
    else connections.max = max;
  }

  let tls: Config['tls'] = { mode: 'auto' };
  const tlsSwitch = raw.tls?.toLowerCase();
  if (tlsSwitch !== undefined && !['on', 'off'].includes(tlsSwitch)) problems.push(`EDGEPLANE_TLS must be 'on' or 'off'; got '${raw.tls}'`);
  if (tlsSwitch === 'off') {
    if (raw.tlsCert || raw.tlsKey) problems.push('EDGEPLANE_TLS=off cannot be combined with EDGEPLANE_TLS_CERT or EDGEPLANE_TLS_KEY');
    tls = { mode: 'off' };
  } else if (raw.tlsCert || raw.tlsKey) {
    if (!raw.tlsCert || !raw.tlsKey) problems.push('EDGEPLANE_TLS_CERT and EDGEPLANE_TLS_KEY must be given together');
    else tls = { mode: 'files', cert: path.resolve(cwd, raw.tlsCert), key: path.resolve(cwd, raw.tlsKey) };
  }

  const logLevel = (raw.logLevel ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`EDGEPLANE_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}; got '${raw.logLevel}'`);

  const bootstrapSwitch = (raw.bootstrap ?? 'on').toLowerCase();
  if (!['on', 'off'].includes(bootstrapSwitch)) problems.push(`EDGEPLANE_BOOTSTRAP must be 'on' or 'off'; got '${raw.bootstrap}'`);

  const accessLog = (raw.accessLog ?? 'info').toLowerCase() as AccessLogSetting;
  if (!ACCESS_LOG_SETTINGS.includes(accessLog)) problems.push(`EDGEPLANE_ACCESS_LOG must be one of ${ACCESS_LOG_SETTINGS.join(', ')}; got '${raw.accessLog}'`);

  const runMode = (raw.runMode ?? 'all').toLowerCase() as RunMode;
  if (!RUN_MODES.includes(runMode)) problems.push(`EDGEPLANE_RUN_MODE must be one of ${RUN_MODES.join(', ')}; got '${raw.runMode}'`);

  let baseUrl = '';
  if (raw.baseUrl) {
    try {
      const u = new URL(raw.baseUrl);
      // The base URL is written into every `uri` the API answers with: no credentials in it.
      if (!['http:', 'https:'].includes(u.protocol) || u.search || u.hash || u.username || u.password) throw new Error('scheme');
      baseUrl = u.toString().replace(/\/+$/, '');
    } catch {
      problems.push(`EDGEPLANE_BASE_URL must be an absolute http(s) address without query or credentials; got '${withoutCredentials(raw.baseUrl)}'`);
    }
  } else if (listen) {
    const host = listen.host.includes(':') ? `[${listen.host}]` : listen.host === '0.0.0.0' ? '127.0.0.1' : listen.host;
    baseUrl = `${tls.mode === 'off' ? 'http' : 'https'}://${host}:${listen.port}`;
  }

  const trustedProxies: string[] = [];
  for (const entry of (raw.trustedProxies ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const parsed = parseCidr(entry.includes('/') ? entry : `${entry}/${entry.includes(':') ? 128 : 32}`);
    if (parsed.ok) trustedProxies.push(parsed.cidr);
    else
      problems.push(
        `EDGEPLANE_TRUSTED_PROXIES: '${entry}' is not an IP address or a CIDR in network form${parsed.problem === 'not-network' ? ` (did you mean ${parsed.suggestion}?)` : ''}`,
      );
  }

  const domains = readDomainSettings(raw, problems);
  const certificates = readCertificateSettings(raw, cwd, problems);
  const rateLimit = readRateLimit(raw, problems);
  if (raw.metricsToken !== undefined && !/^[\x21-\x7e]{16,}$/.test(raw.metricsToken))
    problems.push('EDGEPLANE_METRICS_TOKEN must be 16 or more printable characters without spaces');

  const { agentListen, ingress } = readDataPlaneListen(raw, cwd, listen, problems);
  let drainTimeoutMs = readSeconds(raw, 'drainTimeout', DRAIN_TIMEOUT_DEFAULT_MS, problems);
  // The process's own limit on a shutdown is this plus a margin (main.ts), and stays within Node's timers.
  if (drainTimeoutMs > MAX_DRAIN_TIMEOUT_MS) {
    problems.push(`EDGEPLANE_DRAIN_TIMEOUT must be at most ${MAX_DRAIN_TIMEOUT_MS / 1000} seconds; got '${raw.drainTimeout}'`);
    drainTimeoutMs = DRAIN_TIMEOUT_DEFAULT_MS;
  }
  const signIn = readSignIn(raw, problems);
  const peer = readPeer(raw, problems);
  const sshListen = readSshListen(raw, agentListen, problems);

  if (problems.length > 0) throw new ConfigError(problems);
  return {
    dataDir,
    database,
    databaseTimeouts,
    listen: listen!,
    connections,
    baseUrl,
    tls,
    logLevel,
    trustedProxies,
    bootstrap: bootstrapSwitch === 'on',
    masterKey: raw.masterKey,
    domains,
    runMode,
    certificates,
    rateLimit,
    ...(raw.metricsToken && { metricsToken: raw.metricsToken }),
    ...(agentListen && { agentListen }),
    drainTimeoutMs,
    ingress: { ...ingress, ...(signIn && { signIn }) },
    accessLog,
    ...(peer && { peer }),
    ...(sshListen && { sshListen }),
  };
}

/** The SSH listener: off unless set; it serves agents, so it needs the agent listener's data plane. */
function readSshListen(raw: RawSettings, agentListen: Config['agentListen'], problems: string[]): Config['sshListen'] {
  if (raw.sshListen === undefined || raw.sshListen.toLowerCase() === 'off') return undefined;
  const at = parseHostPort(raw.sshListen);
  if (!at) {
    problems.push(`EDGEPLANE_SSH_LISTEN must be host:port with a port from 0 to 65535, or off; got '${raw.sshListen}'`);
    return undefined;
  }
  if (!agentListen) problems.push('EDGEPLANE_SSH_LISTEN needs the data plane: EDGEPLANE_AGENT_LISTEN is off');
  return at;
}

/** The peer listener and the address peers dial; a wildcard listener needs the address said. */
function readPeer(raw: RawSettings, problems: string[]): Config['peer'] {
  if (raw.peerListen === undefined || raw.peerListen.toLowerCase() === 'off') {
    if (raw.peerAddress !== undefined) problems.push('EDGEPLANE_PEER_ADDRESS needs EDGEPLANE_PEER_LISTEN');
    return undefined;
  }
  const listen = parseHostPort(raw.peerListen);
  if (!listen) {
    problems.push(`EDGEPLANE_PEER_LISTEN must be host:port with a port from 0 to 65535, or off; got '${raw.peerListen}'`);
    return undefined;
  }
  if (raw.peerAddress !== undefined) {
    const address = parseHostPort(raw.peerAddress);
    if (!address || address.port === 0) problems.push(`EDGEPLANE_PEER_ADDRESS must be host:port with a port from 1 to 65535; got '${raw.peerAddress}'`);
    return { listen, address: raw.peerAddress };
  }
  if (listen.host === '0.0.0.0' || listen.host === '::')
    problems.push(`EDGEPLANE_PEER_ADDRESS must say how other instances reach this one: EDGEPLANE_PEER_LISTEN (${raw.peerListen}) listens on every address`);
  return { listen };
}

/**
 * The data plane's listeners sit next to the API by default, on loopback: agents at the API's port
 * + 1, HTTPS and TLS endpoints at + 2, HTTP endpoints at + 3 (8444, 8445, 8446 beside the default
 * 8443). An API on port 0 (a free port) puts each of them on a free port too.
 */
export const DATA_PLANE_OFFSETS = { agentListen: 1, ingressHttpsListen: 2, ingressHttpListen: 3 } as const;

function dataPlaneDefault(api: { host: string; port: number } | undefined, name: keyof typeof DATA_PLANE_OFFSETS): string {
  const port = api === undefined || api.port === 0 ? 0 : api.port + DATA_PLANE_OFFSETS[name];
  return `127.0.0.1:${port <= 65535 ? port : 0}`;
}

/** The agent listener and the public listeners: host:port each (default next to the API) or off; no two on one address. */
function readDataPlaneListen(
  raw: RawSettings,
  cwd: string,
  api: { host: string; port: number } | undefined,
  problems: string[],
): { agentListen: Config['agentListen']; ingress: Config['ingress'] } {
  const taken = new Map<string, string>(api && api.port !== 0 ? [[`${api.host}:${api.port}`, 'EDGEPLANE_LISTEN']] : []);
  const read = (name: keyof typeof DATA_PLANE_OFFSETS): { host: string; port: number } | undefined => {
    const value = raw[name] ?? dataPlaneDefault(api, name);
    if (value.toLowerCase() === 'off') return undefined;
    const at = parseHostPort(value);
    const variable = SETTINGS[name][0];
    if (!at) {
      problems.push(`${variable} must be host:port with a port from 0 to 65535, or off; got '${value}'`);
      return undefined;
    }
    const other = taken.get(`${at.host}:${at.port}`);
    if (other) problems.push(`${variable} (${value}) is the address of ${other}; give each listener its own port`);
    if (at.port !== 0) taken.set(`${at.host}:${at.port}`, variable);
    return at;
  };
  const agentAt = read('agentListen');
  const https = read('ingressHttpsListen');
  const http = read('ingressHttpListen');
  if ((raw.agentTlsCert === undefined) !== (raw.agentTlsKey === undefined))
    problems.push('EDGEPLANE_AGENT_TLS_CERT and EDGEPLANE_AGENT_TLS_KEY must be given together');
  if (raw.agentListen?.toLowerCase() === 'off' && (raw.agentTlsCert !== undefined || raw.agentTlsKey !== undefined))
    problems.push('EDGEPLANE_AGENT_TLS_CERT and EDGEPLANE_AGENT_TLS_KEY need the agent listener (EDGEPLANE_AGENT_LISTEN is off)');
  const agentListen =
    agentAt &&
    (raw.agentTlsCert && raw.agentTlsKey
      ? { ...agentAt, tls: { cert: path.resolve(cwd, raw.agentTlsCert), key: path.resolve(cwd, raw.agentTlsKey) } }
      : agentAt);
  const tcpHost = raw.ingressTcpHost ?? '127.0.0.1';
  if (net.isIP(tcpHost.replace(/^\[|\]$/g, '')) === 0) problems.push(`EDGEPLANE_INGRESS_TCP_HOST must be an IP address; got '${tcpHost}'`);
  const publicPorts = readPublicPorts(raw, problems);
  return {
    agentListen,
    ingress: { ...(https && { https }), ...(http && { http }), tcpHost: tcpHost.replace(/^\[|\]$/g, ''), ...(publicPorts && { publicPorts }) },
  };
}

/** The public ports endpoint URLs name, where they differ from the listeners' (a balancer, a port mapping). */
function readPublicPorts(raw: RawSettings, problems: string[]): { https?: number; http?: number } | undefined {
  const read = (name: 'publicHttpsPort' | 'publicHttpPort'): number | undefined => {
    const value = raw[name];
    if (value === undefined) return undefined;
    if (!/^\d{1,5}$/.test(value) || Number(value) < 1 || Number(value) > 65535) {
      problems.push(`${SETTINGS[name][0]} must be a port from 1 to 65535; got '${value}'`);
      return undefined;
    }
    return Number(value);
  };
  const https = read('publicHttpsPort');
  const http = read('publicHttpPort');
  return https === undefined && http === undefined ? undefined : { ...(https && { https }), ...(http && { http }) };
}

export const DEFAULT_RATE_LIMIT = 1200;

function readRateLimit(raw: RawSettings, problems: string[]): Config['rateLimit'] {
  let perMinute = DEFAULT_RATE_LIMIT;
  if (raw.rateLimit !== undefined) {
    if (/^\d{1,9}$/.test(raw.rateLimit)) perMinute = Number(raw.rateLimit);
    else problems.push(`EDGEPLANE_RATE_LIMIT must be a whole number of requests per minute (0 turns the limit off); got '${raw.rateLimit}'`);
  }
  if (raw.redisUrl !== undefined && !/^rediss?:\/\/\S+$/.test(raw.redisUrl))
    // Not echoed: the URL may hold a password.
    problems.push('EDGEPLANE_REDIS_URL must start with redis:// or rediss://');
  return { perMinute, ...(raw.redisUrl && { redisUrl: raw.redisUrl }) };
}

function readCertificateSettings(raw: RawSettings, cwd: string, problems: string[]): CertificateSettings {
  const acmeDirectoryUrl = raw.acmeDirectoryUrl ?? LETS_ENCRYPT_DIRECTORY;
  if (!/^https?:\/\/[^\s/]+/.test(acmeDirectoryUrl) || !URL.canParse(acmeDirectoryUrl))
    problems.push(`EDGEPLANE_ACME_DIRECTORY_URL must be an absolute http(s) address; got '${withoutCredentials(acmeDirectoryUrl)}'`);
  if ((raw.acmeEabKid === undefined) !== (raw.acmeEabHmacKey === undefined))
    problems.push('EDGEPLANE_ACME_EAB_KID and EDGEPLANE_ACME_EAB_HMAC_KEY must be given together');
  if (raw.acmeEabHmacKey !== undefined && !/^[A-Za-z0-9_-]+={0,2}$/.test(raw.acmeEabHmacKey))
    problems.push('EDGEPLANE_ACME_EAB_HMAC_KEY must be base64url, as the CA gives it');
  const listenAt = (name: 'http01Listen' | 'dnsListen') => {
    const value = raw[name];
    if (value === undefined) return undefined;
    const parsed = parseHostPort(value);
    if (!parsed) problems.push(`${SETTINGS[name][0]} must be host:port with a port from 0 to 65535; got '${value}'`);
    return parsed;
  };
  const dnsResolver = raw.dnsResolver === undefined ? undefined : parseResolverAddress(raw.dnsResolver);
  if (raw.dnsResolver !== undefined && !dnsResolver)
    problems.push(`EDGEPLANE_DNS_RESOLVER must be an IP address with an optional port (1.1.1.1, 127.0.0.1:8053, [::1]:53); got '${raw.dnsResolver}'`);
  return {
    acmeDirectoryUrl,
    ...(raw.acmeEabKid && raw.acmeEabHmacKey && { acmeEab: { kid: raw.acmeEabKid, hmacKey: raw.acmeEabHmacKey } }),
    ...(raw.acmeCaFile && { acmeCaFile: path.resolve(cwd, raw.acmeCaFile) }),
    ...(raw.acmeEmail && { acmeEmail: raw.acmeEmail }),
    ...(dnsResolver && { dnsResolver }),
    http01Listen: listenAt('http01Listen'),
    dnsListen: listenAt('dnsListen'),
  };
}

const commaList = (value: string) =>
  value
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);

/** A DNS name setting in stored form (lower case, A-labels, no trailing dot), or a problem. */
function readName(name: SettingName, value: string, problems: string[]): string | undefined {
  const parsed = parseDomainName(value, { wildcard: false });
  if (parsed.ok) return parsed.name;
  problems.push(`${SETTINGS[name][0]}: '${value}' is not a domain name of two or more labels (${parsed.problem})`);
  return undefined;
}

function readDomainSettings(raw: RawSettings, problems: string[]): DomainSettings {
  const names = (name: SettingName, fallback: readonly string[]) => {
    const list = raw[name] === undefined ? [...fallback] : commaList(raw[name]).flatMap((v) => readName(name, v, problems) ?? []);
    if (raw[name] !== undefined && commaList(raw[name]).length === 0) problems.push(`${SETTINGS[name][0]} must name at least one domain`);
    return [...new Set(list)];
  };
  const serviceDomains = names('serviceDomains', DOMAIN_DEFAULTS.serviceDomains);
  const cnameZone = raw.cnameZone === undefined ? DOMAIN_DEFAULTS.cnameZone : (readName('cnameZone', raw.cnameZone, problems) ?? '');
  const acmeChallengeZone =
    raw.acmeChallengeZone === undefined ? DOMAIN_DEFAULTS.acmeChallengeZone : (readName('acmeChallengeZone', raw.acmeChallengeZone, problems) ?? '');
  const nameservers = names(
    'agentIngressNameservers',
    DOMAIN_DEFAULTS.nameservers.map((n) => n.slice(0, -1)),
  ).map((n) => `${n}.`);
  const regions = raw.regions === undefined ? [...DOMAIN_DEFAULTS.regions] : [...new Set(commaList(raw.regions.toLowerCase()))];
  const unknown = regions.filter((r) => !(KNOWN_REGIONS as readonly string[]).includes(r));
  if (unknown.length > 0) problems.push(`EDGEPLANE_REGIONS: ${unknown.map((r) => `'${r}'`).join(', ')} not known; the regions are ${KNOWN_REGIONS.join(', ')}`);
  if (regions.length === 0) problems.push('EDGEPLANE_REGIONS must name at least one region');
  const tcpAddresses = raw.tcpAddresses === undefined ? DOMAIN_DEFAULTS.tcpAddresses.map((r) => ({ ...r })) : readTcpAddresses(raw.tcpAddresses, problems);
  return { serviceDomains, cnameZone, acmeChallengeZone, nameservers, regions, tcpAddresses };
}

function readTcpAddresses(value: string, problems: string[]): TcpAddressRange[] {
  const ranges: TcpAddressRange[] = [];
  for (const entry of commaList(value)) {
    const m = /^(.+):(\d{1,5})(?:-(\d{1,5}))?$/.exec(entry);
    const host = m ? parseDomainName(m[1]!, { wildcard: false }) : undefined;
    const from = m ? Number(m[2]) : 0;
    const to = m?.[3] === undefined ? from : Number(m[3]);
    if (!m || !host?.ok || from < 1 || to > 65535 || from > to) {
      problems.push(
        `EDGEPLANE_TCP_ADDRESSES: '${entry}' is not host:first-last with a domain name and ports from 1 to 65535 (e.g. 1.tcp.example.com:10000-65535)`,
      );
      continue;
    }
    const overlap = ranges.find((r) => r.host === host.name && r.from <= to && from <= r.to);
    if (overlap) problems.push(`EDGEPLANE_TCP_ADDRESSES: '${entry}' overlaps ${overlap.host}:${overlap.from}-${overlap.to}`);
    else ranges.push({ host: host.name, from, to });
  }
  if (ranges.length === 0 && problems.every((p) => !p.startsWith('EDGEPLANE_TCP_ADDRESSES')))
    problems.push('EDGEPLANE_TCP_ADDRESSES must name at least one range');
  return ranges;
}

const isOAuthProvider = (name: string): name is OAuthProvider => (OAUTH_PROVIDERS as readonly string[]).includes(name);

/** The OAuth settings, or undefined when neither is set. Client secrets are never echoed in a problem. */
function readSignIn(raw: RawSettings, problems: string[]): SignInConfig | undefined {
  const pairs = (name: 'oauthProviderUrls' | 'oauthDefaultClients', what: string) => {
    const out: [OAuthProvider, string][] = [];
    for (const entry of commaList(raw[name] ?? '')) {
      const eq = entry.indexOf('=');
      const provider = entry.slice(0, Math.max(0, eq)).trim().toLowerCase();
      if (eq <= 0 || !isOAuthProvider(provider))
        problems.push(`${SETTINGS[name][0]}: each entry must be provider=${what}, the provider one of ${OAUTH_PROVIDERS.join(', ')}`);
      else out.push([provider, entry.slice(eq + 1).trim()]);
    }
    return out;
  };
  const providerUrls: SignInConfig['providerUrls'] = {};
  for (const [provider, value] of pairs('oauthProviderUrls', 'base-url')) {
    const url = URL.canParse(value) ? new URL(value) : undefined;
    if (!url || !['http:', 'https:'].includes(url.protocol) || url.username || url.password || url.search || url.hash)
      problems.push(`EDGEPLANE_OAUTH_PROVIDER_URLS: ${provider} must be an http(s) base URL without credentials or query; got '${withoutCredentials(value)}'`);
    else providerUrls[provider] = url.href.replace(/\/+$/, '');
  }
  const defaultClients: SignInConfig['defaultClients'] = {};
  for (const [provider, value] of pairs('oauthDefaultClients', 'client-id:client-secret')) {
    const colon = value.indexOf(':');
    if (colon <= 0 || colon === value.length - 1) problems.push(`EDGEPLANE_OAUTH_DEFAULT_CLIENTS: ${provider} must be client-id:client-secret`);
    else defaultClients[provider] = { clientId: value.slice(0, colon), clientSecret: value.slice(colon + 1) };
  }
  if (raw.oauthProviderUrls === undefined && raw.oauthDefaultClients === undefined) return undefined;
  return { providerUrls, defaultClients };
}
