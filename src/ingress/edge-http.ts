// Requests to an HTTPS edge: the route their path takes, the route's modules in their documented
// order (docs/ingress.md), and the backend the request goes to — an agent's labeled tunnel, a
// static address, or an answer of the backend's own — with the answer's modules on the way back.
//
// Order on the way in: modules not yet enforced (refuse), ip_restriction, user_agent_filter,
// sign-in (oauth, oidc, saml: sign-in/gate.ts), circuit_breaker, traffic policy
// (on_http_request), request_headers, backend.
// On the way out: traffic policy (on_http_response), response_headers, compression.
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { pipeline, type Duplex, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import type { Logger } from 'pino';
import { createWebSocketStream, WebSocketServer } from 'ws';
import type { IngressDirectory, TunnelTarget } from '../core/live-agents.js';
import { ipAllowed, userAgentAllowed } from '../edges/access.js';
import { agentEndpointOf, type AgentEndpoints } from '../edges/agent-endpoints.js';
import { basicAuthChallenge } from '../edges/basic-auth.js';
import { candidates, type Candidate } from '../edges/backends.js';
import type { BreakerPass, CircuitBreakers } from '../edges/circuit-breaker.js';
import type { AccountEdges, HeadersModule, HttpsEdge, HttpsRoute, WebhookVerificationModule } from '../edges/edge-config.js';
import { MAX_WEBHOOK_BODY_BYTES, refusalStatusOf, verifyWebhook } from '../edges/webhooks/index.js';
import type { EdgeDirectory } from '../edges/edge-directory.js';
import type { CompiledPolicies } from '../edges/policies.js';
import { rawSignInAnswer, sendSignInAnswer, withSignIn, type SignInDecision, type SignInGate } from '../edges/sign-in/gate.js';
import type { HttpPolicy, PolicyConnection, PolicyRequest, Refusal as PolicyRefusal } from '../edges/traffic-policy/index.js';
import { matchRoute, normalizeTarget } from '../edges/routes.js';
import { EDGE_ERRORS, INGRESS_ERRORS, rawErrorResponse, sendError, type IngressError } from '../edges/errors.js';
import { openBackendStream } from './edge-stream.js';
import { joinStreams } from '../lib/stream/join.js';
import { classify, clientAddress, plainIp, forwardedHeaders, hasBody, relay, returnedHeaders } from './forwarding.js';
import type { StreamEdgeServer } from './edge-stream.js';
import { Traffic, type Visit } from './traffic-metrics.js';

export interface EdgeHttpTuning {
  /** Milliseconds to connect to a static address (default 10 s); past it the next backend is tried, or 504. */
  connectTimeoutMs?: number;
  /** Milliseconds from the request's end to the upstream's response head (default 60 s); past it 504. */
  responseTimeoutMs?: number;
  /** Milliseconds a sign-in step that asks the identity provider may take (default 10 s); past it 504. */
  identityProviderTimeoutMs?: number;
}

export const EDGE_HTTP_DEFAULTS: Required<EdgeHttpTuning> = { connectTimeoutMs: 10_000, responseTimeoutMs: 60_000, identityProviderTimeoutMs: 10_000 };

/** The edges public ingress serves, and how it reaches their backends. */
export interface IngressEdges {
  directory: EdgeDirectory;
  /** TLS edges' connections, once their TLS is terminated here or read to its server name. */
  streams: StreamEdgeServer;
  /** The edges' traffic policies, compiled. */
  policies: CompiledPolicies;
  tuning?: EdgeHttpTuning;
  /** More CAs to trust for static address backends with TLS. */
  backendCa?: string;
  /** The routes' sign-in (oauth, oidc, saml). */
  signIn: SignInGate;
  /** Agent endpoints served through the edge pipeline (their options, their endpoint configurations). */
  agentEndpoints?: AgentEndpoints;
}

export interface EdgeHttpOptions {
  edges: EdgeDirectory;
  directory: IngressDirectory;
  log: Logger;
  breakers: CircuitBreakers;
  policies: CompiledPolicies;
  /** The keep-alive agent of one client connection to one tunnel (http-proxy.ts). */
  streamsFor(socket: net.Socket, target: TunnelTarget, clientAddr: string): http.Agent;
  tuning?: EdgeHttpTuning;
  /** More CAs to trust for static address backends with TLS (default: Node's). */
  backendCa?: string;
  signIn: SignInGate;
  /** Where requests are counted (refusals, upstream latency) and logged (default: counted, published nowhere). */
  traffic?: Traffic;
}

/** A request the route's checks let through: what it carries to its backend. */
interface Admitted {
  edge: HttpsEdge;
  route: HttpsRoute;
  account: AccountEdges;
  url: string;
  /** `https`, or `http` for an agent's plain HTTP endpoint. */
  scheme: 'http' | 'https';
  client: { ip: string; addr: string };
  /** What goes to the upstream: the request target and the headers, as name/value pairs. */
  target: string;
  headers: [string, string][];
  /** The circuit breaker's pass for this request: its outcome is told to it. */
  breaker?: BreakerPass;
  compress: boolean;
  /** The backends to try, in order. */
  candidates: Candidate[];
  /** The route's traffic policy, when it has one to run. */
  policy?: HttpPolicy;
  /** What the policy sees of the connection. */
  conn?: PolicyConnection;
  /** What the policy saw of the request (its headers are `headers`). */
  policyRequest?: PolicyRequest;
  /** The request's body, when the policy had it read first (a jwt-validation token in the body). */
  body?: Buffer;
  /** Cookies the sign-in sets on the answer (the session's last-seen time moved on). */
  setCookies?: string[];
}

/** A request refused before any upstream: the answer to give. */
interface Refusal {
  refused: IngressError;
  detail?: string;
  /** Headers the answer carries (a 401's challenge). */
  headers?: Record<string, string>;
  /** The route that refused, when the request matched one. */
  route?: HttpsRoute;
}

/** An admitted request with its client's request and response. */
interface Exchange extends Admitted {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  /** The request as it is counted and logged: its route and backend are told to it. */
  visit: Visit;
}

const pairs = (flat: string[]): [string, string][] => {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
  return out;
};

/** A headers module applied to name/value pairs: removed first, then added (replacing any of the same name). */
function applyHeaders(headers: [string, string][], module: HeadersModule | undefined): [string, string][] {
  if (!module?.enabled) return headers;
  const drop = new Set([...module.remove, ...Object.keys(module.add)].map((n) => n.toLowerCase()));
  const kept = drop.size === 0 ? headers : headers.filter(([name]) => !drop.has(name.toLowerCase()));
  for (const [name, value] of Object.entries(module.add)) kept.push([name, value]);
  return kept;
}

/** Content types worth compressing. */
const COMPRESSIBLE = /^(text\/|application\/(json|javascript|xml|[\w.+-]+\+(json|xml))|image\/svg\+xml)/i;

/** The encoding to compress an answer with, when the client takes one and the answer should be; else undefined. */
function encodingFor(
  req: http.IncomingMessage,
  status: number,
  headers: [string, string][],
  allowed: readonly string[],
): 'br' | 'gzip' | 'deflate' | undefined {
  if (req.method === 'HEAD' || status < 200 || status === 204 || status === 304) return undefined;
  const get = (name: string) => headers.find(([n]) => n.toLowerCase() === name)?.[1];
  if (get('content-encoding') !== undefined || !COMPRESSIBLE.test(get('content-type') ?? '')) return undefined;
  const accepted = new Map(
    String(req.headers['accept-encoding'] ?? '')
      .split(',')
      .map((part) => {
        const [name, ...params] = part.trim().toLowerCase().split(';');
        const q = params.map((p) => /^\s*q=([\d.]+)/.exec(p)?.[1]).find(Boolean);
        return [name!, q === undefined ? 1 : Number(q)] as const;
      }),
  );
  for (const encoding of ENCODINGS) if (allowed.includes(encoding) && (accepted.get(encoding) ?? 0) > 0) return encoding;
  return undefined;
}

/** The most of a request's body a traffic policy has read before the request goes on (a jwt-validation token in the body). */
const MAX_POLICY_BODY_BYTES = 1024 * 1024;

/**
 * The request's body whole, or undefined when it is longer than `max`. A longer one is read on
 * and dropped, up to 16 times `max`, so that the answer reaches a client still sending (past
 * that the connection is closed).
 */
function readBody(req: http.IncomingMessage, max: number): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= max) chunks.push(chunk);
      else if (size > 16 * max) req.destroy();
    });
    req.once('end', () => resolve(size <= max ? Buffer.concat(chunks) : undefined));
    req.once('close', () => resolve(undefined));
  });
}

/** The encodings answers are compressed with, in the order they are preferred (`compress` is not made: no client asks for it). */
const ENCODINGS = ['br', 'gzip', 'deflate'] as const;

/** The scheme an edge's requests come on: https, or http for a cloud endpoint of an http:// URL. */
const schemePort = (edge: HttpsEdge) => (schemeOf(edge) === 'http' ? 80 : 443);

/** When each client connection began, for `conn.ts.start`. */
const connectedAt = new WeakMap<object, Date>();

/** What a traffic policy sees of the connection a request came on. */
/** The scheme an edge's requests come with: a cloud endpoint's or an agent endpoint's `http` are plain; every other's are HTTPS. */
function schemeOf(edge: HttpsEdge): 'http' | 'https' {
  return edge.cloud?.scheme ?? (agentEndpointOf(edge)?.scheme === 'http' ? 'http' : 'https');
}

function policyConnection(req: http.IncomingMessage, edge: HttpsEdge, host: string, clientIp: string): PolicyConnection {
  const socket = req.socket;
  let startedAt = connectedAt.get(socket);
  if (!startedAt) {
    startedAt = new Date();
    connectedAt.set(socket, startedAt);
  }
  const serverIp = plainIp(socket.localAddress);
  return {
    clientIp,
    clientPort: socket.remotePort ?? 0,
    serverIp,
    serverPort: socket.localPort ?? 0,
    startedAt,
    endpoint: { id: edge.id, host, port: schemePort(edge), url: `${schemeOf(edge)}://${host}`, addr: `${host}:${schemePort(edge)}`, protocol: schemeOf(edge) },
  };
}

function compressor(encoding: 'br' | 'gzip' | 'deflate'): zlib.BrotliCompress | zlib.Gzip | zlib.Deflate {
  if (encoding === 'br') return zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } });
  return encoding === 'gzip' ? zlib.createGzip({ level: 6 }) : zlib.createDeflate({ level: 6 });
}

/** Static addresses kept apart at most: the least recently used pool is closed past it. */
const MAX_STATIC_POOLS = 1000;

/**
 * Keep-alive pools toward static address backends, one per address and TLS setting: a request
 * reuses a connection another left idle instead of opening one (idle ones close after 30 s).
 */
class StaticAgents {
  private readonly pools = new Map<string, http.Agent>();

  constructor(private readonly ca: string | undefined) {}

  of(c: Extract<Candidate, { kind: 'static' }>): http.Agent {
    const key = `${c.tls ? 'https' : 'http'}://${c.host}:${c.port}`;
    let pool = this.pools.get(key);
    if (pool) {
      this.pools.delete(key);
      this.pools.set(key, pool);
      return pool;
    }
    // noDelay: a request's head and body are written apart; Nagle would hold the second for an ACK.
    // As many kept idle as may be in use: with fewer, a burst past them opens new connections (seen: one request in 15 under 50 connections).
    const settings = { keepAlive: true, maxSockets: 256, maxFreeSockets: 256, timeout: 30_000, noDelay: true };
    pool = c.tls ? new https.Agent({ ...settings, ...(this.ca && { ca: this.ca }) }) : new http.Agent(settings);
    this.pools.set(key, pool);
    while (this.pools.size > MAX_STATIC_POOLS) {
      const [oldest, agent] = this.pools.entries().next().value!;
      agent.destroy();
      this.pools.delete(oldest);
    }
    return pool;
  }

  close(): void {
    for (const agent of this.pools.values()) agent.destroy();
    this.pools.clear();
  }
}

export interface EdgeHttp {
  /** Closes the idle connections kept toward static addresses. */
  close(): void;
  handle(req: http.IncomingMessage, res: http.ServerResponse, edge: HttpsEdge, visit: Visit): void;
  upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer, edge: HttpsEdge, visit: Visit): void;
}

export function createEdgeHttp(options: EdgeHttpOptions): EdgeHttp {
  const { edges, directory, log, breakers } = options;
  const traffic = options.traffic ?? new Traffic();
  const tuning = { ...EDGE_HTTP_DEFAULTS, ...options.tuning };
  const staticAgents = new StaticAgents(options.backendCa);

  // The WebSocket to TCP converter: the client's WebSocket ends here, and its messages' bytes go
  // to the backend as a TCP stream (and the backend's bytes back as binary messages). ws checks
  // the handshake and frames; messages are bounded at 1 MiB.
  const webSockets = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024, perMessageDeflate: false });

  /** A refusal, logged with the edge and route that refused. */
  function refusal(
    at: { edge: HttpsEdge; route?: HttpsRoute; client: { ip: string } },
    error: IngressError,
    why: string,
    detail?: string,
    headers?: Record<string, string>,
  ): Refusal {
    log.info(
      { edge_id: at.edge.id, route_id: at.route?.id, account_id: at.edge.accountId, client_ip: at.client.ip, code: error.code, why },
      'edge: request refused',
    );
    traffic.refused(error.code);
    return { refused: error, ...(detail !== undefined && { detail }), ...(headers && { headers }), ...(at.route && { route: at.route }) };
  }

  /** The route and the checks that need no upstream: the request as it will go on, or why it may not. */
  function admit(req: http.IncomingMessage, edge: HttpsEdge, upgrade = false): Admitted | Refusal | { signIn: SignInDecision } {
    const host = String(req.headers.host ?? '').toLowerCase();
    // An agent's endpoint brings its account view (its tunnel as backend) and its own checks.
    const agent = agentEndpointOf(edge);
    const scheme = schemeOf(edge);
    const url = `${scheme}://${host}`;
    const client = clientAddress(req.socket);
    const account = agent ? agent.account : edges.account(edge.accountId);
    const normalized = normalizeTarget(req.url ?? '');
    if (!account || !normalized) return refusal({ edge, client }, EDGE_ERRORS.badPath, 'request target');
    const route = options.signIn.routeFor(edge, normalized.path, normalized.query) ?? matchRoute(edge.routes, normalized.path);
    if (!route) return refusal({ edge, client }, EDGE_ERRORS.noRoute, 'no route', `(${normalized.path.slice(0, 200)})`);
    const at = { edge, route, client };
    const m = route.modules;
    if (m.ipRestriction?.enabled && !ipAllowed(m.ipRestriction, account.ipPolicies, client.ip)) return refusal(at, EDGE_ERRORS.ipRefused, 'ip_restriction');
    const agentRefused = agent?.check(client.ip, req.headers.authorization);
    if (agentRefused?.refused === 'unenforceable')
      return refusal(at, EDGE_ERRORS.agentUnenforceable, `configuration ${agentRefused.modules.join(', ')}`, `Modules: ${agentRefused.modules.join(', ')}.`);
    if (agentRefused?.refused === 'ip_restriction') return refusal(at, EDGE_ERRORS.ipRefused, 'ip_restriction (agent)');
    if (agentRefused?.refused === 'basic_auth')
      return refusal(at, EDGE_ERRORS.unauthorized, 'basic_auth', undefined, { 'WWW-Authenticate': basicAuthChallenge(host.replace(/:\d+$/, '')) });
    if (m.userAgentFilter?.enabled && !userAgentAllowed(m.userAgentFilter, String(req.headers['user-agent'] ?? '')))
      return refusal(at, EDGE_ERRORS.userAgentRefused, 'user_agent_filter');
    const signIn = options.signIn.check(req, route, { host, path: normalized.path, query: normalized.query, upgrade });
    if (signIn && signIn.kind !== 'pass') return { signIn };
    const policy = options.policies.http(edge.accountId, route.id, m.policy);
    if (policy === 'invalid') return refusal(at, EDGE_ERRORS.policyFailed, 'traffic policy does not compile');
    const breaker = m.circuitBreaker?.enabled ? breakers.of(route.id, m.circuitBreaker).allow() : undefined;
    if (m.circuitBreaker?.enabled && !breaker) return refusal(at, EDGE_ERRORS.circuitOpen, 'circuit_breaker');
    const backend = m.backend;
    const forwarded = pairs(forwardedHeaders(req, scheme, client.ip, upgrade));
    return {
      ...(policy && { policy, conn: policyConnection(req, edge, host, client.ip) }),
      edge,
      route,
      account,
      url,
      scheme,
      client,
      target: normalized.query ? `${normalized.path}?${normalized.query}` : normalized.path,
      headers: signIn ? withSignIn(forwarded, signIn) : forwarded,
      ...(signIn && signIn.setCookies.length > 0 && { setCookies: signIn.setCookies }),
      ...(breaker && { breaker }),
      compress: Boolean(m.compression?.enabled),
      candidates: backend?.enabled ? candidates({ backends: account.backends, directory, accountId: edge.accountId }, backend.backend_id) : [],
    };
  }

  /** A policy's own answer (deny, custom-response, redirect, …), logged with its rule. */
  function policyAnswer(x: Exchange, refusal: PolicyRefusal, phase: string): void {
    log.info(
      {
        edge_id: x.edge.id,
        route_id: x.route.id,
        account_id: x.edge.accountId,
        client_ip: x.client.ip,
        rule: refusal.rule,
        action: refusal.action,
        phase,
        status: refusal.status,
      },
      'edge: request answered by its traffic policy',
    );
    if (refusal.status >= 400) traffic.refusedByPolicy(refusal.action);
    const headers = refusal.headers.filter(([name]) => name.toLowerCase() !== 'content-length');
    headers.push(['Content-Length', String(Buffer.byteLength(refusal.body))]);
    if (!x.res.headersSent) x.res.writeHead(refusal.status, headers.flat());
    x.res.end(x.req.method === 'HEAD' ? undefined : refusal.body);
  }

  function policyError(x: Admitted, rule: string, problem: string): void {
    log.warn({ edge_id: x.edge.id, route_id: x.route.id, account_id: x.edge.accountId, rule, problem }, 'edge: the traffic policy failed on a request');
    x.breaker?.record(false);
  }

  /**
   * The route's webhook verification: the body read whole (it is sent on from memory) and checked
   * by the provider's scheme (docs/webhooks.md); the refusal to answer with, or undefined. An
   * upgrade has no body to sign: it is checked as an empty one.
   */
  async function checkWebhook(x: Exchange | (Admitted & { req: http.IncomingMessage }), module: WebhookVerificationModule): Promise<IngressError | undefined> {
    const body = 'res' in x ? await readBody(x.req, MAX_WEBHOOK_BODY_BYTES) : Buffer.alloc(0);
    if (!body) {
      if ('res' in x) x.res.shouldKeepAlive = false;
      traffic.refused(EDGE_ERRORS.webhookBodyTooLarge.code);
      return EDGE_ERRORS.webhookBodyTooLarge;
    }
    x.body = body;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(x.req.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
    // The URL as the provider called it: schemes that sign it (Twilio, Square, …) sign what they sent, not its normalized form.
    const request = { method: x.req.method ?? 'GET', url: `${x.url}${x.req.url ?? '/'}`, headers, body };
    const verdict = await verifyWebhook(module.provider, module.secret, request);
    if (verdict.ok) return undefined;
    log.info(
      { edge_id: x.edge.id, route_id: x.route.id, account_id: x.edge.accountId, client_ip: x.client.ip, provider: module.provider, why: verdict.reason },
      'edge: webhook verification refused the request',
    );
    const refused = refusalStatusOf(module.provider) === 401 ? EDGE_ERRORS.webhookUnauthorized : EDGE_ERRORS.webhookRefused;
    traffic.refused(refused.code);
    return refused;
  }

  /**
   * The route's policy on the request (it may change its target and headers, or answer it), then
   * the request headers module: true when the request goes on to its backend.
   */
  async function beforeBackend(
    x: Exchange | (Admitted & { req: http.IncomingMessage }),
    answerWith: (answer: { policy: PolicyRefusal } | { error: IngressError; detail?: string }) => void,
  ): Promise<boolean> {
    const webhook = x.route.modules.webhookVerification;
    if (webhook?.enabled) {
      const refused = await checkWebhook(x, webhook);
      if (refused) {
        x.breaker?.record(false);
        answerWith({ error: refused });
        return false;
      }
    }
    if (x.policy && x.conn) {
      let body = x.body;
      if (!body && x.policy.needsRequestBody && 'res' in x) {
        body = await readBody(x.req, MAX_POLICY_BODY_BYTES);
        if (!body) {
          x.res.shouldKeepAlive = false;
          sendError(x.req, x.res, EDGE_ERRORS.bodyTooLarge, x.url);
          return false;
        }
        x.body = body;
      }
      const request: PolicyRequest = {
        method: x.req.method ?? 'GET',
        scheme: x.scheme,
        host: String(x.req.headers.host ?? ''),
        url: x.target,
        headers: x.headers,
        version: x.req.httpVersion,
        receivedAt: new Date(),
        ...(body && { body }),
      };
      const decision = await x.policy.onRequest(x.conn, request);
      if (decision.kind === 'respond') {
        x.breaker?.record(false);
        answerWith({ policy: decision.response });
        return false;
      }
      if (decision.kind === 'error') {
        policyError(x, decision.rule, decision.problem);
        answerWith({ error: EDGE_ERRORS.policyFailed });
        return false;
      }
      x.target = request.url;
      x.policyRequest = request;
      if (decision.forwardInternal && !toInternal(x, decision.forwardInternal, answerWith)) return false;
    }
    x.headers = applyHeaders(x.headers, x.route.modules.requestHeaders);
    return true;
  }

  /**
   * forward-internal: the request goes to the account's internal endpoint at `to.url` instead of
   * the route's backends; with none online it is answered with an error page (false).
   */
  function toInternal(x: Admitted, to: { url: string; rule: string }, answerWith: (answer: { error: IngressError; detail?: string }) => void): boolean {
    const target = directory.internal(x.edge.accountId, to.url);
    if (target) {
      x.candidates = [{ kind: 'tunnel', backendId: to.url, target }];
      return true;
    }
    log.info({ edge_id: x.edge.id, account_id: x.edge.accountId, rule: to.rule, internal_url: to.url }, 'edge: no internal endpoint online to forward to');
    x.breaker?.record(true);
    answerWith({ error: EDGE_ERRORS.internalOffline, detail: `(${to.url})` });
    return false;
  }

  /** The upstream's (or the backend's own) answer sent on, through the response modules. */
  function answer(x: Exchange, status: number, statusMessage: string | undefined, headers: [string, string][], body: Readable | string) {
    let algorithms: readonly string[] | undefined = x.compress ? ENCODINGS : undefined;
    if (x.policy && x.conn && x.policyRequest) {
      const response = { status, headers };
      const decision = x.policy.onResponse(x.conn, x.policyRequest, response);
      if (decision.kind !== 'continue') {
        // The upstream's answer is not sent: its body is read to its end and dropped.
        if (typeof body !== 'string') body.resume();
        if (decision.kind === 'respond') return policyAnswer(x, decision.response, 'on_http_response');
        policyError(x, decision.rule, decision.problem);
        return sendError(x.req, x.res, EDGE_ERRORS.policyFailed, x.url);
      }
      // A status the policy changed is sent with its own reason phrase.
      if (response.status !== status) statusMessage = undefined;
      status = response.status;
      if (decision.compress) algorithms = [...new Set([...(algorithms ?? []), ...decision.compress])];
    }
    let out = applyHeaders(headers, x.route.modules.responseHeaders);
    for (const cookie of x.setCookies ?? []) out.push(['Set-Cookie', cookie]);
    const encoding = algorithms ? encodingFor(x.req, status, out, algorithms) : undefined;
    if (encoding) {
      out = out.filter(([name]) => name.toLowerCase() !== 'content-length');
      out.push(['Content-Encoding', encoding], ['Vary', 'Accept-Encoding']);
    }
    x.res.writeHead(status, statusMessage, out.flat());
    if (typeof body === 'string') {
      if (!encoding) return void x.res.end(x.req.method === 'HEAD' ? undefined : body);
      const z = compressor(encoding);
      pipeline(z, x.res, () => {});
      return void z.end(body);
    }
    const done = (err: Error | null) => {
      if (err) x.res.destroy();
    };
    if (encoding) pipeline(body, compressor(encoding), x.res, done);
    else relay(body, x.res, () => x.res.destroy());
  }

  /** The request forwarded over `agent` or a connected socket; resolves how it went. */
  /**
   * The request forwarded over `agent`: an agent's tunnel streams, or a keep-alive pool toward a
   * static address. For a static address (`connect`) the body is sent only once a connection is
   * there, so that one refused or timed out (`'refused'`, `'timeout'`) leaves the request whole
   * for the next backend; after that, failures are answered here.
   */
  function forward(
    x: Exchange,
    agent: http.Agent,
    label: Record<string, string>,
    connect?: { host: string; port: number; tls: boolean },
  ): Promise<'done' | 'refused' | 'timeout'> {
    return new Promise((resolve) => {
      const upstream = (connect?.tls ? https : http).request({
        agent,
        ...(connect && { host: connect.host, port: connect.port }),
        method: x.req.method,
        path: x.target,
        headers: x.headers.flat(),
      });
      const sentAt = performance.now();
      let connected = !connect;
      let settled = false;
      const settle = (error: boolean) => {
        if (settled) return;
        settled = true;
        x.breaker?.record(error);
        resolve('done');
      };
      const unreachable = (why: 'refused' | 'timeout') => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearTimeout(connectTimer);
        upstream.destroy();
        resolve(why);
      };
      const sendBody = () => {
        if (x.body) return void upstream.end(x.body);
        if (!hasBody(x.req)) return void upstream.end();
        pipeline(x.req, upstream, (err) => {
          if (err && !settled) upstream.destroy();
        });
      };
      const connectTimer = connect ? setTimeout(() => connected || unreachable('timeout'), tuning.connectTimeoutMs) : undefined;
      if (connect) {
        upstream.once('socket', (socket: net.Socket) => {
          const ready = () => {
            connected = true;
            clearTimeout(connectTimer);
            sendBody();
          };
          // A new connection: once connected (and its TLS done); one kept alive from before: at once.
          if (socket.connecting) socket.once(connect.tls ? 'secureConnect' : 'connect', ready);
          else ready();
        });
      }
      const timer = setTimeout(() => {
        if (x.res.headersSent || settled) return;
        upstream.destroy();
        x.res.shouldKeepAlive = false;
        log.info({ ...label, edge_id: x.edge.id, route_id: x.route.id }, 'edge: the upstream did not answer in time');
        sendError(x.req, x.res, EDGE_ERRORS.timedOut, x.url);
        settle(true);
      }, tuning.responseTimeoutMs);
      upstream.on('error', (err: NodeJS.ErrnoException) => {
        if (!connected) return unreachable('refused');
        clearTimeout(timer);
        if (settled) return;
        upstream.destroy();
        if (x.res.headersSent || x.res.destroyed) {
          x.res.destroy();
          return settle(true);
        }
        const error = connect ? EDGE_ERRORS.unreachable : classify(err);
        log.debug({ ...label, err: err.message, code: error.code }, 'edge: request failed upstream');
        x.res.shouldKeepAlive = false;
        sendError(x.req, x.res, error, x.url);
        settle(true);
      });
      upstream.on('response', (head) => {
        clearTimeout(timer);
        traffic.answered(x.visit.kind, sentAt);
        const status = head.statusCode ?? 502;
        answer(x, status, head.statusMessage, pairs(returnedHeaders(head)), head);
        head.once('end', () => settle(status >= 500));
        head.once('error', () => settle(true));
      });
      x.res.on('close', () => {
        clearTimeout(timer);
        if (!x.res.writableFinished) upstream.destroy();
        settle(!x.res.writableFinished);
      });
      if (!connect) sendBody();
    });
  }

  async function send(x: Exchange, list: Candidate[]): Promise<void> {
    // A cloud endpoint has no backend of its own: what reaches here, its policy did not forward.
    let last: { error: IngressError; detail?: string } = { error: x.edge.cloud ? EDGE_ERRORS.policyNotForwarded : EDGE_ERRORS.noBackend };
    for (const c of list) {
      const label = { backend_id: c.backendId, edge_id: x.edge.id, route_id: x.route.id };
      // An agent endpoint's backend is its tunnel (`agent:<tunnel id>`): logged as the tunnel.
      x.visit.sentTo(c.kind, c.backendId.startsWith('agent:') ? c.backendId.slice('agent:'.length) : c.backendId);
      if (c.kind === 'response') {
        x.breaker?.record(c.status >= 500);
        const headers = Object.entries(c.headers).map(([n, v]): [string, string] => [n, v]);
        if (!headers.some(([n]) => n === 'content-type')) headers.push(['content-type', 'text/plain; charset=utf-8']);
        if (!x.compress) headers.push(['content-length', String(Buffer.byteLength(c.body))]);
        // The request's body is not wanted: drained, so that the connection can serve the next request.
        x.req.resume();
        return answer(x, c.status, undefined, headers, c.body);
      }
      if (c.kind === 'offline') {
        last = { error: INGRESS_ERRORS.endpointOffline };
        continue;
      }
      if (c.kind === 'tunnel') {
        let agent: http.Agent;
        try {
          agent = options.streamsFor(x.req.socket, c.target, x.client.addr);
        } catch {
          last = { error: INGRESS_ERRORS.agentFailed };
          continue;
        }
        await forward(x, agent, label);
        return;
      }
      const outcome = await forward(x, staticAgents.of(c), label, c);
      if (outcome === 'done') return;
      log.info({ ...label, why: outcome }, 'edge: a static address backend could not be reached');
      last = { error: outcome === 'timeout' ? EDGE_ERRORS.timedOut : EDGE_ERRORS.unreachable };
    }
    x.breaker?.record(true);
    x.res.shouldKeepAlive = false;
    sendError(x.req, x.res, last.error, x.url, last.detail);
  }

  return {
    close: () => staticAgents.close(),

    handle(req, res, edge, visit) {
      const admitted = admit(req, edge);
      if ('signIn' in admitted) return sendSignInAnswer(req, res, admitted.signIn, () => this.handle(req, res, edge, visit));
      if ('refused' in admitted) {
        if (visit.kind === 'edge' && admitted.route) visit.route = admitted.route.id;
        if (admitted.refused.status >= 500) res.shouldKeepAlive = false;
        const scheme = schemeOf(edge);
        return sendError(req, res, admitted.refused, `${scheme}://${String(req.headers.host ?? '').toLowerCase()}`, admitted.detail, admitted.headers);
      }
      if (admitted.route.modules.websocketTcpConverter?.enabled) {
        // Not the backend's failure: the breaker's pass is told so.
        admitted.breaker?.record(false);
        req.resume();
        res.shouldKeepAlive = false;
        return sendError(req, res, EDGE_ERRORS.websocketOnly, admitted.url);
      }
      // An agent's or a cloud endpoint's one route is made here: only an edge's route is the API's to name.
      if (visit.kind === 'edge') visit.route = admitted.route.id;
      const x: Exchange = { ...admitted, req, res, visit };
      const onward = async () => {
        const goes = await beforeBackend(x, (answer) => {
          x.req.resume();
          if ('policy' in answer) return policyAnswer(x, answer.policy, 'on_http_request');
          res.shouldKeepAlive = false;
          sendError(req, res, answer.error, x.url, answer.detail);
        });
        if (goes) await send(x, x.candidates);
      };
      void onward().catch((err: unknown) => {
        log.error({ err, edge_id: edge.id }, 'edge: request failed');
        if (!res.headersSent) sendError(req, res, INGRESS_ERRORS.agentFailed, x.url);
        else res.destroy();
      });
    },

    upgrade(req, socket, head, edge, visit) {
      // Answered with raw bytes: node:http no longer reads this connection.
      const fail = (error: IngressError, detail?: string, headers?: Record<string, string>) => {
        visit.status = error.status;
        socket.on('error', () => {});
        const scheme = schemeOf(edge);
        socket.end(rawErrorResponse(error, `${scheme}://${String(req.headers.host ?? '').toLowerCase()}`, req.headers.accept, detail, headers));
      };
      const admitted = admit(req, edge, true);
      if ('signIn' in admitted) return rawSignInAnswer(socket, admitted.signIn, () => this.upgrade(req, socket, head, edge, visit));
      if (visit.kind === 'edge' && 'route' in admitted && admitted.route) visit.route = admitted.route.id;
      if ('refused' in admitted) return fail(admitted.refused, admitted.detail, admitted.headers);
      // One object through it all: the policy and the request headers module change its target and headers.
      const x = { ...admitted, req, visit };
      void beforeBackend(x, (answer) => {
        if ('error' in answer) return fail(answer.error, answer.detail);
        const refusal = answer.policy;
        visit.status = refusal.status;
        if (refusal.status >= 400) traffic.refusedByPolicy(refusal.action);
        socket.on('error', () => {});
        let text = `HTTP/1.1 ${refusal.status} ${http.STATUS_CODES[refusal.status] ?? 'Error'}\r\n`;
        for (const [name, value] of refusal.headers) if (name.toLowerCase() !== 'content-length') text += `${name}: ${value}\r\n`;
        socket.end(`${text}Content-Length: ${Buffer.byteLength(refusal.body)}\r\nConnection: close\r\n\r\n${refusal.body}`);
      })
        .then(async (goes) => {
          if (!goes) return;
          if (x.route.modules.websocketTcpConverter?.enabled) return convertWebSocket(x, req, socket, head, fail);
          connectUpgrade(x, req, socket, head, fail);
        })
        .catch((err: unknown) => {
          log.error({ err, edge_id: edge.id }, 'edge: upgrade failed');
          socket.destroy();
        });
    },
  };

  async function convertWebSocket(
    x: Admitted & { visit: Visit },
    req: http.IncomingMessage,
    socket: Duplex,
    head: Buffer,
    fail: (error: IngressError) => void,
  ): Promise<void> {
    const stream = await openBackendStream(x.candidates, x.client.addr, {
      connectTimeoutMs: tuning.connectTimeoutMs,
      backendCa: options.backendCa,
      log,
      edgeId: x.edge.id,
      visit: x.visit,
    });
    if (!stream) {
      x.breaker?.record(true);
      return fail(x.candidates.some((c) => c.kind === 'offline') ? INGRESS_ERRORS.endpointOffline : EDGE_ERRORS.unreachable);
    }
    if (socket.destroyed) return void stream.destroy();
    req.socket.setTimeout(0);
    req.socket.setKeepAlive(true, 30_000);
    let upgraded = false;
    // A handshake ws refuses (answered 400) closes the client's socket: the backend's stream goes too.
    socket.once('close', () => upgraded || stream.destroy());
    webSockets.handleUpgrade(req, socket, head, (ws) => {
      upgraded = true;
      x.visit.status = 101;
      x.breaker?.record(false);
      joinStreams(createWebSocketStream(ws), stream);
    });
  }

  /** An upgrade (a WebSocket) that the route let through: its head to the agent, then its bytes both ways. */
  function connectUpgrade(x: Admitted & { visit: Visit }, req: http.IncomingMessage, socket: Duplex, head: Buffer, fail: (error: IngressError) => void): void {
    const tunnel = x.candidates.find((c): c is Extract<Candidate, { kind: 'tunnel' }> => c.kind === 'tunnel');
    let stream: Duplex | undefined;
    try {
      stream = tunnel?.target.connect(x.client.addr);
    } catch {
      stream = undefined;
    }
    if (!stream) {
      x.breaker?.record(true);
      if (!tunnel) return fail(x.candidates.some((c) => c.kind === 'offline') ? INGRESS_ERRORS.endpointOffline : EDGE_ERRORS.unreachable);
      return fail(INGRESS_ERRORS.agentFailed);
    }
    x.visit.sentTo('tunnel', tunnel!.backendId.startsWith('agent:') ? tunnel!.target.tunnelId : tunnel!.backendId);
    // The upstream's first bytes say how it answered (101, or a refusal of its own); read in the same turn as the join, they reach the client too.
    stream.once('data', (chunk: Buffer) => x.visit.answeredWith(chunk));
    const raw = req.socket;
    raw.setTimeout(0);
    raw.setKeepAlive(true, 30_000);
    let text = `${req.method} ${x.target} HTTP/1.1\r\n`;
    for (const [name, value] of x.headers) text += `${name}: ${value}\r\n`;
    stream.write(text + '\r\n');
    if (head.length > 0) stream.write(head);
    joinStreams(socket, stream);
    x.breaker?.record(false);
  }
}
