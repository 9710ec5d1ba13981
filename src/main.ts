// Process entry for `edgeplane serve`: config → logger → store → migrate → app → listen, and the
// job runner; EDGEPLANE_RUN_MODE leaves out the listening (`worker`) or the runner (`api`).
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { ConflictError } from './accounts/account.service.js';
import { createDeps, type Deps } from './deps.js';
import { openMigrated } from './db/store.js';
import { JobRunner } from './jobs/runner.js';
import { startChallengeListeners, type AutomationTuning } from './certificates/certificate-automation.js';
import { createLogger } from './logger.js';
import { loadMasterKey } from './master-key.js';
import { ensurePrivateDataDir, issueIntoFile, privateFiles, tightenPrivateFiles, TOKEN_FILE } from './private-files.js';
import type { AgentListenerTuning } from './tunnels/agent-listener.js';
import { startDataPlane, type DataPlane } from './tunnels/data-plane.js';
import type { SshListenerTuning } from './tunnels/ssh-listener.js';
import { explainListenError } from './listen-errors.js';
import { hostPort } from './lib/net-address.js';
import { sessionCommands } from './tunnels/commands.js';
import { AgentSessionRegistry } from './tunnels/registry.js';

export interface Server {
  /** Built in every run mode; it listens unless the mode is `worker`. */
  app: FastifyInstance;
  deps: Deps;
  url: string;
  /** The background job runner, unless the run mode is `api`. */
  runner?: JobRunner;
  /** The agent listener, when EDGEPLANE_AGENT_LISTEN is set (and the run mode serves), and the public listeners beside it. */
  agents?: { address: AddressInfo; registry: AgentSessionRegistry; httpsAddress?: AddressInfo; httpAddress?: AddressInfo };
  close(): Promise<void>;
}

/** How long a shutdown waits for running jobs: within the time `serve` gives the whole shutdown. */
const JOB_SHUTDOWN_WAIT_MS = 8_000;
/** What a shutdown may take past the drain (or the jobs' wait): ending sessions, deleting live rows, closing the store. */
const SHUTDOWN_MARGIN_MS = 5_000;

/**
 * How long `serve` lets a shutdown take before it exits anyway (code 1): the data plane's drain
 * (EDGEPLANE_DRAIN_TIMEOUT) or the jobs' wait, whichever is longer, and a margin. A supervisor's
 * stop timeout (systemd's TimeoutStopSec, compose's stop_grace_period) must be longer.
 */
export function shutdownLimitMs(config: Pick<Config, 'drainTimeoutMs'>): number {
  return Math.max(config.drainTimeoutMs, JOB_SHUTDOWN_WAIT_MS) + SHUTDOWN_MARGIN_MS;
}

function curlLine(config: Config, caFile: string | undefined, token: string): string {
  const ca = caFile ? `--cacert ${caFile} ` : '';
  return `curl ${ca}-H "Authorization: Bearer ${token}" -H "Service-Version: 2" ${config.baseUrl}/api_keys`;
}

/**
 * Starts the whole server; `say` receives the lines meant for the operator. `terminal`: whether
 * they reach a person at a terminal (default: stdout is one) rather than a log stream; only then
 * do they carry the first admin token, otherwise it goes to an owner-only file they name.
 */
export interface ServerOptions {
  logger?: Logger;
  say?: (line: string) => void;
  terminal?: boolean;
  /** Tests quicken the runner (polling, leases) and the certificate work (CA polling, retries). */
  runner?: { pollMs?: number; leaseMs?: number };
  certificates?: AutomationTuning;
  /** Tests shorten the agent listener's timeouts and bounds. */
  agents?: AgentListenerTuning;
  /** Limits and timeouts of the SSH listener (tests shorten them). */
  ssh?: SshListenerTuning;
}

export async function startServer(config: Config, options: ServerOptions = {}): Promise<Server> {
  const say = options.say ?? ((line: string) => process.stdout.write(line + '\n'));
  const terminal = options.terminal ?? process.stdout.isTTY === true;
  const logger = options.logger ?? createLogger(config.logLevel);
  ensurePrivateDataDir(config.dataDir, logger);
  tightenPrivateFiles(privateFiles(config), logger);

  const { store, applied } = await openMigrated(config);
  if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated');
  const { key: masterKey, source } = loadMasterKey(config.dataDir, config.masterKey);
  logger.info({ master_key: source }, 'private keys are sealed with the master key from this source');
  // Agent sessions live in this process; deleting a credential ends its own.
  const agentSessions = new AgentSessionRegistry({ region: config.domains.regions[0] });
  const deps = createDeps(
    { config, logger, store, masterKey },
    { certificates: options.certificates, credentialDeleted: agentSessions.credentialDeleted, sessionCommands: sessionCommands(agentSessions) },
  );
  const serveApi = config.runMode !== 'worker';
  const agentListen = serveApi ? config.agentListen : undefined;

  let https: { cert: string; key: string } | undefined;
  let caFile: string | undefined;
  let agentTls: { cert: string; key: string } | undefined;
  if (agentListen?.tls) agentTls = { cert: fs.readFileSync(agentListen.tls.cert, 'utf8'), key: fs.readFileSync(agentListen.tls.key, 'utf8') };
  const localTlsForApi = serveApi && config.tls.mode === 'auto';
  // The public HTTPS listener's default certificate (for names it has none of) is the local one too.
  let localCertificate: { cert: string; key: string } | undefined;
  if (localTlsForApi || agentListen) {
    // One server certificate for both listeners, naming every host either is reached by (a
    // certificate re-issued for one would otherwise drop the other's names).
    const { ensureLocalTls } = await import('./tls.js');
    const hosts = [config.listen.host, new URL(config.baseUrl).hostname.replace(/^\[|\]$/g, '')];
    if (agentListen && !['0.0.0.0', '::'].includes(agentListen.host)) hosts.push(agentListen.host);
    const tls = await ensureLocalTls(config.dataDir, hosts);
    localCertificate = { cert: tls.cert, key: tls.key };
    if (localTlsForApi) https = { cert: tls.cert, key: tls.key };
    if (agentListen && !agentTls) agentTls = { cert: tls.cert, key: tls.key };
    caFile = tls.caFile;
    say(`TLS: ${tls.created ? 'created' : 'using'} a local CA; trust it with --cacert ${tls.caFile}`);
  }
  if (serveApi && config.tls.mode === 'files') {
    https = { cert: fs.readFileSync(config.tls.cert, 'utf8'), key: fs.readFileSync(config.tls.key, 'utf8') };
  }

  const app = await buildApp(deps, { https });
  const listeners = await startChallengeListeners({ config, store, log: logger }, say).catch((error: unknown) => {
    throw explainListenError(error, config);
  });
  if (serveApi) {
    await announceApi(config, app, deps, { say, terminal, https: https !== undefined, caFile, dialect: store.dialect }).catch((error: unknown) => {
      throw explainListenError(error, config);
    });
  }
  let dataPlane: DataPlane | undefined;
  if (agentListen && agentTls && localCertificate) {
    dataPlane = await startDataPlane({
      store,
      log: logger,
      registry: agentSessions,
      domains: config.domains,
      masterKey,
      sealer: deps.sealer,
      commands: deps.sessionCommands,
      // The data plane's traffic joins GET /metrics.
      metrics: app.metrics.registry,
      agents: { host: agentListen.host, port: agentListen.port, tls: agentTls, ...(options.agents && { tuning: options.agents }) },
      ingress: { ...config.ingress, accessLog: config.accessLog, certificates: { dataDir: config.dataDir, defaultCertificate: localCertificate } },
      ...(config.peer && { peer: config.peer }),
      ...(config.sshListen && { ssh: { ...config.sshListen, ...(options.ssh && { tuning: options.ssh }) } }),
    }).catch((error: unknown) => {
      throw explainListenError(error, config);
    });
    say(`agents dial in at ${hostPort(dataPlane.agentAddress.address, dataPlane.agentAddress.port)} (TLS)`);
    if (dataPlane.sshAddress) say(`ssh -R agents dial in at ${hostPort(dataPlane.sshAddress.address, dataPlane.sshAddress.port)} (SSH)`);
    if (dataPlane.httpsAddress) say(`public HTTPS and TLS endpoints on ${hostPort(dataPlane.httpsAddress.address, dataPlane.httpsAddress.port)}`);
    if (dataPlane.httpAddress) say(`public HTTP endpoints on ${hostPort(dataPlane.httpAddress.address, dataPlane.httpAddress.port)}`);
    if (dataPlane.peerAddress)
      say(`other instances reach this one's agents at ${hostPort(dataPlane.peerAddress.address, dataPlane.peerAddress.port)} (peer links)`);
  }

  let runner: JobRunner | undefined;
  if (config.runMode !== 'api') {
    // Job outcomes feed GET /metrics (served unless the run mode is `worker`).
    runner = new JobRunner({ store, jobs: deps.jobs, log: logger.child({ component: 'jobs' }), onOutcome: app.metrics.observeJob, ...options.runner });
    runner.start();
  }
  // The runner's timers do not keep the process alive (nor would a PostgreSQL pool gone idle): a
  // worker without a listening socket holds this until it is closed.
  const keepAlive = serveApi ? undefined : setInterval(() => {}, 2_147_483_647);
  if (!serveApi) say(`edgeplane worker running jobs of ${deps.jobs.map((k) => k.kind).join(', ')} (store: ${store.dialect})`);

  return {
    app,
    deps,
    url: config.baseUrl,
    runner,
    ...(dataPlane && {
      agents: {
        address: dataPlane.agentAddress,
        registry: agentSessions,
        ...(dataPlane.httpsAddress && { httpsAddress: dataPlane.httpsAddress }),
        ...(dataPlane.sshAddress && { sshAddress: dataPlane.sshAddress }),
        ...(dataPlane.httpAddress && { httpAddress: dataPlane.httpAddress }),
      },
    }),
    async close() {
      const started = performance.now();
      clearInterval(keepAlive);
      // The data plane stops accepting first, then says what it still carries; the API drains alongside (app.ts).
      const drain = dataPlane?.drain(config.drainTimeoutMs);
      const jobs = runner?.runningCount ?? 0;
      logger.info(
        { run_mode: config.runMode, ...drain?.open, jobs, ...(drain && { grace_seconds: config.drainTimeoutMs / 1000 }) },
        drain ? 'shutting down: no new connections; requests and streams in flight may finish' : 'shutting down',
      );
      /** The drain's outcome, and the agent sessions its end closed (agents reconnect, to another instance). */
      const drainAndClose = async () => {
        const outcome = await drain?.done;
        const sessions = dataPlane?.activity().sessions ?? 0;
        await dataPlane?.close();
        return outcome && { ...outcome, sessions };
      };
      const [drained] = await Promise.all([drainAndClose(), runner?.stop(JOB_SHUTDOWN_WAIT_MS), app.close(), ...listeners.map((l) => l.close())]);
      await store.close();
      logger.info(
        {
          run_mode: config.runMode,
          ms: Math.round(performance.now() - started),
          ...(drained && { drain_ms: drained.ms, requests_cut: drained.left.requests, streams_cut: drained.left.streams, sessions_ended: drained.sessions }),
          jobs_left: runner?.runningCount ?? 0,
        },
        drained?.cut ? 'stopped: the drain was cut at EDGEPLANE_DRAIN_TIMEOUT' : 'stopped',
      );
    },
  };
}

/** Listens, says where, and on an empty store creates the first account (or says how to get a key). */
async function announceApi(
  config: Config,
  app: FastifyInstance,
  deps: Deps,
  { say, terminal, https, caFile, dialect }: { say: (line: string) => void; terminal: boolean; https: boolean; caFile?: string; dialect: string },
): Promise<void> {
  await app.listen({ host: config.listen.host, port: config.listen.port });
  const address = app.server.address() as AddressInfo;
  const bound = `${https ? 'https' : 'http'}://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  if (config.listen.port === 0) {
    const base = new URL(config.baseUrl);
    if (base.port === '0') {
      base.port = String(address.port);
      config.baseUrl = base.toString().replace(/\/+$/, '');
    }
  }
  say(`edgeplane listening on ${bound}${bound === config.baseUrl ? '' : `, base URL ${config.baseUrl}`} (store: ${dialect})`);

  let accounts = await deps.accounts.summary();
  const tokenFile = path.join(config.dataDir, TOKEN_FILE);
  const createFirst = () => deps.accounts.createAccount({ name: 'default' });
  // Instances started together on an empty store race for the first account: one makes it, and
  // for the others its name is taken, so they start as on a store that holds one.
  const first =
    config.bootstrap && accounts.count === 0
      ? await (terminal ? createFirst() : issueIntoFile(tokenFile, createFirst)).catch((error: unknown) => {
          if (!(error instanceof ConflictError)) throw error;
          return undefined;
        })
      : undefined;
  if (config.bootstrap && accounts.count === 0 && !first) accounts = await deps.accounts.summary();
  if (first) {
    say('');
    say(`Created account ${first.account_id} with admin user ${first.user_id}.`);
    if (terminal) {
      say('Its first API key token, shown this once (store it now):');
      say(`  token: ${first.token}`);
    } else {
      say(`Its first API key token was written to ${tokenFile} (readable by this user only): store it elsewhere and delete the file.`);
    }
    say('Try it:');
    say(`  ${curlLine(config, caFile, terminal ? first.token : `$(cat ${tokenFile})`)}`);
    say('');
  } else if (accounts.oldest) {
    say(
      `The store holds ${accounts.count} account${accounts.count === 1 ? '' : 's'} (the first: ${accounts.oldest.id}, '${accounts.oldest.name}'). ` +
        `Lost its admin token? Mint a new key with this server's settings: edgeplane api-keys create --account ${accounts.oldest.id}`,
    );
  } else {
    say('The store holds no account yet: create one with edgeplane accounts create --name NAME');
  }
}
