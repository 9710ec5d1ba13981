// The conventions every operation shares, applied once for all routes: operation ids, CORS,
// the version header, authentication and the account's api IP restriction, JSON bodies,
// query-string rules and the one log line per request. What a caller may do is decided by
// each resource's authorize (src/crud/), not here.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { errors } from '../core/errors.js';
import type { Authenticated, Authenticator, IpScreen, RequestContext, Verdict } from '../core/context.js';
import type { Clock } from '../core/time.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** No version header or credentials needed (the OpenAPI document). */
    public?: boolean;
    /** Fields a PATCH may not send (fixed at creation). */
    immutable?: readonly string[];
    /** The resource's human name, for messages. */
    title?: string;
    /**
     * The path's `:id` alone as the body is taken as no body: the official TypeScript client
     * posts the bare id to the tunnel session commands (`restart(id)`, `stop(id)`).
     */
    bareIdBody?: boolean;
  }
  interface FastifyRequest {
    ctx: RequestContext;
  }
}

const READ_METHODS = new Set(['GET', 'HEAD']);
const utf8 = new TextDecoder('utf-8', { fatal: true });

export interface ProtocolDeps {
  auth: Authenticator;
  ipGuard: IpScreen;
  clock: Clock;
  baseUrl: () => string;
  /** The logger of the request lines: the app's, without redaction (src/logger.ts, unredactedLogger). */
  requestLines: Logger;
}

function corsHeaders(request: FastifyRequest, reply: FastifyReply): void {
  const origin = request.headers.origin;
  if (!origin) return;
  reply.header('Access-Control-Allow-Origin', origin);
  reply.header('Access-Control-Allow-Credentials', 'true');
  reply.header(
    'Access-Control-Expose-Headers',
    'Operation-Id, Retry-After, WWW-Authenticate, Ip-Restriction-Warning, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, Idempotent-Replayed',
  );
  reply.header('Vary', 'Origin');
}

function checkVersion(request: FastifyRequest): void {
  const service = request.headers['service-version'];
  const ngrok = request.headers['ngrok-version'];
  const header = service !== undefined ? 'Service-Version' : 'Ngrok-Version';
  const value = service ?? ngrok;
  if (value === undefined) throw errors.missingVersion();
  const text = Array.isArray(value) ? value.join(',') : value;
  if (text.trim() !== '2') throw errors.unsupportedVersion({ header, value: text.slice(0, 40) });
}

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

export function registerProtocol(app: FastifyInstance, deps: ProtocolDeps): void {
  app.decorateRequest('ctx', null as unknown as RequestContext);

  // Hooks take callbacks rather than promises: they run on every request, and the common path
  // (a cached key) completes without a promise or a microtask hop.
  // The account's `api` IP restriction: refuse (enforced) or let pass with a warning; then the
  // request's context. Plain functions rather than closures made for every request.
  const admit = (request: FastifyRequest, reply: FastifyReply, who: Authenticated, verdict: Verdict): void => {
    // Set before the verdict is applied, so that the log line of a refused request names its caller too.
    request.ctx = { scope: who.scope, principal: who.principal, keyId: who.keyId, baseUrl: deps.baseUrl(), now: deps.clock.now() };
    if (!verdict.allowed) {
      if (verdict.enforced) throw errors.ipRestricted({ ip: request.ip, restrictionId: verdict.restrictionId });
      reply.header('Ip-Restriction-Warning', `${request.ip} is not allowed by IP restriction ${verdict.restrictionId}, which is not enforced`);
      request.log.warn(
        { account_id: who.scope.accountId, key_id: who.keyId, ip: request.ip, ip_restriction_id: verdict.restrictionId },
        'request from an address the api IP restriction does not allow (not enforced)',
      );
    }
  };
  const screen = (request: FastifyRequest, reply: FastifyReply, who: Authenticated): void | Promise<void> => {
    const verdict = deps.ipGuard.check(who.scope, request.ip);
    if (verdict instanceof Promise) return verdict.then((v) => admit(request, reply, who, v));
    admit(request, reply, who, verdict);
  };

  // Hooks take callbacks rather than promises: they run on every request, and the common path
  // (a cached key, a fresh matcher) completes without a promise or a microtask hop.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('Operation-Id', request.id);
    corsHeaders(request, reply);
    if (request.is404 || request.routeOptions.config.public) return done();
    // The router matches `/api_keys/` to `/api_keys/{id}` with an empty id; but a trailing
    // slash is another path, and no operation has one: the same 404 as any unknown path.
    const params = request.params as Record<string, string>;
    for (const name in params) {
      if (params[name] === '') return done(errors.routeNotFound({ method: request.method, path: request.url.split('?')[0]! }));
    }
    try {
      checkVersion(request);
      // Fastify does not read GET bodies; refuse them instead of silently ignoring content.
      if (READ_METHODS.has(request.method) && hasBody(request)) throw errors.bodyNotAllowed({ method: request.method });
      const who = deps.auth.authenticate(request.headers.authorization);
      const outcome = who instanceof Promise ? who.then((w) => screen(request, reply, w)) : screen(request, reply, who);
      if (!(outcome instanceof Promise)) return done();
      outcome.then(
        () => done(),
        (error: Error) => done(error),
      );
    } catch (error) {
      done(error as Error);
    }
  });

  app.addHook('preValidation', (request, _reply, done) => {
    try {
      for (const name in (request.query ?? {}) as Record<string, unknown>) {
        if (Array.isArray((request.query as Record<string, unknown>)[name])) throw errors.repeatedQueryParameter({ name });
      }
      if (request.body === undefined && !READ_METHODS.has(request.method) && request.method !== 'DELETE') request.body = {};
      if (request.method === 'PATCH') {
        const { immutable, title } = request.routeOptions.config;
        const body = request.body;
        const sent = body && typeof body === 'object' ? immutable?.find((field) => Object.hasOwn(body, field)) : undefined;
        if (sent) throw errors.fieldNotUpdatable({ field: sent, title: title ?? 'resource' });
      }
      done();
    } catch (error) {
      done(error as Error);
    }
  });

  // One parser for every content type: the body must be UTF-8 JSON sent as application/json.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => {
    const buffer = body as Buffer;
    if (buffer.length === 0) return done(null, undefined);
    if (request.method === 'DELETE') return done(errors.bodyNotAllowed({ method: 'DELETE' }), undefined);
    const contentType = request.headers['content-type'];
    if (!contentType) return done(errors.missingContentType(), undefined);
    if (contentType.split(';')[0]!.trim().toLowerCase() !== 'application/json') {
      return done(errors.unsupportedContentType({ contentType: contentType.slice(0, 100) }), undefined);
    }
    let text: string;
    try {
      text = utf8.decode(buffer);
    } catch {
      return done(errors.invalidUtf8(), undefined);
    }
    // Before parsing: a body nested a hundred thousand levels deep parses, but overflows the
    // stack of every recursive walk after it (validation, error messages, serialization).
    if (nestedTooDeep(text, MAX_BODY_DEPTH)) return done(errors.bodyTooDeep({ max: MAX_BODY_DEPTH }), undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      const params = request.params as { id?: string } | undefined;
      if (request.routeOptions.config.bareIdBody && params?.id !== undefined && text.trim() === params.id) return done(null, undefined);
      return done(errors.malformedJson({ reason: (error as Error).message.slice(0, 200) }), undefined);
    }
    // What JSON allows and no field takes. Every one of them is written with a \\u escape or is
    // one of the three words (valid UTF-8 holds no lone surrogate, and raw NULs are invalid
    // JSON), so one test of the text spares the walk for nearly every body.
    const found = NEEDS_WALK.test(text) ? findForbidden(parsed) : undefined;
    if (found) return done(forbiddenError(found), undefined);
    done(null, parsed);
  });

  // One line per request, refusals included, with the operation id (as `operation_id`), the
  // client's address, and the caller once its key was recognised; never a header. Written through
  // the root logger with the operation id as its first field, as the request's own logger would
  // bind it (so the line reads the same), so that no logger is made for a request that logs
  // nothing else; and without the redaction, whose wildcard paths would pass each of these fields
  // (all ours, none a secret) through the redactor.
  const { requestLines } = deps;
  app.addHook('onResponse', (request, reply, done) => {
    if (requestLines.isLevelEnabled('info')) {
      const ctx = request.ctx;
      requestLines.info(
        {
          operation_id: request.id,
          method: request.method,
          path: pathOf(request.url),
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime * 10) / 10,
          ip: request.ip,
          account_id: ctx?.scope.accountId,
          key_id: ctx?.keyId,
        },
        'request',
      );
    }
    done();
  });
}

/** The path of a request's URL, without its query string. */
function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** How deeply a request body may nest arrays and objects, the body itself being level 1 (docs/errors.md, ERR_EP_270). */
export const MAX_BODY_DEPTH = 64;

/**
 * Whether JSON text nests arrays and objects deeper than `max`: brackets outside strings,
 * counted in one pass over the text without parsing it (strings are skipped with indexOf, so
 * long text costs little). Written by hand because JSON.parse has no depth limit; malformed
 * text is left to JSON.parse to report.
 */
function nestedTooDeep(text: string, max: number): boolean {
  // JSON nested past the limit holds at least max + 1 opening and as many closing brackets;
  // shorter text is left to JSON.parse.
  if (text.length < 2 * (max + 1)) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
    else if (c === 0x22) i = closingQuote(text, i);
  }
  return false;
}

/** The index of the quote that closes the string opened at `open` (the text's end if none). */
function closingQuote(text: string, open: number): number {
  for (let at = text.indexOf('"', open + 1); at !== -1; at = text.indexOf('"', at + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
  return text.length;
}

const NEEDS_WALK = /\\u|__proto__|constructor|prototype/;
/** Keys that name a JavaScript object's prototype: harmless in a parsed body, not in code that copies it. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

type Forbidden = { field: string; problem: 'nul' | 'surrogate' | 'key' };

/** A field name as a message can show it: lone surrogates written as their escapes. */
const printable = (name: string) => name.replace(LONE_SURROGATE, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
// String.prototype.isWellFormed (Node 20 and later) is not in the ES2022 library typings.
const wellFormed = (s: string) => (s as string & { isWellFormed(): boolean }).isWellFormed();

/**
 * The dotted path of the first string or key holding a NUL character or a lone UTF-16
 * surrogate, or of the first key named __proto__, constructor or prototype. Recursion is safe:
 * the depth was checked before parsing.
 */
function findForbidden(value: unknown, at = ''): Forbidden | undefined {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) return { field: at, problem: 'nul' };
    return wellFormed(value) ? undefined : { field: at, problem: 'surrogate' };
  }
  if (value === null || typeof value !== 'object') return undefined;
  const isArray = Array.isArray(value);
  for (const key of Object.keys(value)) {
    const here = isArray ? `${at}[${key}]` : at ? `${at}.${printable(key)}` : printable(key);
    if (!isArray) {
      if (FORBIDDEN_KEYS.has(key)) return { field: here, problem: 'key' };
      if (key.includes('\u0000')) return { field: here, problem: 'nul' };
      if (!wellFormed(key)) return { field: here, problem: 'surrogate' };
    }
    const found = findForbidden((value as Record<string, unknown>)[key], here);
    if (found) return found;
  }
  return undefined;
}

function forbiddenError({ field, problem }: Forbidden) {
  // PostgreSQL text cannot hold NUL; it is refused in every store alike.
  if (problem === 'nul') return errors.nulCharacter({ field: field || 'request body' });
  if (problem === 'surrogate')
    return errors.invalidField({
      field: field || 'request body',
      problem: 'contains a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape), which is not a Unicode character',
    });
  return errors.invalidField({ field, problem: 'is not accepted: __proto__, constructor and prototype are refused as keys at any level' });
}

export const ALL_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** Methods routed at a concrete path, for 405 and CORS preflight. */
export function allowedMethods(app: FastifyInstance, path: string): string[] {
  return ALL_METHODS.filter((method) => app.findRoute({ method, url: path }) !== null);
}
