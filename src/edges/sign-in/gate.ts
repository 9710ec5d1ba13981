// The sign-in gate of HTTPS edge routes (oauth, oidc, saml modules): it lets a request with a
// valid session through with the user's identity in headers, sends a browser without one to its
// identity provider, answers 401 to anything else, and serves the edge's own paths under
// SIGN_IN_PATH (the provider's callback, the API host's handoff, sign-out). A decision that needs
// the provider (a redirect, a callback, an auth check) is pending: edge-http waits for it and asks
// again, and gets it then; no decision takes longer than the timeout.
import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { OAuthValue, OidcValue, SamlValue } from '../../edge-config/modules/sign-in-modules.js';
import type { Sealer } from '../../lib/crypto/sealer.js';
import { EDGE_ERRORS, errorBody, type IngressError } from '../errors.js';
import type { HttpsEdge, HttpsRoute } from '../edge-config.js';
import {
  CALLBACK_PATH,
  HANDOFF_PATH,
  SIGN_IN_PATH,
  SIGN_OUT_PATH,
  type SignInContext,
  type SignInFailure,
  type SignInMethod,
  type SignInMethods,
} from './method.js';
import {
  ownerOfState,
  parseCookies,
  sessionCookieName,
  SignInCookies,
  stateCookieName,
  type Identity,
  type Session,
  type SignInMethodName,
} from './session.js';

/** The identity headers an upstream gets (ngrok's names); any a client sends on a sign-in route are dropped. */
export const IDENTITY_HEADERS = { email: 'ngrok-auth-user-email', id: 'ngrok-auth-user-id', name: 'ngrok-auth-user-name' } as const;
const CLIENT_IDENTITY = /^ngrok-auth-user-/i;

export interface SignInGateOptions {
  sealer: Sealer;
  log: Logger;
  methods: SignInMethods;
  /** Milliseconds a step that asks the identity provider may take in all (default 10 s). */
  timeoutMs: number;
  /** The session clock (milliseconds since the epoch); tests move it. */
  now?: () => number;
}

/** Where a request stands with the route's sign-in. */
export type SignInDecision =
  /** On to the upstream, with the identity (none for a passed-through OPTIONS) and cookies to set on the answer. */
  | { kind: 'pass'; identity?: Identity; setCookies: string[]; ownCookies: string[] }
  /** The gate's own answer: a redirect, an error page, a callback's end. */
  | { kind: 'answer'; status: number; headers: [string, string][]; body: string }
  /** Ask again once `settled` resolves (it never rejects). */
  | { kind: 'pending'; settled: Promise<void> };

export type SignInPass = Extract<SignInDecision, { kind: 'pass' }>;

/** Where a request is: the host it came to, its normalized path and query, and whether it is an upgrade. */
export interface SignInRequest {
  host: string;
  path: string;
  query: string;
  upgrade: boolean;
}

type SignInModule = OAuthValue | OidcValue | SamlValue;
type Found = { name: SignInMethodName; module: SignInModule };

/** The route's sign-in module, when one is on. */
function signInOf(route: HttpsRoute): Found | undefined {
  const m = route.modules;
  if (m.oauth?.enabled) return { name: 'oauth', module: m.oauth };
  if (m.oidc?.enabled) return { name: 'oidc', module: m.oidc };
  if (m.saml?.enabled) return { name: 'saml', module: m.saml };
  return undefined;
}

/** A header value as bytes of UTF-8 (a name need not be Latin-1), without control characters. */
const headerValue = (text: string) => Buffer.from(text.replace(/\p{Cc}/gu, ''), 'utf8').toString('latin1');

/**
 * The upstream's headers for a request the gate passed: the client's identity headers dropped,
 * the gate's own cookies taken out of Cookie, and the identity added.
 */
export function withSignIn(headers: [string, string][], pass: SignInPass): [string, string][] {
  const own = new Set(pass.ownCookies);
  const out: [string, string][] = [];
  for (const [name, value] of headers) {
    if (CLIENT_IDENTITY.test(name)) continue;
    if (name.toLowerCase() !== 'cookie') {
      out.push([name, value]);
      continue;
    }
    const kept = value
      .split(';')
      .map((c) => c.trim())
      .filter((c) => c !== '' && !own.has(c.slice(0, Math.max(0, c.indexOf('=')))));
    if (kept.length > 0) out.push([name, kept.join('; ')]);
  }
  const identity = pass.identity;
  if (identity) {
    out.push([IDENTITY_HEADERS.id, headerValue(identity.subject)]);
    if (identity.email !== undefined) out.push([IDENTITY_HEADERS.email, headerValue(identity.email)]);
    if (identity.name !== undefined) out.push([IDENTITY_HEADERS.name, headerValue(identity.name)]);
  }
  return out;
}

/** A path and query to go back to: on this host only. */
const localTarget = (target: string) => (target.startsWith('/') && !target.startsWith('//') && !target.startsWith('/\\') ? target : '/');

export class SignInGate {
  readonly cookies: SignInCookies;
  private readonly decided = new WeakMap<http.IncomingMessage, SignInDecision>();
  private readonly log: Logger;

  constructor(private readonly options: SignInGateOptions) {
    this.cookies = new SignInCookies(options.sealer, options.now);
    this.log = options.log;
  }

  /**
   * The route that serves a path under SIGN_IN_PATH: the edge's sign-in route (one route of an
   * edge at most has one; the `state` or `route` parameter picks among several). Undefined for
   * other paths, or when no route of the edge signs users in: those are routed as usual.
   */
  routeFor(edge: HttpsEdge, path: string, query: string): HttpsRoute | undefined {
    if (!path.startsWith(`${SIGN_IN_PATH}/`)) return undefined;
    const routes = edge.routes.filter((r) => signInOf(r));
    if (routes.length <= 1) return routes[0];
    const params = new URLSearchParams(query);
    const named = params.get('route') ?? ownerOfState(params.get('state') ?? '');
    return routes.find((r) => r.id === named) ?? routes[0];
  }

  /** The decision for a request to `route`; undefined when the route signs no one in. */
  check(req: http.IncomingMessage, route: HttpsRoute, at: SignInRequest): SignInDecision | undefined {
    const decided = this.decided.get(req);
    if (decided) {
      this.decided.delete(req);
      return decided;
    }
    const found = signInOf(route);
    if (!found) return undefined;
    const method = this.options.methods[found.name] as SignInMethod<SignInModule> | undefined;
    if (!method) return this.error(req, at, route, EDGE_ERRORS.signInBroken, `module ${found.name} has no method here`);
    const ctx: SignInContext<SignInModule> = {
      route,
      module: found.module,
      host: at.host,
      timeoutMs: this.options.timeoutMs,
      sealer: this.options.sealer,
      cookies: this.cookies,
      log: this.log,
    };
    const cookies = parseCookies(req.headers.cookie);
    if (at.path.startsWith(`${SIGN_IN_PATH}/`)) return this.later(req, at, route, () => this.ownPath(req, at, ctx, method, cookies));
    const ownCookies = [sessionCookieName(found.module), stateCookieName(found.module)];
    if (found.module.options_passthrough && req.method === 'OPTIONS') return { kind: 'pass', setCookies: [], ownCookies };
    const read = this.cookies.readSession(route.id, found.module, cookies);
    if (read.kind === 'valid') {
      const session = read.session;
      const interval = method.checkInterval?.(found.module) ?? 0;
      if (interval > 0 && method.recheck && this.cookies.now() - session.checkedAt >= interval * 1000)
        return this.later(req, at, route, () => this.recheck(req, at, ctx, method, session, cookies));
      const touched = this.cookies.touch(found.module, session);
      return { kind: 'pass', identity: session.identity, setCookies: touched ? [touched] : [], ownCookies };
    }
    if (read.kind !== 'none') this.log.info({ route_id: route.id, method: found.name, why: read.kind }, 'edge: session cookie refused');
    return this.signInNeeded(req, at, ctx, method, cookies, read.kind === 'none' ? [] : [this.cookies.clearSession(found.module)]);
  }

  /** No valid session: a browser's GET goes to the provider; anything else (an API client, an upgrade) is 401. */
  private signInNeeded(
    req: http.IncomingMessage,
    at: SignInRequest,
    ctx: SignInContext<SignInModule>,
    method: SignInMethod<SignInModule>,
    cookies: ReadonlyMap<string, string>,
    setCookies: string[],
  ): SignInDecision {
    const browser = !at.upgrade && (req.method === 'GET' || req.method === 'HEAD') && /\btext\/html\b/i.test(String(req.headers.accept ?? ''));
    if (!browser) return this.error(req, at, ctx.route, EDGE_ERRORS.signInRequired, 'no session', undefined, setCookies);
    return this.later(req, at, ctx.route, async () => {
      const returnTo = at.query ? `${at.path}?${at.query}` : at.path;
      const { pending, cookie } = this.cookies.startSignIn(ctx.route.id, ctx.module, cookies, method.name, returnTo);
      const step = await method.start(ctx, pending);
      if (step.kind === 'failed') return this.failure(req, at, ctx.route, step, setCookies);
      const headers: [string, string][] = [['Cache-Control', 'no-store'], ...[...setCookies, cookie].map((c): [string, string] => ['Set-Cookie', c])];
      if (step.kind === 'redirect')
        return { kind: 'answer', status: 302, headers: [['Location', step.location], ...headers, ['Content-Length', '0']], body: '' };
      return { kind: 'answer', status: step.status, headers: [['Content-Type', step.contentType], ...headers], body: step.body };
    });
  }

  /** The edge's own paths: the provider's callback, the API host's handoff, sign-out. */
  private async ownPath(
    req: http.IncomingMessage,
    at: SignInRequest,
    ctx: SignInContext<SignInModule>,
    method: SignInMethod<SignInModule>,
    cookies: ReadonlyMap<string, string>,
  ): Promise<SignInDecision> {
    const params = new URLSearchParams(at.query);
    const route = ctx.route;
    if (at.path === SIGN_OUT_PATH) {
      const html = /\btext\/html\b/i.test(String(req.headers.accept ?? ''));
      return {
        kind: 'answer',
        status: 200,
        headers: [
          ['Content-Type', html ? 'text/html; charset=utf-8' : 'text/plain; charset=utf-8'],
          ['Cache-Control', 'no-store'],
          ['Set-Cookie', this.cookies.clearSession(ctx.module)],
        ],
        body: html
          ? '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Signed out</title></head><body><h1>Signed out.</h1></body></html>\n'
          : 'Signed out.\n',
      };
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return this.error(req, at, route, EDGE_ERRORS.signInFailed, `${req.method} to ${at.path}`);
    if (at.path === CALLBACK_PATH) {
      const { pending, cookie } = this.cookies.finishSignIn(route.id, ctx.module, cookies, params.get('state') ?? '');
      if (!pending || pending.method !== method.name || !method.callback)
        return this.error(req, at, route, EDGE_ERRORS.signInFailed, 'callback with an unknown, used or expired state', undefined, [cookie]);
      const result = await method.callback(ctx, pending, params);
      if (result.kind === 'failed') return this.failure(req, at, route, result, [cookie]);
      return this.signedIn(ctx, method.name, result.identity, result.accessToken, pending.returnTo, [cookie]);
    }
    if (at.path === HANDOFF_PATH) {
      const handoff = this.cookies.openHandoff(route.id, params.get('token') ?? '');
      if (!handoff || handoff.method !== method.name) return this.error(req, at, route, EDGE_ERRORS.signInFailed, 'handoff token forged, expired or used');
      let returnTo = '/';
      const setCookies: string[] = [];
      if (handoff.state !== undefined) {
        const { pending, cookie } = this.cookies.finishSignIn(route.id, ctx.module, cookies, handoff.state);
        if (!pending) return this.error(req, at, route, EDGE_ERRORS.signInFailed, 'handoff for a sign-in this browser did not start', undefined, [cookie]);
        returnTo = pending.returnTo;
        setCookies.push(cookie);
      }
      const refused = method.authorize?.(ctx, handoff.identity);
      if (refused) return this.failure(req, at, route, refused, setCookies);
      return this.signedIn(ctx, method.name, handoff.identity, undefined, returnTo, setCookies);
    }
    return this.error(req, at, route, EDGE_ERRORS.noRoute, 'unknown sign-in path', `(${at.path.slice(0, 200)})`);
  }

  private signedIn(
    ctx: SignInContext<SignInModule>,
    name: SignInMethodName,
    identity: Identity,
    accessToken: string | undefined,
    returnTo: string,
    setCookies: string[],
  ): SignInDecision {
    const session = this.cookies.newSession(ctx.route.id, name, identity, accessToken);
    this.log.info({ route_id: ctx.route.id, method: name, subject: identity.subject }, 'edge: signed in');
    const cookies = [...setCookies, this.cookies.sessionCookie(ctx.module, session)];
    return {
      kind: 'answer',
      status: 302,
      headers: [
        ['Location', localTarget(returnTo)],
        ['Cache-Control', 'no-store'],
        ...cookies.map((c): [string, string] => ['Set-Cookie', c]),
        ['Content-Length', '0'],
      ],
      body: '',
    };
  }

  /** auth_check_interval: the provider asked again; the session goes on, or ends (a browser then signs in again). */
  private async recheck(
    req: http.IncomingMessage,
    at: SignInRequest,
    ctx: SignInContext<SignInModule>,
    method: SignInMethod<SignInModule>,
    session: Session,
    cookies: ReadonlyMap<string, string>,
  ): Promise<SignInDecision> {
    const outcome = await method.recheck!(ctx, session);
    if (outcome === 'ok') {
      session.checkedAt = session.lastSeenAt = this.cookies.now();
      const ownCookies = [sessionCookieName(ctx.module), stateCookieName(ctx.module)];
      return { kind: 'pass', identity: session.identity, setCookies: [this.cookies.sessionCookie(ctx.module, session)], ownCookies };
    }
    const cleared = [this.cookies.clearSession(ctx.module)];
    // A token the provider no longer takes: signing in again may well work.
    if (outcome.error === EDGE_ERRORS.signInRequired) {
      this.log.info({ route_id: ctx.route.id, method: method.name, why: outcome.why }, 'edge: session ended by its auth check');
      return this.signInNeeded(req, at, ctx, method, cookies, cleared);
    }
    // Refused: the session ends. The provider down or slow: the session is kept for when it is back, and nothing passes now.
    return this.failure(req, at, ctx.route, outcome, outcome.error === EDGE_ERRORS.signInRefused ? cleared : []);
  }

  /**
   * A decision made by `work`, bounded by the timeout: pending now, kept for the request's next
   * check. Whatever `work` throws is an error answer; what it decides past the timeout is dropped.
   */
  private later(req: http.IncomingMessage, at: SignInRequest, route: HttpsRoute, work: () => Promise<SignInDecision>): SignInDecision {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<SignInDecision>((resolve) => {
      timer = setTimeout(
        () => resolve(this.failure(req, at, route, { kind: 'failed', error: EDGE_ERRORS.idpTimedOut, why: `no decision within ${this.options.timeoutMs} ms` })),
        this.options.timeoutMs,
      );
    });
    const decided = Promise.resolve()
      .then(work)
      .then(
        (d) => (d.kind === 'pending' ? d.settled.then(() => this.decided.get(req) ?? this.broken(req, at, route, 'nested decision lost')) : d),
        (err: unknown) => {
          this.log.error({ route_id: route.id, err: err instanceof Error ? err.message : String(err) }, 'edge: sign-in failed on this server');
          return this.broken(req, at, route, 'exception');
        },
      );
    const settled = Promise.race([decided, timeout]).then((d) => {
      clearTimeout(timer);
      this.decided.set(req, d);
    });
    return { kind: 'pending', settled };
  }

  private broken(req: http.IncomingMessage, at: SignInRequest, route: HttpsRoute, why: string): SignInDecision {
    return this.error(req, at, route, EDGE_ERRORS.signInBroken, why);
  }

  private failure(req: http.IncomingMessage, at: SignInRequest, route: HttpsRoute, failure: SignInFailure, setCookies: string[] = []): SignInDecision {
    return this.error(req, at, route, failure.error, failure.why, failure.detail, setCookies);
  }

  /** An error answer in the ingress's style, logged with why (never a secret: the methods' reasons hold none). */
  private error(
    req: http.IncomingMessage,
    at: SignInRequest,
    route: HttpsRoute,
    error: IngressError,
    why: string,
    detail?: string,
    setCookies: string[] = [],
  ): SignInDecision {
    this.log.info({ route_id: route.id, code: error.code, why }, 'edge: sign-in refused the request');
    const { body, contentType } = errorBody(error, `https://${at.host}`, req.headers.accept, detail);
    const headers: [string, string][] = [
      ['Content-Type', contentType],
      ['Cache-Control', 'no-store'],
      ['ngrok-error-code', error.code],
      ...setCookies.map((c): [string, string] => ['Set-Cookie', c]),
    ];
    return { kind: 'answer', status: error.status, headers, body };
  }
}

/**
 * A decision that is not a pass, on a request: the answer written (the request's body drained,
 * a HEAD's body left out), or `again` once a pending one is made.
 */
export function sendSignInAnswer(req: http.IncomingMessage, res: http.ServerResponse, decision: SignInDecision, again: () => void): void {
  if (decision.kind === 'pending') return void decision.settled.then(again);
  if (decision.kind !== 'answer') return again();
  req.resume();
  if (decision.status >= 500) res.shouldKeepAlive = false;
  const headers = decision.headers.filter(([name]) => name.toLowerCase() !== 'content-length');
  headers.push(['Content-Length', String(Buffer.byteLength(decision.body))]);
  res.writeHead(decision.status, headers.flat());
  res.end(req.method === 'HEAD' ? undefined : decision.body);
}

/** The same on an upgrade's connection, no longer read by node:http: raw bytes, then it closes. */
export function rawSignInAnswer(socket: Duplex, decision: SignInDecision, again: () => void): void {
  if (decision.kind === 'pending') return void decision.settled.then(again);
  if (decision.kind !== 'answer') return again();
  let text = `HTTP/1.1 ${decision.status} ${http.STATUS_CODES[decision.status] ?? 'Error'}\r\n`;
  for (const [name, value] of decision.headers) if (name.toLowerCase() !== 'content-length') text += `${name}: ${value}\r\n`;
  socket.on('error', () => {});
  socket.end(`${text}Content-Length: ${Buffer.byteLength(decision.body)}\r\nConnection: close\r\n\r\n${decision.body}`);
}
