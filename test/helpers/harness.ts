// The test harness: a real server on a real socket over a real store (SQLite always,
// PostgreSQL too when EDGEPLANE_TEST_DATABASE_URL is set), and a fresh account per test.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import { Writable } from 'node:stream';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe } from 'node:test';
import pg from 'pg';
import { pino } from 'pino';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig, type AccessLogSetting, type Config, type DomainSettings, type LogLevel } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { migrate, openStore, type Store } from '../../src/db/store.js';
import type { Role } from '../../src/db/schema.js';
import { ensureLocalTls } from '../../src/tls.js';
import type { AgentListenerTuning } from '../../src/tunnels/agent-listener.js';
import { sessionCommands } from '../../src/tunnels/commands.js';
import { startDataPlane, type DataPlane } from '../../src/tunnels/data-plane.js';
import type { EdgeDirectory } from '../../src/edges/edge-directory.js';
import type { EdgePorts } from '../../src/tunnels/edge-ports.js';
import type { EdgeHttpTuning } from '../../src/ingress/edge-http.js';
import type { SignInSettings } from '../../src/edges/sign-in/sign-in.js';
import { AgentSessionRegistry } from '../../src/tunnels/registry.js';
import type { RemoteTunnels } from '../../src/tunnels/remote-tunnels.js';
import type { IngressDirectory } from '../../src/core/live-agents.js';
import type { SshListenerTuning } from '../../src/tunnels/ssh-listener.js';
import { observed } from './assertions.js';
import './exit-guard.js';
import { jsonOrUndefined } from './json.js';

export type StoreKind = 'sqlite' | 'postgres';

export function storeKinds(): StoreKind[] {
  return process.env.EDGEPLANE_TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];
}

/** A PostgreSQL URL whose sessions work in `schema` (as EDGEPLANE_DATABASE_URL takes it: for a CLI or a server process). */
export function schemaUrl(url: string, schema: string): string {
  return `${url}${url.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
}

/** The EDGEPLANE_DATABASE_URL of a fresh store (PostgreSQL: with its schema). */
export function freshStoreUrl(fresh: { database: Config['database']; schema?: string }): string {
  return fresh.database.kind === 'sqlite' ? `sqlite:${fresh.database.file}` : schemaUrl(fresh.database.url, fresh.schema!);
}

/** A fresh, empty, migrated store, and how to throw it away. */
export async function freshStore(
  kind: StoreKind,
  timeouts?: Partial<Config['databaseTimeouts']>,
): Promise<{ store: Store; database: Config['database']; schema?: string; dispose(): Promise<void> }> {
  if (kind === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'edgeplane-test-'));
    const database = { kind: 'sqlite' as const, file: path.join(dir, 'test.db') };
    const store = openStore(database, { timeouts });
    await migrate(store);
    return {
      store,
      database,
      async dispose() {
        await store.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const url = process.env.EDGEPLANE_TEST_DATABASE_URL!;
  const schema = `ep_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const database = { kind: 'postgres' as const, url };
  const store = openStore(database, { schema, timeouts });
  await migrate(store);
  return {
    store,
    database,
    schema,
    async dispose() {
      await store.close();
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(`drop schema ${schema} cascade`);
      await c.end();
    },
  };
}

export interface Response {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as is, without JSON encoding or a content type. */
  raw?: string | Buffer;
  headers?: Record<string, string | undefined>;
  /** Leave out the version header. */
  noVersion?: boolean;
}

/** A request through node:http, for what fetch refuses to send (a GET with a body). */
export function rawRequest(baseUrl: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Response> {
  return new Promise((resolve, reject) => {
    const sized = body === undefined ? headers : { ...headers, 'Content-Length': String(Buffer.byteLength(body)) };
    const req = http.request(baseUrl + path, { method, headers: sized }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
        resolve({ status: res.statusCode ?? 0, headers: h, text, json: jsonOrUndefined(text) });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** An API client for one bearer token. */
export class Api {
  constructor(
    readonly baseUrl: string,
    readonly token: string | undefined,
    readonly info: { accountId: string; userId: string; keyId: string },
    private readonly harness: Harness,
  ) {}

  async request(method: string, pathAndQuery: string, options: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = {};
    if (!options.noVersion) headers['Service-Version'] = '2';
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    let body: string | Buffer | undefined;
    if (options.raw !== undefined) body = options.raw;
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['Content-Type'] = 'application/json';
    }
    for (const [k, v] of Object.entries(options.headers ?? {})) {
      const existing = Object.keys(headers).find((h) => h.toLowerCase() === k.toLowerCase());
      if (existing) delete headers[existing];
      if (v !== undefined) headers[k] = v;
    }
    const url = pathAndQuery.startsWith('http') ? pathAndQuery : this.baseUrl + pathAndQuery;
    const res = await fetch(url, { method, headers, body: typeof body === 'string' || body === undefined ? body : new Uint8Array(body) });
    const text = await res.text();
    const json = jsonOrUndefined(text);
    return { status: res.status, headers: res.headers, text, json };
  }

  get(p: string, o?: RequestOptions) {
    return this.request('GET', p, o);
  }
  post(p: string, body?: unknown, o?: RequestOptions) {
    return this.request('POST', p, { ...o, body });
  }
  patch(p: string, body?: unknown, o?: RequestOptions) {
    return this.request('PATCH', p, { ...o, body });
  }
  put(p: string, body?: unknown, o?: RequestOptions) {
    return this.request('PUT', p, { ...o, body });
  }
  delete(p: string, o?: RequestOptions) {
    return this.request('DELETE', p, o);
  }

  /** The same token against another server (a second instance). */
  at(baseUrl: string): Api {
    return new Api(baseUrl, this.token, this.info, this.harness);
  }

  /** The same account through another token (or none). */
  withToken(token: string | undefined): Api {
    return new Api(this.baseUrl, token, this.info, this.harness);
  }

  /** Another user of this account with the given role, and a client for that user's key. */
  async asNewUser(role: Role): Promise<Api> {
    const issued = await this.harness.deps.accounts.createUser({ accountId: this.info.accountId, name: `${role}-${randomBytes(3).toString('hex')}`, role });
    return new Api(this.baseUrl, issued.token, { accountId: issued.account_id, userId: issued.user_id, keyId: issued.api_key_id }, this.harness);
  }
}

export interface HarnessOptions {
  /** CIDRs whose X-Forwarded-For the server believes. */
  trustedProxies?: string[];
  /** Address to listen on (default 127.0.0.1). */
  host?: string;
  /** Server log level (default info, or EDGEPLANE_TEST_LOG_LEVEL); lines are kept in `logs`. */
  logLevel?: 'info' | 'warn' | 'silent';
  /**
   * A file the server logs to through the production logger (src/logger.ts: its redaction and its
   * writer), instead of `logs`, which stays empty: the benchmark's /dev/null.
   */
  logFile?: string;
  /** The store's time limits (default: the settings' defaults). */
  databaseTimeouts?: Partial<Config['databaseTimeouts']>;
  /** The operator's domain settings, over the defaults (service domains, zones, nameservers, regions). */
  domains?: Partial<DomainSettings>;
  /** Requests per minute and account, and the Redis that counts them (default: the settings' defaults, counted per process). */
  rateLimit?: Partial<Config['rateLimit']>;
  /** Turns the agent listener on (127.0.0.1, port 0, the local CA's certificate), with these timeouts and bounds. */
  agents?: AgentListenerTuning;
  /** With `agents`: the SSH listener for `ssh -R` agents too (127.0.0.1, port 0), with these timeouts and bounds. */
  ssh?: SshListenerTuning;
  /** The lease of the live agent records (default 30 s). */
  leaseMs?: number;
  /** Where agents' TCP endpoints listen (default 127.0.0.1): instances in one process each need their own. */
  tcpHost?: string;
  /** The ports endpoint URLs name (default: the instance's own listeners'), as a balancer in front would have them. */
  publicPorts?: { https: number; http: number };
  /** Routing between instances: a peer listener on 127.0.0.1 (with `agents`), the other instances' tunnels read every `pollMs`. */
  peers?: { pollMs?: number };
  /** Edges' timeouts towards their backends (default: the data plane's). */
  edgeTuning?: EdgeHttpTuning;
  /** Edges' sign-in: OAuth providers moved to stand-ins, the identity providers' CA, the session clock. */
  signIn?: SignInSettings;
  /** The data plane's access log (EDGEPLANE_ACCESS_LOG; default info). */
  accessLog?: AccessLogSetting;
}

export interface RoutedOptions {
  /** Wait for the endpoint to be gone instead. */
  gone?: boolean;
  /** The account of an internal endpoint (`*.internal`), whose URL names it only within it. */
  accountId?: string;
}

/** The agent listener of a harness: where agents dial, the CA to trust, the live sessions. */
export interface HarnessAgents {
  port: number;
  /** With `ssh`: where `ssh -R` agents dial. */
  sshPort?: number;
  /** The public HTTPS (and TLS) and HTTP listeners' ports on 127.0.0.1. */
  httpsPort: number;
  httpPort: number;
  caPem: string;
  registry: AgentSessionRegistry;
  /** The edges this instance serves, as it last read them. */
  edges: EdgeDirectory;
  /** The TCP edges' ports this instance listens on. */
  edgePorts: EdgePorts;
  /** With `peers`: the other instances' tunnels as this one sees them. */
  remoteTunnels?: RemoteTunnels;
  /** This instance's id in the live rows. */
  instanceId: string;
  /**
   * Resolves once a public connection to an endpoint's `url` that reaches `httpsPort`, `httpPort`
   * or 127.0.0.1 is carried to its tunnel: at once on one instance; across instances, once the
   * instance taking the public traffic has read the tunnel (TCP: and listens on its port). With
   * `gone`: once it is not carried any more (TCP: not listened on).
   */
  routed(url: string, options?: RoutedOptions): Promise<void>;
  /** As `routed`, for a labeled tunnel of the account (an edge's tunnel group finds it); each look takes a turn among the matching tunnels. */
  labeled(accountId: string, labels: Record<string, string>): Promise<void>;
}

/** Another instance of a harness (its `secondInstance`). */
export interface Instance {
  baseUrl: string;
  agents?: HarnessAgents;
  close(): Promise<void>;
}

export interface Harness {
  kind: StoreKind;
  /** The store's connection settings, for a CLI or a second instance (PostgreSQL: with its schema in the URL). */
  databaseUrl: string;
  /** Every log line the server wrote, parsed. */
  logs: Record<string, unknown>[];
  /** Whether it is three instances (startAcrossInstances): what one instance does at once, the others do within their reading of the store. */
  acrossInstances: boolean;
  /** Another server process's worth of state (own caches, own connection) on the same store. */
  secondInstance(options?: {
    agents?: boolean;
    tcpHost?: string;
    logs?: Record<string, unknown>[];
    publicPorts?: HarnessOptions['publicPorts'];
  }): Promise<Instance>;
  app: FastifyInstance;
  deps: Deps;
  baseUrl: string;
  /** Set when the harness was started with `agents`. */
  agents?: HarnessAgents;
  /** A new account with its admin user; every test takes its own. */
  newAccount(): Promise<Api>;
  close(): Promise<void>;
}

const isInternal = (url: URL) => url.hostname.endsWith('.internal');

/** Whether an endpoint's URL (as its agent was given it) is routed by `directory`; an internal one's within `accountId`. */
function routes(directory: IngressDirectory, endpointUrl: string, accountId?: string): boolean {
  const url = new URL(endpointUrl);
  const host = url.hostname;
  if (isInternal(url)) {
    if (!accountId) throw new Error(`an internal endpoint is looked up in its account: ${endpointUrl}`);
    return directory.internal(accountId, endpointUrl) !== undefined;
  }
  switch (url.protocol) {
    case 'https:':
      return directory.http(host, 'https') !== undefined;
    case 'http:':
      return directory.http(host, 'http') !== undefined;
    case 'tls:':
      return directory.tls(host) !== undefined;
    case 'tcp:':
      return directory.tcp(Number(url.port)) !== undefined;
    default:
      throw new Error(`no endpoint URL: ${endpointUrl}`);
  }
}

/**
 * HarnessAgents.routed for one instance: its own tunnels at once, the others' once it has read
 * them (`gone`: once it has read that they are gone).
 */
async function routedAt(registry: AgentSessionRegistry, plane: DataPlane, endpointUrl: string, options: RoutedOptions = {}): Promise<void> {
  const present = !options.gone;
  const found = (directory: IngressDirectory) => routes(directory, endpointUrl, options.accountId);
  await readElsewhere(registry, plane, found, present, endpointUrl);
  // A TCP endpoint's port is listened on for it; an internal one has none.
  const url = new URL(endpointUrl);
  if (plane.remoteTunnels && url.protocol === 'tcp:' && !isInternal(url)) {
    assert.equal(await plane.remoteTcpListening(Number(url.port)), present, `${endpointUrl}: listened on here`);
  }
}

/** Resolves once `found` says `present` of this instance's own tunnels, or of the others' as it has read them. */
async function readElsewhere(registry: AgentSessionRegistry, plane: DataPlane, found: (d: IngressDirectory) => boolean, present: boolean, what: string) {
  const remote = plane.remoteTunnels;
  if (!remote || (present && found(registry))) return;
  await observed(
    (listener) => remote.observe(listener),
    () => found(remote) === present,
    `${what} ${present ? 'read from' : 'gone from'} another instance`,
  );
}

/** One master key for every server of a test run, as instances sharing a database must have. */
const masterKey = randomBytes(32);

type LocalTls = Awaited<ReturnType<typeof ensureLocalTls>>;

/**
 * A server on `store`; with `agents`, its data plane. Given `shared` (the first instance's), it
 * serves the same certificates from the same CA, as the instances of one platform do.
 */
async function serveApp(
  store: Store,
  database: Config['database'],
  options: HarnessOptions,
  logs: Record<string, unknown>[],
  shared?: { tls: LocalTls; tlsDir: string },
) {
  const host = options.host ?? '127.0.0.1';
  const config = loadConfig({
    listen: `${host.includes(':') ? `[${host}]` : host}:0`,
    tls: 'off',
    logLevel: 'info',
    dataDir: os.tmpdir(),
    trustedProxies: options.trustedProxies?.join(','),
  });
  config.database = database;
  config.databaseTimeouts = { ...config.databaseTimeouts, ...options.databaseTimeouts };
  config.domains = {
    ...config.domains,
    // Random TCP addresses below Linux's ephemeral ports (32768–60999): a port the kernel gave a
    // client socket of another test cannot be listened on, on the instances' other loopback addresses.
    tcpAddresses: [{ host: '1.tcp.edgeplane.app', from: 10000, to: 32767 }],
    ...options.domains,
  };
  config.rateLimit = { ...config.rateLimit, ...options.rateLimit };
  const sink = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n').filter(Boolean)) logs.push(JSON.parse(line));
      callback();
    },
  });
  const level = options.logLevel ?? (process.env.EDGEPLANE_TEST_LOG_LEVEL as LogLevel | undefined) ?? 'info';
  const logger = options.logFile ? createLogger(level, options.logFile) : pino({ level }, sink);
  const registry = new AgentSessionRegistry();
  const deps = createDeps({ config, logger, store, masterKey }, { credentialDeleted: registry.credentialDeleted, sessionCommands: sessionCommands(registry) });
  const app = await buildApp(deps);
  await app.listen({ host, port: 0 });
  const address = app.server.address() as { port: number };
  config.baseUrl = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
  let agents: { listener: DataPlane; info: HarnessAgents; tlsDir: string; tls: LocalTls } | undefined;
  if (options.agents) {
    const tlsDir = shared?.tlsDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'edgeplane-agents-'));
    const tls = shared?.tls ?? (await ensureLocalTls(tlsDir, ['127.0.0.1']));
    const instanceId = `inst_test_${randomBytes(6).toString('hex')}`;
    const listener = await startDataPlane({
      instanceId,
      ...(options.peers && { peer: { listen: { host: '127.0.0.1', port: 0 }, ...options.peers } }),
      store,
      log: logger,
      registry,
      domains: config.domains,
      masterKey,
      sealer: deps.sealer,
      commands: deps.sessionCommands,
      metrics: app.metrics.registry,
      agents: { host: '127.0.0.1', port: 0, tls, tuning: options.agents },
      ...(options.ssh && { ssh: { host: '127.0.0.1', port: 0, tuning: options.ssh } }),
      ingress: {
        https: { host: '127.0.0.1', port: 0 },
        http: { host: '127.0.0.1', port: 0 },
        tcpHost: options.tcpHost ?? '127.0.0.1',
        certificates: { dataDir: tlsDir, defaultCertificate: { cert: tls.cert, key: tls.key } },
        ...(options.edgeTuning && { edgeTuning: options.edgeTuning }),
        ...(options.signIn && { signIn: options.signIn }),
        ...(options.accessLog && { accessLog: options.accessLog }),
        ...(options.publicPorts && { publicPorts: options.publicPorts }),
      },
      ...(options.leaseMs !== undefined && { leaseMs: options.leaseMs }),
    });
    agents = {
      listener,
      tlsDir,
      tls,
      info: {
        port: listener.agentAddress.port,
        ...(listener.sshAddress && { sshPort: listener.sshAddress.port }),
        httpsPort: listener.httpsAddress!.port,
        httpPort: listener.httpAddress!.port,
        caPem: fs.readFileSync(tls.caFile, 'utf8'),
        registry,
        edges: listener.edges,
        edgePorts: listener.edgePorts,
        instanceId,
        ...(listener.remoteTunnels && { remoteTunnels: listener.remoteTunnels }),
        routed: (url, routedOptions) => routedAt(registry, listener, url, routedOptions),
        labeled: (accountId, labels) =>
          readElsewhere(registry, listener, (d) => d.labeled(accountId, labels) !== undefined, true, `a tunnel labeled ${JSON.stringify(labels)}`),
      },
    };
  }
  return { app, deps, config, agents };
}

export async function startHarness(kind: StoreKind, options: HarnessOptions = {}): Promise<Harness> {
  const fresh = await freshStore(kind, options.databaseTimeouts);
  const logs: Record<string, unknown>[] = [];
  const { app, deps, config, agents } = await serveApp(fresh.store, fresh.database, options, logs);
  const databaseUrl = freshStoreUrl(fresh);
  const harness: Harness = {
    kind,
    acrossInstances: false,
    app,
    deps,
    baseUrl: config.baseUrl,
    databaseUrl,
    logs,
    ...(agents && { agents: agents.info }),
    async newAccount() {
      const issued = await deps.accounts.createAccount({ name: `test-${randomBytes(4).toString('hex')}` });
      return new Api(config.baseUrl, issued.token, { accountId: issued.account_id, userId: issued.user_id, keyId: issued.api_key_id }, harness);
    },
    async secondInstance(more = {}): Promise<Instance> {
      const store = openStore(fresh.database, { schema: fresh.schema, timeouts: options.databaseTimeouts });
      // Its own data plane only when asked (with the first one's tuning): its own registry, listeners and records.
      const second = await serveApp(
        store,
        fresh.database,
        {
          ...options,
          agents: more.agents ? (options.agents ?? {}) : undefined,
          ...(more.tcpHost && { tcpHost: more.tcpHost }),
          ...(more.publicPorts && { publicPorts: more.publicPorts }),
        },
        more.logs ?? [],
        agents,
      );
      return {
        baseUrl: second.config.baseUrl,
        ...(second.agents && { agents: second.agents.info }),
        async close() {
          await second.agents?.listener.close();
          // Its own directory only when the first instance had none to share.
          if (second.agents && !agents) fs.rmSync(second.agents.tlsDir, { recursive: true, force: true });
          await second.app.close();
          await store.close();
        },
      };
    },
    async close() {
      await agents?.listener.close();
      if (agents) fs.rmSync(agents.tlsDir, { recursive: true, force: true });
      await app.close();
      await fresh.dispose();
    },
  };
  return harness;
}

/**
 * Three instances on one store, routing to each other over peer links, seen as one harness:
 * agents (and ssh -R clients) dial A; the public listeners are B's, and endpoint URLs name B's ports, as they would a
 * balancer's (TCP endpoints: B listens on 127.0.0.1, A on 127.0.0.2, C on 127.0.0.3); the API is
 * C's; the three log into one `logs`. A suite run so has every agent's traffic cross a link, and
 * every change made through the API reach another instance's listeners.
 */
export async function startAcrossInstances(kind: StoreKind, options: HarnessOptions = {}): Promise<Harness> {
  const b = await startHarness(kind, { ...options, peers: options.peers ?? { pollMs: 200 }, tcpHost: '127.0.0.1' });
  const publicSide = b.agents!;
  const publicPorts = { https: publicSide.httpsPort, http: publicSide.httpPort };
  const opened: Instance[] = [];
  try {
    for (const tcpHost of ['127.0.0.2', '127.0.0.3']) opened.push(await b.secondInstance({ agents: true, tcpHost, logs: b.logs, publicPorts }));
  } catch (err) {
    for (const o of opened) await o.close();
    await b.close();
    throw err;
  }
  const [a, c] = opened as [Instance, Instance];
  return {
    ...b,
    acrossInstances: true,
    baseUrl: c.baseUrl,
    agents: {
      ...publicSide,
      port: a.agents!.port,
      ...(a.agents!.sshPort !== undefined && { sshPort: a.agents!.sshPort }),
      registry: a.agents!.registry,
      instanceId: a.agents!.instanceId,
    },
    async newAccount() {
      return (await b.newAccount()).at(c.baseUrl);
    },
    async close() {
      await c.close();
      await a.close();
      await b.close();
    },
  };
}

export interface SuiteOptions extends HarnessOptions {
  /** Runs it once more across three instances (startAcrossInstances), on PostgreSQL when it is set, else SQLite. */
  acrossInstances?: boolean;
}

/** Runs the suite once per store, each with its own server (and across instances, when asked). */
export function describeEachStore(title: string, suite: (h: () => Harness) => void, options: SuiteOptions = {}): void {
  const { acrossInstances, ...harnessOptions } = options;
  const runs: { name: string; start: () => Promise<Harness> }[] = storeKinds().map((kind) => ({ name: kind, start: () => startHarness(kind, harnessOptions) }));
  if (acrossInstances) {
    const kind = storeKinds().at(-1)!;
    runs.push({ name: `${kind}, three instances`, start: () => startAcrossInstances(kind, harnessOptions) });
  }
  for (const run of runs) {
    describe(`${title} [${run.name}]`, () => {
      let harness: Harness;
      before(async () => {
        harness = await run.start();
      });
      after(async () => {
        await harness?.close();
      });
      suite(() => harness);
    });
  }
}
