// The data plane of one process, started in one place for `edgeplane serve` and the tests alike:
// the public listeners (HTTP, HTTPS and TLS by name, TCP by port), then the agent listener whose
// binds they serve, and the many-instance records of what this process holds. The registry is
// made by the caller, before the API, because deleting a credential through the API ends its
// sessions and the API's commands reach sessions through it.
import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { DomainSettings } from '../config.js';
import type { Store } from '../db/store.js';
import { createIngressCertificates, type IngressCertificatesOptions } from '../ingress/certificates.js';
import { AgentEndpoints } from '../edges/agent-endpoints.js';
import { EdgeDirectory } from '../edges/edge-directory.js';
import { CompiledPolicies } from '../edges/policies.js';
import { EDGE_HTTP_DEFAULTS, type EdgeHttpTuning } from '../ingress/edge-http.js';
import { createSignInGate, type SignInSettings } from '../edges/sign-in/sign-in.js';
import { createStreamEdgeServer } from '../ingress/edge-stream.js';
import { EdgePorts } from './edge-ports.js';
import { startIngress, type IngressTuning } from '../ingress/ingress.js';
import { Traffic, type AccessLogLevel } from '../ingress/traffic-metrics.js';
import type { Sealer } from '../lib/crypto/sealer.js';
import { startAgentListener, type AgentListenerTuning } from './agent-listener.js';
import { loadSshHostKey } from './ssh-host-key.js';
import { startSshListener, type SshListener, type SshListenerTuning } from './ssh-listener.js';
import { modulesOfSealed, type BindSettings } from './binds.js';
import { RouteClaims } from './claims.js';
import { LiveRecords } from './live-records.js';
import type { IngressDirectory, SessionCommands } from '../core/live-agents.js';
import type { AgentSessionRegistry } from './registry.js';
import { TcpIngress } from './tcp-ingress.js';
import { hostPort } from '../lib/net-address.js';
import { listenForPeers, PeerLinks, peerKey } from './peer-links.js';
import { ClusterDirectory, RemoteTunnels } from './remote-tunnels.js';

export interface DataPlaneOptions {
  store: Store;
  log: Logger;
  registry: AgentSessionRegistry;
  domains: DomainSettings;
  /** Tunnel tokens are signed with a key derived from it, the same on every instance. */
  masterKey: Buffer;
  agents: { host: string; port: number; tls: { cert: string; key: string }; tuning?: AgentListenerTuning };
  /** The SSH listener for `ssh -R` agents; off when absent. */
  ssh?: { host: string; port: number; tuning?: SshListenerTuning };
  /** The public HTTPS (and TLS) and HTTP listeners; each off when absent. */
  ingress: {
    https?: { host: string; port: number };
    http?: { host: string; port: number };
    /** Where TCP endpoints listen (default 127.0.0.1). */
    tcpHost?: string;
    /** The ports endpoint URLs name (default: the listeners'). */
    publicPorts?: { https?: number; http?: number };
    certificates: Pick<IngressCertificatesOptions, 'dataDir' | 'defaultCertificate' | 'ttlMs'>;
    tuning?: IngressTuning;
    edgeTuning?: EdgeHttpTuning;
    /** More CAs to trust for static address backends with TLS. */
    backendCa?: string;
    /** How often SQLite's configuration revisions are read (default 250 ms). */
    configPollMs?: number;
    /** Sign-in at HTTPS edges: OAuth providers' settings, CAs trusted for identity providers, the session clock. */
    signIn?: SignInSettings;
    /** The level of the access log's lines, one per public request or connection (default info), or off. */
    accessLog?: AccessLogLevel;
  };
  /** The registry GET /metrics serves: the data plane's metrics join it (none published without it). */
  metrics?: Registry;
  sealer: Sealer;
  /** Sends the API's commands to this process's sessions (the queued ones of other instances too). */
  commands: SessionCommands;
  /** The lease of this instance's rows of sessions and tunnels (default 30 s). */
  leaseMs?: number;
  /** This instance's id in the store's rows (default: the process's); tests run several instances in one process. */
  instanceId?: string;
  limits?: { maxTunnelsPerSession?: number; maxTunnelsPerAccount?: number };
  /**
   * Routing between instances: where this instance listens for its peers and the address it
   * gives them (default: where it listens); absent, public connections reach this process's agents only.
   */
  peer?: { listen: { host: string; port: number }; address?: string; pollMs?: number };
}

/** What the data plane has open: HTTP requests in flight, the other public connections (streams), agent sessions and tunnels. */
export interface DataPlaneActivity {
  requests: number;
  /** WebSockets, TLS passthrough, TLS and TCP edges, TCP endpoints' connections. */
  streams: number;
  sessions: number;
  tunnels: number;
}

export interface DrainOutcome {
  /** From the start of the drain to the last connection's end, or to the grace's end. */
  ms: number;
  /** Whether the grace ran out before every public connection had ended. */
  cut: boolean;
  /** What was still open when the grace ran out (and is cut by close()); zeros when all finished. */
  left: { requests: number; streams: number };
}

export interface DataPlane {
  agentAddress: AddressInfo;
  sshAddress?: AddressInfo;
  /** The edges configured through the API, as this process serves them. */
  edges: EdgeDirectory;
  /** The TCP edges' ports this process listens on. */
  edgePorts: EdgePorts;
  httpsAddress?: AddressInfo;
  httpAddress?: AddressInfo;
  /** Where other instances dial this one (with `peer`). */
  peerAddress?: AddressInfo;
  /** The tunnels of the other instances, as this one sees them (with `peer`). */
  remoteTunnels?: RemoteTunnels;
  /** Resolves with whether `port` is listened on here for another instance's TCP tunnel, once it is. */
  remoteTcpListening(port: number): Promise<boolean>;
  activity(): DataPlaneActivity;
  /**
   * Begins a drain: the public listeners, the TCP ports and the agent listener stop accepting,
   * idle keep-alive connections close, and requests still answered get `Connection: close`; the
   * requests and streams in flight go on, and the agent sessions with them. `open` is what was
   * in flight as it began; `done` resolves once every public connection has ended, or once
   * `graceMs` have passed. Then close() ends the rest.
   */
  drain(graceMs: number): { open: DataPlaneActivity; done: Promise<DrainOutcome> };
  /** Ends every session and connection at once, and removes this instance's live rows. */
  close(): Promise<void>;
}

export async function startDataPlane(options: DataPlaneOptions): Promise<DataPlane> {
  const { registry, log, ingress } = options;
  const records = new LiveRecords({
    store: options.store,
    state: registry,
    commands: options.commands,
    log: log.child({ component: 'live-records' }),
    ...(options.leaseMs !== undefined && { leaseMs: options.leaseMs }),
    ...(options.instanceId !== undefined && { instanceId: options.instanceId }),
  });
  const edges = new EdgeDirectory({
    store: options.store,
    log: log.child({ component: 'edges' }),
    ...(ingress.configPollMs !== undefined && { pollMs: ingress.configPollMs }),
  });
  await edges.start();
  const traffic = new Traffic({
    registry: options.metrics,
    live: { sessions: () => registry.size, tunnels: () => registry.tunnels(), streams: () => registry.openProxyStreams },
    log: log.child({ component: 'ingress' }),
    accessLog: ingress.accessLog,
  });
  const binds: BindSettings = {
    domains: options.domains,
    bindKey: createHmac('sha256', options.masterKey).update('edgeplane tunnel tokens').digest(),
    sealer: options.sealer,
    // An agent's OAuth without a client of its own uses the server's application for the provider, where there is one.
    managedOAuthProviders: Object.keys(options.ingress?.signIn?.defaultClients ?? {}),
    maxTunnelsPerSession: options.limits?.maxTunnelsPerSession ?? 100,
    maxTunnelsPerAccount: options.limits?.maxTunnelsPerAccount ?? 1000,
  };
  const cluster = options.peer && (await startCluster(options, records.instanceId, binds));
  const directory: IngressDirectory = cluster ? new ClusterDirectory(registry, cluster.remote) : registry;
  if (cluster) records.peerAddress = cluster.advertised;
  const policies = new CompiledPolicies(edges, log.child({ component: 'edges' }));
  const streams = createStreamEdgeServer({
    edges,
    policies,
    directory,
    log: log.child({ component: 'edges' }),
    traffic,
    ...(ingress.edgeTuning?.connectTimeoutMs !== undefined && { connectTimeoutMs: ingress.edgeTuning.connectTimeoutMs }),
    ...(ingress.backendCa && { backendCa: ingress.backendCa }),
  });
  const agentEndpoints = new AgentEndpoints(edges);
  const listeners =
    ingress.https || ingress.http
      ? await startIngress({
          ...(ingress.https && { https: ingress.https }),
          ...(ingress.http && { http: ingress.http }),
          directory,
          edges: {
            directory: edges,
            streams,
            policies,
            agentEndpoints,
            ...(ingress.edgeTuning && { tuning: ingress.edgeTuning }),
            ...(ingress.backendCa && { backendCa: ingress.backendCa }),
            signIn: createSignInGate(ingress.signIn ?? {}, {
              sealer: options.sealer,
              log: log.child({ component: 'edges' }),
              timeoutMs: ingress.edgeTuning?.identityProviderTimeoutMs ?? EDGE_HTTP_DEFAULTS.identityProviderTimeoutMs,
            }),
          },
          certificates: createIngressCertificates({ ...ingress.certificates, store: options.store, sealer: options.sealer, domains: options.domains, log }),
          log: log.child({ component: 'ingress' }),
          traffic,
          ...(ingress.tuning && { tuning: ingress.tuning }),
        })
      : undefined;
  const agentCertificates = createIngressCertificates({
    dataDir: ingress.certificates.dataDir,
    defaultCertificate: options.agents.tls,
    store: options.store,
    sealer: options.sealer,
    domains: options.domains,
    log,
    serves: 'agents',
  });
  const claims = new RouteClaims({
    store: options.store,
    instanceId: records.instanceId,
    log: log.child({ component: 'route-claims' }),
    ...(options.leaseMs !== undefined && { leaseMs: options.leaseMs }),
    liveTunnelIds: () => registry.tunnels().map((t) => t.id),
  });
  const tcp = new TcpIngress({
    host: ingress.tcpHost ?? '127.0.0.1',
    log: log.child({ component: 'tcp-endpoints' }),
    traffic,
    agentStreams: (target, socket, client) => {
      const edge = agentEndpoints.streamEdge(target);
      if (edge) streams.serve(socket, edge, client);
      return edge !== undefined;
    },
  });
  // Endpoint URLs name the port public clients use: the listener's, unless a balancer or a port mapping moves it.
  if (listeners?.httpsAddress) binds.httpsPort = ingress.publicPorts?.https ?? listeners.httpsAddress.port;
  if (listeners?.httpAddress) binds.httpPort = ingress.publicPorts?.http ?? listeners.httpAddress.port;
  let agents: Awaited<ReturnType<typeof startAgentListener>> | undefined;
  let ssh: SshListener | undefined;
  try {
    agents = await startAgentListener({
      ...options.agents.tuning,
      host: options.agents.host,
      port: options.agents.port,
      tls: options.agents.tls,
      // An agent ingress's certificate for the names under its domain (`tunnel.us.<domain>`).
      certificateFor: (name) => agentCertificates.contextFor(name),
      store: options.store,
      log: log.child({ component: 'agents' }),
      registry,
      binds,
      tcp,
      claims,
    });
    if (options.ssh)
      ssh = await startSshListener({
        ...options.ssh.tuning,
        host: options.ssh.host,
        port: options.ssh.port,
        hostKey: (await loadSshHostKey(options.store, options.sealer)).pem,
        store: options.store,
        log: log.child({ component: 'ssh' }),
        registry,
        binds,
        tcp,
        claims,
      });
  } catch (err) {
    await agents?.close();
    await listeners?.close();
    await edges.close();
    await cluster?.close();
    throw err;
  }
  const stopRemoteTcp = cluster && listenForRemoteTcp(cluster.remote, tcp, directory, registry);
  const edgePorts = new EdgePorts({ edges, tcp, server: streams, log: log.child({ component: 'edges' }) });
  edgePorts.start();
  registry.observe(() => records.changed());
  records.start();
  claims.start();
  const activity = (): DataPlaneActivity => {
    const http = listeners?.activity() ?? { requests: 0, streams: 0 };
    return { requests: http.requests, streams: http.streams + tcp.openConnections(), sessions: registry.size, tunnels: registry.tunnels().length };
  };
  return {
    agentAddress: agents.address,
    ...(ssh && { sshAddress: ssh.address }),
    edges,
    edgePorts,
    ...(listeners?.httpsAddress && { httpsAddress: listeners.httpsAddress }),
    ...(listeners?.httpAddress && { httpAddress: listeners.httpAddress }),
    ...(cluster && { peerAddress: cluster.listener.address, remoteTunnels: cluster.remote }),
    activity,
    remoteTcpListening: (port) => tcp.remoteListening(port),
    drain(graceMs) {
      const started = performance.now();
      agents.stopAccepting();
      ssh?.stopAccepting();
      edgePorts.stopWatching();
      tcp.stopAccepting();
      listeners?.stopAccepting();
      const open = activity();
      const idle = Promise.all([listeners?.whenIdle(), tcp.whenIdle()]).then(() => 'idle' as const);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(resolve, graceMs, 'late')));
      const done = Promise.race([idle, late]).then((outcome) => {
        clearTimeout(timer);
        const { requests, streams } = outcome === 'idle' ? { requests: 0, streams: 0 } : activity();
        return { ms: Math.round(performance.now() - started), cut: outcome === 'late', left: { requests, streams } };
      });
      return { open, done };
    },
    async close() {
      stopRemoteTcp?.();
      edgePorts.close();
      await Promise.all([agents.close(), ssh?.close(), listeners?.close(), edges.close(), cluster?.close()]);
      await claims.stop();
      await records.close();
    },
  };
}

/**
 * The other instances' TCP endpoints are listened for here too, on the same ports, each
 * connection carried to the agent's instance; a port is given up when the tunnel goes, or to a
 * tunnel bound here (TcpIngress.listen closes it first). Returns what stops it.
 */
function listenForRemoteTcp(remote: RemoteTunnels, tcp: TcpIngress, directory: IngressDirectory, registry: AgentSessionRegistry): () => void {
  const reconcile = () => {
    const wanted = new Set(remote.tcpPorts());
    const listened = new Set(tcp.remotePorts());
    for (const port of listened) if (!wanted.has(port)) void tcp.stopRemote(port);
    for (const port of wanted) {
      if (listened.has(port) || registry.tcp(port) !== undefined || !tcp.isFree(port)) continue;
      void tcp.listenForRemote(port, (socket, client) => tcp.serveTunnel(directory.tcp(port), socket, client));
    }
  };
  reconcile();
  return remote.observe(reconcile);
}

/**
 * Routing between instances: the peer listener, which hands the streams of other instances to
 * this one's tunnels, and the other instances' tunnels, reached through links to theirs.
 */
async function startCluster(options: DataPlaneOptions, instanceId: string, binds: BindSettings) {
  const { registry, log, peer } = options;
  const key = peerKey(options.masterKey);
  const peerLog = log.child({ component: 'peers' });
  const listener = await listenForPeers({
    ...peer!.listen,
    key,
    log: peerLog,
    connect: ({ tunnelId, clientAddr }) => registry.tunnel(tunnelId)?.target.connect(clientAddr),
  });
  const links = new PeerLinks(key, peerLog);
  const remote = new RemoteTunnels({
    store: options.store,
    instanceId,
    links,
    log: peerLog,
    modulesOf: (sealed, tunnelId) => modulesOfSealed(sealed, tunnelId, binds),
    ...(peer!.pollMs !== undefined && { pollMs: peer!.pollMs }),
  });
  try {
    await remote.start();
  } catch (err) {
    await listener.close();
    throw err;
  }
  const advertised = peer!.address ?? hostPort(listener.address.address, listener.address.port);
  return {
    listener,
    remote,
    advertised,
    async close() {
      links.close();
      await Promise.all([remote.close(), listener.close()]);
    },
  };
}
