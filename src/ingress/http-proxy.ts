// The HTTP side of public ingress, shared by the HTTPS listener (after TLS is terminated) and the
// plain HTTP listener: each request goes, by its Host, to the tunnel serving it, over a stream to
// the agent, with node:http's client; the answer comes back the same way.
//
// Written by hand on node:http: http-proxy (node-http-proxy) is unmaintained, and what this needs
// (one agent stream per client connection and tunnel, streams that are not sockets, ngrok's error
// answers) is little code on top of node:http's own parser and client.
import http from 'node:http';
import type net from 'node:net';
import { performance } from 'node:perf_hooks';
import { pipeline, type Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { IngressDirectory, TunnelTarget } from '../core/live-agents.js';
import { CircuitBreakers } from '../edges/circuit-breaker.js';
import { createEdgeHttp, type IngressEdges } from './edge-http.js';
import { INGRESS_ERRORS, rawErrorResponse, sendError, type IngressError } from '../edges/errors.js';
import {
  AgentConnectError,
  asSocket,
  classify,
  clientAddress,
  forwardedHeaders,
  hasBody,
  hostOf,
  plainIp,
  relay,
  returnedHeaders,
  type Scheme,
} from './forwarding.js';
import { Traffic } from './traffic-metrics.js';

export { clientAddress, forwardedHeaders, hostOf, type Scheme } from './forwarding.js';

export interface HttpProxyOptions {
  directory: IngressDirectory;
  scheme: Scheme;
  log: Logger;
  /** Tunnels one client connection keeps a stream to at once (default 8); past it the oldest is closed. */
  maxTunnelsPerConnection?: number;
  /** The edges whose hostports are served (HTTPS edges take their hosts' requests over HTTPS). */
  edges?: IngressEdges | undefined;
  /** Where each request is counted and logged once it ends (default: counted, published nowhere). */
  traffic?: Traffic | undefined;
}

/** The keep-alive agent of one client connection and one tunnel: at most one stream, reused request after request. */
class TunnelStreams extends http.Agent {
  constructor(
    public target: TunnelTarget,
    private readonly clientAddr: string,
  ) {
    super({ keepAlive: true, maxSockets: 1, maxFreeSockets: 1, maxTotalSockets: 1 });
  }

  override createConnection(_options: unknown, callback: (err: Error | null, socket?: Duplex) => void): Duplex | undefined {
    try {
      return asSocket(this.target.connect(this.clientAddr));
    } catch (err) {
      callback(new AgentConnectError((err as Error).message));
      return undefined;
    }
  }

  // The stream has no TCP keepalive or timer to arm: kept until its client connection closes.
  override keepSocketAlive(): boolean {
    return true;
  }
}

export interface HttpProxy {
  /** Closes what the proxy keeps open beside client connections (idle connections toward static addresses). */
  close(): void;
  onRequest(req: http.IncomingMessage, res: http.ServerResponse): void;
  onUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void;
}

export function createHttpProxy(options: HttpProxyOptions): HttpProxy {
  const { directory, scheme, log } = options;
  const traffic = options.traffic ?? new Traffic();
  const maxTunnels = options.maxTunnelsPerConnection ?? 8;
  /** Per client connection: its agents, by tunnel id, oldest first. */
  const connections = new WeakMap<net.Socket, Map<string, TunnelStreams>>();

  function streamsFor(socket: net.Socket, target: TunnelTarget, clientAddr: string): TunnelStreams {
    let agents = connections.get(socket);
    if (!agents) {
      const created = new Map<string, TunnelStreams>();
      connections.set(socket, created);
      socket.once('close', () => {
        for (const agent of created.values()) agent.destroy();
        created.clear();
      });
      agents = created;
    }
    let agent = agents.get(target.tunnelId);
    if (agent) {
      agent.target = target;
      return agent;
    }
    agent = new TunnelStreams(target, clientAddr);
    agents.set(target.tunnelId, agent);
    while (agents.size > maxTunnels) {
      const [oldestId, oldest] = agents.entries().next().value!;
      oldest.destroy();
      agents.delete(oldestId);
    }
    return agent;
  }

  const urlOf = (host: string) => `${scheme}://${host}`;
  const edges = options.edges?.directory;
  const agentEndpoints = options.edges?.agentEndpoints;
  const edgeHttp =
    options.edges &&
    createEdgeHttp({
      edges: options.edges.directory,
      policies: options.edges.policies,
      directory,
      log,
      breakers: new CircuitBreakers(),
      streamsFor,
      ...(options.edges.tuning && { tuning: options.edges.tuning }),
      ...(options.edges.backendCa && { backendCa: options.edges.backendCa }),
      signIn: options.edges.signIn,
      traffic,
    });

  return {
    close: () => edgeHttp?.close(),

    onRequest(req, res) {
      const visit = traffic.request(req, res, scheme, plainIp(req.socket.remoteAddress));
      const host = hostOf(req.headers.host);
      const edge = host === '' ? undefined : edges?.httpsEdge(host);
      if (edge) {
        visit.to('edge', edge.id);
        // An HTTPS edge serves its hosts over HTTPS only: plain HTTP is sent there.
        if (scheme === 'http') {
          res.writeHead(308, { Location: `https://${host}${req.url?.startsWith('/') ? req.url : '/'}`, 'Content-Length': 0 });
          return void res.end();
        }
        return edgeHttp!.handle(req, res, edge, visit);
      }
      // Then a cloud endpoint of this scheme, served as a one-route edge; then an agent's endpoint.
      const cloud = host === '' ? undefined : edges?.cloudEndpoint(host, scheme);
      if (cloud) {
        visit.to('endpoint', cloud.id);
        return edgeHttp!.handle(req, res, cloud.edge, visit);
      }
      const target = host === '' ? undefined : directory.http(host, scheme);
      if (!target) {
        sendError(req, res, INGRESS_ERRORS.endpointOffline, urlOf(host));
        return;
      }
      visit.to('endpoint', target.endpoint?.id ?? target.tunnelId, true);
      // An endpoint with options (or an endpoint configuration) goes through the edge pipeline.
      const agentEdge = agentEndpoints?.httpEdge(target, scheme);
      if (agentEdge) return edgeHttp!.handle(req, res, agentEdge, visit);
      visit.sentTo('tunnel', target.tunnelId);
      const client = clientAddress(req.socket);
      const upstream = http.request({
        agent: streamsFor(req.socket, target, client.addr),
        method: req.method,
        path: req.url,
        headers: forwardedHeaders(req, scheme, client.ip, false),
      });
      const sentAt = performance.now();
      let failed = false;
      const fail = (err: NodeJS.ErrnoException) => {
        if (failed) return;
        failed = true;
        upstream.destroy();
        if (res.headersSent || res.destroyed) {
          res.destroy();
          return;
        }
        const error = classify(err);
        log.debug({ err: err.message, code: error.code, tunnel_id: target.tunnelId }, 'ingress: request failed on the agent side');
        // The request's body is not read any further: the connection closes after the answer.
        res.shouldKeepAlive = false;
        sendError(req, res, error, urlOf(host));
      };
      upstream.on('error', fail);
      upstream.on('response', (answer) => {
        traffic.answered('endpoint', sentAt);
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, returnedHeaders(answer));
        relay(answer, res, () => upstream.destroy());
      });
      // The client went away before its answer was complete: the stream is not reused.
      res.on('close', () => {
        if (!res.writableFinished) upstream.destroy();
      });
      if (!hasBody(req)) upstream.end();
      else
        pipeline(req, upstream, (err) => {
          if (err && !failed) upstream.destroy();
        });
    },

    onUpgrade(req, socket, head) {
      const visit = traffic.upgrade(req, socket, scheme, plainIp(req.socket.remoteAddress));
      const host = hostOf(req.headers.host);
      const edge = host === '' || scheme === 'http' ? undefined : edges?.httpsEdge(host);
      if (edge) {
        visit.to('edge', edge.id);
        return edgeHttp!.upgrade(req, socket, head, edge, visit);
      }
      const cloud = host === '' ? undefined : edges?.cloudEndpoint(host, scheme);
      if (cloud) {
        visit.to('endpoint', cloud.id);
        return edgeHttp!.upgrade(req, socket, head, cloud.edge, visit);
      }
      const fail = (error: IngressError) => {
        visit.status = error.status;
        socket.on('error', () => {});
        socket.end(rawErrorResponse(error, urlOf(host), req.headers.accept));
      };
      const target = host === '' ? undefined : directory.http(host, scheme);
      if (!target) return fail(INGRESS_ERRORS.endpointOffline);
      visit.to('endpoint', target.endpoint?.id ?? target.tunnelId, true);
      const agentEdge = agentEndpoints?.httpEdge(target, scheme);
      if (agentEdge) return edgeHttp!.upgrade(req, socket, head, agentEdge, visit);
      visit.sentTo('tunnel', target.tunnelId);
      const raw = req.socket;
      const client = clientAddress(raw);
      let stream: Duplex;
      try {
        stream = target.connect(client.addr);
      } catch {
        return fail(INGRESS_ERRORS.agentFailed);
      }
      // An upgraded connection (a WebSocket) may idle for long: its own pings keep it, TCP keepalive finds it dead.
      raw.setTimeout(0);
      raw.setKeepAlive(true, 30_000);
      const headers = forwardedHeaders(req, scheme, client.ip, true);
      let text = `${req.method} ${req.url} HTTP/1.1\r\n`;
      for (let i = 0; i < headers.length; i += 2) text += `${headers[i]}: ${headers[i + 1]}\r\n`;
      stream.write(text + '\r\n');
      if (head.length > 0) stream.write(head);
      // Piped by hand rather than with pipeline(): a stream that fails before answering gets an
      // error answer written on the client connection, which pipeline() would destroy first.
      let answered = false;
      stream.once('data', (chunk: Buffer) => {
        answered = true;
        visit.answeredWith(chunk);
      });
      stream.on('error', (err) => {
        log.debug({ err: err.message, tunnel_id: target.tunnelId }, 'ingress: upgrade failed on the agent side');
        if (answered || !socket.writable) return void socket.destroy();
        answered = true;
        stream.unpipe(socket);
        fail(INGRESS_ERRORS.agentFailed);
      });
      stream.on('close', () => {
        if (!socket.writableEnded) socket.destroy();
      });
      socket.on('error', () => stream.destroy());
      socket.on('close', () => stream.destroy());
      socket.pipe(stream);
      stream.pipe(socket);
    },
  };
}
