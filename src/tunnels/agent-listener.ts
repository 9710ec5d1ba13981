// The agent listener: ngrok agents dial in over TLS (no ALPN) and run a muxado session in which
// they authenticate (Auth, type 0) with a credential's authtoken, then bind endpoints (Bind) and
// labeled tunnels (StartTunnelWithLabel); public connections reach them as Proxy streams the
// server opens. A broken rule (malformed frame, invalid JSON) ends that session only; every
// wait has a timeout and every count a bound (docs/agent-protocol.md, "The listener").
import { createHmac } from 'node:crypto';
import net, { type AddressInfo } from 'node:net';
import tls from 'node:tls';
import type { Logger } from 'pino';
import type { Store } from '../db/store.js';
import { AgentProtoError } from '../lib/agent-proto/json.js';
import {
  encodeAuthResp,
  encodeBindResp,
  encodeErrorResp,
  encodeStartTunnelWithLabelResp,
  encodeUnbindResp,
  PROTOCOL_VERSIONS,
  StreamType,
  type AgentRequest,
  type Auth,
  type Bind,
  type StartTunnelWithLabel,
} from '../lib/agent-proto/messages.js';
import { encodeProxyStreamHeader, encodeStreamType, RequestStreamReader } from '../lib/agent-proto/streams.js';
import { ErrorCode, MuxadoError } from '../lib/muxado/frame.js';
import { Session, type MuxadoStream } from '../lib/muxado/session.js';
import { acceptTyped, startHeartbeat } from '../lib/muxado/typed.js';
import { authenticateAgentToken, looksLikeAgentToken, usableCredentialIds, type AgentCredential } from '../resources/credentials/credential.token.js';
import { BIND_ERRORS, BindRefused, placeBind, placeLabeled, sealBindOptions, type BindSettings, type Placement } from './binds.js';
import type { TunnelTarget } from '../core/live-agents.js';
import { sameCookie, type AgentSessionInfo, type AgentSessionRegistry, type SessionHandle } from './registry.js';
import type { RouteClaims } from './claims.js';
import type { TcpIngress } from './tcp-ingress.js';
import { checkCredentials, definedOnly, listenOn, stopsAccepting } from './listening.js';

/** ngrok's own codes, which the SDKs surface as the error's code (ngrok.com/docs/errors). */
export const AGENT_ERRORS = {
  /** The authtoken does not have the form of one. */
  authtokenMalformed: 'ERR_NGROK_105',
  /** The authtoken is properly formed but invalid (unknown, deleted, its owner gone). */
  authtokenInvalid: 'ERR_NGROK_107',
  /** The account's limit of simultaneous agent sessions is reached. */
  tooManySessions: 'ERR_NGROK_108',
} as const;

export interface AgentListenerTuning {
  /** From the TCP connection to a successful Auth reply; past it the connection is dropped. */
  authTimeoutMs?: number;
  /** How long a request's JSON may take to arrive once its stream is open. */
  requestTimeoutMs?: number;
  /** The server's own heartbeat; a session is dropped after `heartbeatMisses` intervals without an echo. */
  heartbeatIntervalMs?: number;
  heartbeatMisses?: number;
  /** Connections that have not authenticated yet, per process; more are closed at once. */
  maxUnauthenticated?: number;
  /** Live sessions per account; the next Auth gets ERR_NGROK_108. */
  maxSessionsPerAccount?: number;
  /** How often the live sessions' credentials are checked again (gone or made unusable: the sessions end). */
  credentialCheckMs?: number;
  /** Requests (Bind, Unbind…) one session may have in flight at once. */
  maxRequestsInFlight?: number;
}

export const AGENT_LISTENER_DEFAULTS: Required<AgentListenerTuning> = {
  authTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  heartbeatIntervalMs: 10_000,
  heartbeatMisses: 3,
  maxUnauthenticated: 256,
  maxSessionsPerAccount: 100,
  credentialCheckMs: 10_000,
  maxRequestsInFlight: 16,
};

export interface AgentListenerOptions extends AgentListenerTuning {
  host: string;
  port: number;
  tls: { cert: string; key: string };
  /** The certificate for a TLS server name (an agent ingress's own); the default `tls` without it. */
  certificateFor?: (serverName: string) => Promise<tls.SecureContext>;
  store: Store;
  log: Logger;
  registry: AgentSessionRegistry;
  binds: BindSettings;
  tcp: TcpIngress;
  claims: RouteClaims;
}

export interface AgentListener {
  address: AddressInfo;
  /** Stops accepting agents (a drain began); the sessions go on, serving the streams in flight. */
  stopAccepting(): void;
  /** Stops accepting agents and ends every session. */
  close(): Promise<void>;
}

export async function startAgentListener(options: AgentListenerOptions): Promise<AgentListener> {
  const tuning = { ...AGENT_LISTENER_DEFAULTS, ...definedOnly(options) };
  const { log, registry } = options;
  const unauthenticated = new Set<net.Socket>();
  const sockets = new Set<net.Socket>();

  // TLS over our own TCP server, so that the raw connection and its TLS socket are one record:
  // the bound on unauthenticated connections and the auth timeout count from the TCP accept.
  const secureContext = tls.createSecureContext({ cert: options.tls.cert, key: options.tls.key });
  const server = net.createServer((raw) => {
    if (unauthenticated.size >= tuning.maxUnauthenticated) {
      log.warn({ limit: tuning.maxUnauthenticated, ip: raw.remoteAddress }, 'agent connection refused: too many connections waiting to authenticate');
      raw.destroy();
      return;
    }
    unauthenticated.add(raw);
    sockets.add(raw);
    const ip = raw.remoteAddress ?? '';
    // Covers the TLS handshake and the Auth exchange alike.
    const timer = setTimeout(() => {
      if (unauthenticated.has(raw)) raw.destroy();
    }, tuning.authTimeoutMs);
    timer.unref();
    raw.on('error', () => {}); // the TLS socket over it reports, once
    raw.once('close', () => {
      clearTimeout(timer);
      unauthenticated.delete(raw);
      sockets.delete(raw);
    });
    // Small frames (a Bind reply, a proxied request) must not wait for the previous one's ACK.
    raw.setNoDelay(true);
    const certificateFor = options.certificateFor;
    const socket = new tls.TLSSocket(raw, {
      isServer: true,
      secureContext,
      ...(certificateFor && {
        SNICallback: (name: string, done: (err: Error | null, context?: tls.SecureContext) => void) => {
          certificateFor(name.toLowerCase()).then(
            (context) => done(null, context),
            () => done(null, secureContext),
          );
        },
      }),
    });
    let secured = false;
    socket.on('error', (err) => {
      if (!secured) log.debug({ err: err.message, ip }, 'agent TLS handshake failed');
      socket.destroy();
    });
    socket.once('secure', () => {
      secured = true;
      serveAgent(socket, ip, {
        tuning,
        store: options.store,
        log,
        registry,
        binds: options.binds,
        tcp: options.tcp,
        claims: options.claims,
        authenticated: () => unauthenticated.delete(raw),
      });
    });
  });

  await listenOn(server, options.host, options.port);
  server.on('error', (err) => log.error({ err }, 'agent listener error'));
  // Made now: once it stops accepting, the server emits 'close' when its last agent's connection ends.
  const closed = new Promise<void>((resolve) => server.once('close', () => resolve()));
  const stopAccepting = stopsAccepting(server);
  const stopChecking = checkCredentials({
    registry,
    everyMs: tuning.credentialCheckMs,
    log,
    // The SSH listener checks its own (SSH credentials, SSH CAs).
    ours: (id) => id.startsWith('cr_'),
    usable: (ids) => usableCredentialIds(options.store, ids),
    reason: 'the credential was deleted or can no longer be used',
  });

  return {
    address: server.address() as AddressInfo,
    stopAccepting,
    async close() {
      stopChecking();
      stopAccepting();
      registry.endAll('the server is shutting down');
      options.tcp.close();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

interface ServeContext {
  tuning: Required<AgentListenerTuning>;
  store: Store;
  log: Logger;
  registry: AgentSessionRegistry;
  binds: BindSettings;
  tcp: TcpIngress;
  claims: RouteClaims;
  authenticated: () => void;
}

/** The version both speak, best first; undefined when none. */
export function chooseVersion(offered: readonly string[]): string | undefined {
  return PROTOCOL_VERSIONS.find((v) => offered.includes(v));
}

/** One agent connection: its muxado session, its Auth, then its requests. */
function serveAgent(socket: tls.TLSSocket, ip: string, ctx: ServeContext): void {
  const { tuning, log, registry } = ctx;
  const session = new Session(socket, { role: 'server', acknowledgeWindowUpdates: true });
  let info: AgentSessionInfo | undefined;
  let authStarted = false;
  let inFlight = 0;
  /** Why edgeplane ended the session, when it did (a clean GOAWAY carries no reason to `close`). */
  let endedBecause: string | undefined;

  session.on('error', (err) => log.debug({ err: err.message, ip, session_id: info?.id }, 'agent session broke a protocol rule'));
  session.on('close', (reason) => {
    if (!info) return;
    registry.remove(info);
    log.info(
      {
        session_id: info.id,
        account_id: info.accountId,
        ip,
        seconds: Math.round((Date.now() - info.startedAt.getTime()) / 1000),
        reason: endedBecause ?? reason?.message ?? 'the agent hung up',
      },
      'agent session ended',
    );
  });

  /** A broken rule in a request: that session ends, with the reason in the GOAWAY. */
  const fail = (err: unknown): void => {
    const message = err instanceof Error ? err.message : String(err);
    log.debug({ err: message, ip, session_id: info?.id }, 'agent session closed on a bad request');
    session.goAway(err instanceof AgentProtoError ? ErrorCode.protocol : ErrorCode.internal, message);
  };

  acceptTyped(session, {
    typeTimeoutMs: tuning.requestTimeoutMs,
    onStream(type, stream) {
      // Requests a session may have in flight at once (each may read the store); more are answered at once.
      if (inFlight >= tuning.maxRequestsInFlight) {
        stream.on('error', () => {});
        reply(stream, encodeErrorResp(`Too many requests at once: a session may have ${tuning.maxRequestsInFlight} in flight.`, BIND_ERRORS.tooManyRequests));
        return;
      }
      inFlight++;
      readRequest(stream, type, tuning.requestTimeoutMs)
        .then(async (request) => {
          if (request.type === StreamType.auth) {
            if (authStarted) return reply(stream, encodeErrorResp('this session is already authenticated'));
            authStarted = true;
            const started = await authenticate(request.message, stream, ip, ctx, session, (why) => {
              endedBecause = why;
              session.goAway(ErrorCode.none, why);
            });
            if (!started) return;
            info = started;
            ctx.authenticated();
            startHeartbeat(session, {
              intervalMs: tuning.heartbeatIntervalMs,
              timeoutMs: tuning.heartbeatIntervalMs * tuning.heartbeatMisses,
              onlyWhenQuiet: true,
            });
            return;
          }
          if (!info) {
            reply(stream, encodeErrorResp('authenticate first: the first request of a session is Auth'));
            session.goAway(ErrorCode.protocol, 'request before Auth');
            return;
          }
          await serveRequest(request, stream, info, session, ctx);
        })
        .catch(fail)
        .finally(() => inFlight--);
    },
  });
}

/** A Bind, Unbind or StartTunnelWithLabel of an authenticated session, answered on its stream. */
async function serveRequest(request: AgentRequest, stream: MuxadoStream, info: AgentSessionInfo, session: Session, ctx: ServeContext): Promise<void> {
  const { registry, log } = ctx;
  if (request.type === StreamType.unbind) {
    // The agent may send it more than once: each is answered as done.
    const held = registry.tunnel(request.message.id);
    if (held?.live.sessionId === info.id) registry.removeTunnel(held.live.id);
    reply(stream, encodeUnbindResp());
    return;
  }
  if (request.type !== StreamType.bind && request.type !== StreamType.startTunnelWithLabel) return;
  try {
    const placement = await placeForSession(
      request.type === StreamType.bind ? { kind: 'bind', bind: request.message } : { kind: 'labeled', request: request.message },
      info,
      ctx,
    );
    if (session.closed || registry.infoOf(info.id) !== info) return;
    const target = proxyTarget(placement, { end: () => {}, open: () => registry.proxyStream(session.open()) });
    await holdTunnel(placement, target, () => session.closed || registry.infoOf(info.id) !== info, ctx);
    if (request.type === StreamType.bind) answerBind(request.message, placement, stream);
    else answerLabeled(request.message, placement, stream);
    log.info(
      { session_id: info.id, account_id: info.accountId, tunnel_id: placement.live.id, url: placement.live.endpoint?.publicUrl, labels: placement.live.labels },
      'agent tunnel started',
    );
  } catch (err) {
    if (!(err instanceof BindRefused)) throw err;
    log.info({ session_id: info.id, account_id: info.accountId, code: err.errorCode, reason: err.message }, 'agent bind refused');
    reply(stream, encodeErrorResp(err.message, err.errorCode));
  }
}

/** A bind, or a labeled tunnel, as a session asks for it (the agent's Bind or StartTunnelWithLabel, or what an ssh command makes). */
export type TunnelRequest = { kind: 'bind'; bind: Bind } | { kind: 'labeled'; request: StartTunnelWithLabel };

/**
 * Places a session's request (binds.ts) with this process's counts and ports; a bind's options
 * are sealed into its record for the other instances. BindRefused says why not. Shared with the
 * SSH listener.
 */
export async function placeForSession(
  request: TunnelRequest,
  info: AgentSessionInfo,
  ctx: Pick<ServeContext, 'store' | 'binds' | 'tcp' | 'registry'>,
): Promise<Placement> {
  const { registry } = ctx;
  const placeOptions = {
    store: ctx.store,
    settings: ctx.binds,
    session: { id: info.id, accountId: info.accountId, credentialId: info.credentialId },
    tcpPortFree: (port: number) => ctx.tcp.isFree(port),
    tcpPortBindable: (port: number) => ctx.tcp.bindable(port),
    counts: { session: registry.tunnelsOf(info.id).length, account: registry.tunnelCount(info.accountId) },
  };
  if (request.kind === 'labeled') return placeLabeled(request.request, placeOptions);
  const placement = await placeBind(request.bind, placeOptions);
  if (placement.modules) {
    const sealed = sealBindOptions(request.bind, placement.live.id, ctx.binds);
    if (sealed !== undefined) placement.live.sealedOptions = sealed;
  }
  return placement;
}

/** What holding a tunnel needs of a listener: the registry, the route claims, the TCP endpoints. */
export type HoldContext = Pick<ServeContext, 'registry' | 'claims' | 'tcp'>;

/**
 * Records a placed tunnel in the registry (and opens its TCP port); BindRefused when its route is
 * taken. `gone`: whether its session ended meanwhile. Shared with the SSH listener.
 */
export async function holdTunnel(placement: Placement, target: TunnelTarget, gone: () => boolean, ctx: HoldContext): Promise<void> {
  const { registry } = ctx;
  // The same URL (or labels) twice in one session: its id would be the same; ngrok refuses it too.
  if (registry.tunnel(placement.live.id))
    throw new BindRefused(
      `This session already has that tunnel online (${placement.live.endpoint?.publicUrl ?? 'the same labels'}).`,
      BIND_ERRORS.alreadyOnline,
    );
  if (placement.route !== undefined) {
    const taken = registry.conflict(placement.route, placement.pooling);
    if (taken)
      throw new BindRefused(
        `The endpoint '${placement.live.endpoint?.publicUrl ?? placement.route}' is already online. Stop it first, or start both with pooling enabled.`,
        BIND_ERRORS.alreadyOnline,
      );
  }
  const { route } = placement;
  // Across instances: the route is this tunnel's once its claim commits.
  if (route !== undefined) {
    let heldBy: string | undefined;
    try {
      heldBy = await ctx.claims.claim(route, placement.live.id, placement.pooling);
    } catch {
      throw new BindRefused('Whether the URL is free could not be checked right now (the store did not answer); try again.', BIND_ERRORS.unavailable);
    }
    if (heldBy !== undefined)
      throw new BindRefused(
        `The endpoint '${placement.live.endpoint?.publicUrl ?? route}' is already online. Stop it first, or start both with pooling enabled.`,
        BIND_ERRORS.alreadyOnline,
      );
  }
  const releaseClaim = () => {
    if (route !== undefined) ctx.claims.release(route, placement.live.id);
  };
  let closePort: (() => void) | undefined;
  if (placement.tcpPort !== undefined) {
    try {
      closePort = await ctx.tcp.listen(placement.tcpPort, target);
    } catch (err) {
      releaseClaim();
      throw new BindRefused(`The address could not be listened on: ${(err as Error).message}`, BIND_ERRORS.unavailable);
    }
  }
  const release = () => {
    closePort?.();
    releaseClaim();
  };
  // The session ended, or a concurrent bind of the same route got here first, while we waited.
  if (gone() || (route !== undefined && registry.conflict(route, placement.pooling)) || registry.tunnel(placement.live.id)) {
    release();
    throw new BindRefused(gone() ? 'the session ended' : 'The endpoint is already online.', gone() ? BIND_ERRORS.unavailable : BIND_ERRORS.alreadyOnline);
  }
  registry.addTunnel({ live: placement.live, target, pooling: placement.pooling, release, ...(route !== undefined && { route }) });
}

function answerBind(bind: Bind, placement: Placement, stream: MuxadoStream): void {
  const base = { id: placement.live.id, url: placement.live.endpoint!.publicUrl, extra: { token: placement.token } };
  reply(
    stream,
    encodeBindResp(
      bind.proto === 'tcp'
        ? { ...base, proto: 'tcp', opts: bind.opts }
        : bind.proto === 'tls'
          ? { ...base, proto: 'tls', opts: bind.opts }
          : { ...base, proto: bind.proto, opts: bind.opts },
    ),
  );
}

function answerLabeled(_request: StartTunnelWithLabel, placement: Placement, stream: MuxadoStream): void {
  reply(stream, encodeStartTunnelWithLabelResp({ id: placement.live.id }));
}

/** Where public connections for a tunnel go: a new stream of its session, opened with the Proxy header. */
function proxyTarget(placement: Placement, handle: SessionHandle): TunnelTarget {
  const { live } = placement;
  const proto = live.endpoint?.proto ?? 'https';
  return tunnelTarget(placement, (clientAddr) => {
    const stream = handle.open();
    stream.write(encodeProxyStreamHeader({ id: live.id, clientAddr, proto, edgeType: '0', passthroughTls: proto === 'tls' }));
    return stream;
  });
}

/** A placed tunnel's target, its public connections made by `connect` (the agent listener's Proxy streams, the SSH listener's channels). */
export function tunnelTarget(placement: Placement, connect: TunnelTarget['connect']): TunnelTarget {
  const { live, modules } = placement;
  const proto = live.endpoint?.proto ?? 'https';
  const endpoint = live.endpoint;
  return {
    tunnelId: live.id,
    accountId: live.accountId,
    proto,
    ...(endpoint && {
      endpoint: {
        id: endpoint.id,
        ...(endpoint.domainId !== undefined && { domainId: endpoint.domainId }),
        ...(endpoint.tcpAddrId !== undefined && { tcpAddrId: endpoint.tcpAddrId }),
        ...(modules && { modules }),
      },
    }),
    connect,
  };
}

/** Writes the reply JSON then FIN; what the agent still sends on the stream is drained. */
function reply(stream: MuxadoStream, json: string): void {
  stream.end(json);
  stream.resume();
}

/**
 * Checks the Auth and answers it: the session's record, or undefined when it was refused (the
 * reply says why, then the session closes).
 */
async function authenticate(
  auth: Auth,
  stream: MuxadoStream,
  ip: string,
  ctx: ServeContext,
  session: Session,
  end: (reason: string) => void,
): Promise<AgentSessionInfo | undefined> {
  const { log, registry, tuning } = ctx;
  const refuse = (message: string, code?: string): undefined => {
    reply(stream, encodeErrorResp(message, code));
    // The reply goes out before the goodbye; the agent reads it to its FIN.
    session.goAway(ErrorCode.none, message);
    return undefined;
  };
  const version = chooseVersion(auth.version);
  if (!version) return refuse(`no protocol version in common: edgeplane speaks ${PROTOCOL_VERSIONS.join(', ')}`);
  if (!looksLikeAgentToken(auth.extra.authToken)) {
    log.info({ ip }, 'agent refused: authtoken malformed');
    return refuse('The authtoken you specified does not look like a proper authtoken: give the token of a credential.', AGENT_ERRORS.authtokenMalformed);
  }
  let credential: AgentCredential | undefined;
  try {
    credential = await authenticateAgentToken(ctx.store, auth.extra.authToken);
  } catch (err) {
    log.error({ err, ip }, 'agent authentication failed on the store');
    return refuse('authentication is unavailable right now; try again');
  }
  if (session.closed) return undefined;
  if (!credential) {
    log.info({ ip }, 'agent refused: authtoken invalid');
    return refuse('The authtoken you specified is properly formed, but it is invalid (unknown or deleted).', AGENT_ERRORS.authtokenInvalid);
  }
  let { id, resumed } = registry.sessionIdFor(credential.id, auth.clientId, auth.extra.cookie);
  // A session of another instance (one that stopped, died or drained): its cookie is any
  // instance's to check, so it resumes here with its id, and its tunnels with theirs (their
  // route claims pass to this instance, and random names come back with their tokens).
  if (!resumed && auth.clientId !== '' && sameCookie(sessionCookie(ctx.binds.bindKey, auth.clientId, credential.id), auth.extra.cookie))
    ({ id, resumed } = { id: auth.clientId, resumed: true });
  const others = registry.list(credential.accountId).filter((s) => s.id !== id).length;
  if (others >= tuning.maxSessionsPerAccount) {
    log.info({ account_id: credential.accountId, limit: tuning.maxSessionsPerAccount, ip }, 'agent refused: too many sessions');
    return refuse(`Your account is limited to ${tuning.maxSessionsPerAccount} simultaneous agent sessions.`, AGENT_ERRORS.tooManySessions);
  }
  const info: AgentSessionInfo = {
    id,
    accountId: credential.accountId,
    credentialId: credential.id,
    os: auth.extra.os,
    version: auth.extra.version,
    clientType: auth.extra.clientType,
    metadata: auth.extra.metadata,
    ip,
    startedAt: new Date(),
    cookie: sessionCookie(ctx.binds.bindKey, id, credential.id),
    unsupported: { restart: auth.extra.restartUnsupportedError, stop: auth.extra.stopUnsupportedError, update: auth.extra.updateUnsupportedError },
  };
  registry.add(info, { end, open: () => session.open() });
  reply(stream, encodeAuthResp({ version, clientId: id, extra: { version, cookie: info.cookie } }));
  log.info(
    { session_id: id, account_id: info.accountId, credential_id: info.credentialId, ip, os: info.os, agent_version: info.version, resumed },
    'agent session started',
  );
  return info;
}

/**
 * The cookie of a session's Auth reply, which the agent presents to resume it: a MAC of the
 * session and its credential under a key every instance derives from the master key, so any
 * instance can check it and none can be given a cookie it did not make.
 */
export function sessionCookie(key: Buffer, sessionId: string, credentialId: string): string {
  return createHmac('sha256', key).update(`edgeplane session cookie\n${sessionId}\n${credentialId}`).digest('base64url');
}

/**
 * Reads one request (its type is already read) within `timeoutMs`: bounded by the reader's
 * limits, refused with AgentProtoError when malformed, MuxadoError when late or cut off.
 */
export function readRequest(stream: MuxadoStream, type: number, timeoutMs: number): Promise<AgentRequest> {
  return new Promise((resolve, reject) => {
    const reader = new RequestStreamReader();
    let settled = false;
    const done = (error: unknown, request?: AgentRequest): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('close', onClose);
      if (error) return reject(error);
      stream.pause();
      resolve(request!);
    };
    const push = (chunk: Buffer): void => {
      try {
        const start = reader.push(chunk);
        if (start?.kind === 'request') done(null, start.request);
        else if (start) done(new AgentProtoError('unknown_stream_type', 'a heartbeat is not a request'));
      } catch (err) {
        done(err);
      }
    };
    const onData = (chunk: Buffer): void => push(chunk);
    const onEnd = (): void => {
      try {
        reader.end();
      } catch (err) {
        done(err);
      }
    };
    const onClose = (): void => done(new MuxadoError(`stream ${stream.id} closed before its request`, ErrorCode.streamClosed));
    const timer = setTimeout(() => done(new MuxadoError(`stream ${stream.id}: no complete request within ${timeoutMs} ms`, ErrorCode.writeTimeout)), timeoutMs);
    push(encodeStreamType(type));
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('close', onClose);
    stream.resume();
  });
}
