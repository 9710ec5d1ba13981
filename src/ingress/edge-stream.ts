// Connections to TCP and TLS edges: the edge's IP restriction and connect-time policy, then its
// backend, resolved per connection — an agent's labeled tunnel or a static address (over TLS
// when the backend says so) — and the connection's bytes joined to it both ways. A backend that
// cannot be reached passes to the next one a failover backend names; when none can, the
// connection is closed. An HTTP response backend has no meaning on a byte stream and is passed over.
// A traffic policy's forward-internal sends the connection to the account's internal TCP endpoint
// instead (a TCP cloud endpoint's only way to a backend).
import net from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import type { Logger } from 'pino';
import type { IngressDirectory } from '../core/live-agents.js';
import { ipAllowed } from '../edges/access.js';
import { EDGE_ERRORS } from '../edges/errors.js';
import { agentEndpointOf } from '../edges/agent-endpoints.js';
import { candidates, type Candidate } from '../edges/backends.js';
import type { AccountEdges, StreamEdgeModules } from '../edges/edge-config.js';
import type { EdgeDirectory } from '../edges/edge-directory.js';
import type { CompiledPolicies } from '../edges/policies.js';
import type { PolicyConnection } from '../edges/traffic-policy/index.js';
import { joinStreams } from '../lib/stream/join.js';
import { plainIp } from './forwarding.js';
import { Traffic, type Visit } from './traffic-metrics.js';

export interface StreamEdgeOptions {
  edges: EdgeDirectory;
  policies: CompiledPolicies;
  directory: IngressDirectory;
  log: Logger;
  /** Milliseconds to connect to a static address (default 10 s). */
  connectTimeoutMs?: number;
  /** More CAs to trust for static address backends with TLS. */
  backendCa?: string;
  /** Where connections are counted and logged (default: counted, published nowhere). */
  traffic?: Traffic;
}

/** The edge a connection reached: its modules, and which one for the log. */
export interface StreamEdge extends StreamEdgeModules {
  id: string;
  accountId: string;
  /** A TLS edge's: the name the client asked for. */
  serverName?: string;
  /** Set when the edge is a TCP cloud endpoint served as one. */
  cloud?: { url: string };
}

export interface StreamEdgeServer {
  /**
   * Serves a connection of `edge`: `socket` is what reaches the backend (the client's TCP socket,
   * or its TLS socket once TLS is terminated here), `client` the client's address.
   */
  serve(socket: Duplex, edge: StreamEdge, client: { ip: string; addr: string }): void;
}

/** What a traffic policy sees of a TCP or TLS edge's connection. */
function policyConnection(socket: Duplex, edge: StreamEdge, client: { ip: string; addr: string }): PolicyConnection {
  const tcp = socket as Partial<net.Socket>;
  const serverPort = tcp.localPort ?? 0;
  const serverIp = plainIp(tcp.localAddress);
  const host = edge.serverName ?? serverIp;
  const protocol = edge.serverName ? 'tls' : 'tcp';
  return {
    clientIp: client.ip,
    clientPort: Number(/:(\d+)$/.exec(client.addr)?.[1] ?? 0),
    serverIp,
    serverPort,
    startedAt: new Date(),
    endpoint: { id: edge.id, host, port: serverPort, url: `${protocol}://${host}:${serverPort}`, addr: `${host}:${serverPort}`, protocol },
  };
}

/** A TCP (or TLS) connection to a static address, or why there is none: it refused (or failed), or timed out. */
function connectStatic(
  c: Extract<Candidate, { kind: 'static' }>,
  options: { connectTimeoutMs: number; backendCa?: string | undefined },
): Promise<Duplex | 'refused' | 'timeout'> {
  return new Promise((resolve) => {
    const socket = c.tls
      ? tls.connect({ host: c.host, port: c.port, servername: net.isIP(c.host) ? '' : c.host, ...(options.backendCa && { ca: options.backendCa }) })
      : net.connect({ host: c.host, port: c.port, noDelay: true });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve('timeout');
    }, options.connectTimeoutMs);
    socket.once(c.tls ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      resolve(socket);
    });
    socket.once('error', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve('refused');
    });
  });
}

/**
 * A byte stream to the first candidate that can be reached: an agent's stream or a connection to
 * a static address. HTTP response backends mean nothing to a byte stream and are passed over.
 */
export async function openBackendStream(
  list: readonly Candidate[],
  clientAddr: string,
  options: { connectTimeoutMs: number; backendCa?: string | undefined; log: Logger; edgeId: string; visit?: Visit },
): Promise<Duplex | undefined> {
  for (const c of list) {
    if (c.kind === 'tunnel') {
      try {
        const stream = c.target.connect(clientAddr);
        options.visit?.sentTo(c.kind, c.backendId.startsWith('agent:') ? c.target.tunnelId : c.backendId);
        return stream;
      } catch {
        continue;
      }
    }
    if (c.kind === 'static') {
      const socket = await connectStatic(c, options);
      if (typeof socket !== 'string') {
        options.visit?.sentTo(c.kind, c.backendId);
        return socket;
      }
      options.log.info({ edge_id: options.edgeId, backend_id: c.backendId }, 'edge: a static address backend could not be reached');
    }
  }
  return undefined;
}

export function createStreamEdgeServer(options: StreamEdgeOptions): StreamEdgeServer {
  const { edges, directory, log } = options;
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  const traffic = options.traffic ?? new Traffic();

  function connect(account: AccountEdges, edge: StreamEdge, client: { addr: string }, visit: Visit): Promise<Duplex | undefined> {
    const backend = edge.backend;
    if (!backend?.enabled) return Promise.resolve(undefined);
    const list = candidates({ backends: account.backends, directory, accountId: edge.accountId }, backend.backend_id);
    return openBackendStream(list, client.addr, { connectTimeoutMs, backendCa: options.backendCa, log, edgeId: edge.id, visit });
  }

  /** A stream to the account's internal endpoint at `url` (an agent's, bound here), or undefined when it is offline. */
  function connectInternal(edge: StreamEdge, url: string, client: { addr: string }, visit: Visit): Duplex | undefined {
    const target = directory.internal(edge.accountId, url);
    if (!target) {
      log.info({ edge_id: edge.id, account_id: edge.accountId, url }, 'edge: forward-internal names an internal endpoint that is not online');
      return undefined;
    }
    try {
      const stream = target.connect(client.addr);
      visit.sentTo('tunnel', url);
      return stream;
    } catch {
      return undefined;
    }
  }

  return {
    serve(socket, edge, client) {
      socket.on('error', () => {});
      const visit = traffic.connection(socket, edge.serverName === undefined ? 'tcp' : 'tls', client.ip);
      const refuse = (why: string, code?: string) => {
        log.info({ edge_id: edge.id, account_id: edge.accountId, client_ip: client.ip, why }, 'edge: connection refused');
        if (code) traffic.refused(code);
        socket.destroy();
      };
      // An agent's endpoint brings its account view (its tunnel as backend) and its Bind's CIDRs.
      const agent = agentEndpointOf(edge);
      if (agent) visit.to('endpoint', agent.endpointId, true);
      else visit.to(edge.cloud ? 'endpoint' : 'edge', edge.id);
      const account = agent ? agent.account : edges.account(edge.accountId);
      if (!account) return refuse('no configuration');
      const agentRefused = agent?.check(client.ip, undefined);
      if (agentRefused)
        return refuse(
          `${agentRefused.refused} (agent endpoint)`,
          agentRefused.refused === 'unenforceable' ? EDGE_ERRORS.agentUnenforceable.code : EDGE_ERRORS.ipRefused.code,
        );
      if (edge.ipRestriction?.enabled && !ipAllowed(edge.ipRestriction, account.ipPolicies, client.ip))
        return refuse('ip_restriction', EDGE_ERRORS.ipRefused.code);
      const policy = options.policies.tcp(edge.accountId, edge.id, edge.policy);
      if (policy === 'invalid') return refuse('traffic policy does not compile', EDGE_ERRORS.policyFailed.code);
      // forward-internal: the account's internal TCP endpoint, instead of the edge's backend.
      let internalUrl: string | undefined;
      if (policy) {
        const conn = policyConnection(socket, edge, client);
        const decision = policy.onConnect(conn);
        if (decision.kind === 'deny') {
          log.info(
            { edge_id: edge.id, account_id: edge.accountId, client_ip: client.ip, rule: decision.rule, action: decision.action },
            'edge: connection refused by its traffic policy',
          );
          traffic.refusedByPolicy(decision.action);
          return void socket.destroy();
        }
        if (decision.kind === 'error') {
          log.warn(
            { edge_id: edge.id, account_id: edge.accountId, rule: decision.rule, problem: decision.problem },
            'edge: the traffic policy failed on a connection',
          );
          return void socket.destroy();
        }
        socket.once('close', () => policy.onClose(conn));
        internalUrl = decision.forwardInternal?.url;
      }
      // Nothing is read from the client until its backend is there: its first bytes wait for it.
      socket.pause();
      const opening = internalUrl === undefined ? connect(account, edge, client, visit) : Promise.resolve(connectInternal(edge, internalUrl, client, visit));
      opening.then(
        (upstream) => {
          if (!upstream) return refuse('no backend reachable');
          if (socket.destroyed) return void upstream.destroy();
          joinStreams(socket, upstream);
          socket.resume();
        },
        (err: unknown) => {
          log.error({ err, edge_id: edge.id }, 'edge: connection failed');
          socket.destroy();
        },
      );
    },
  };
}
