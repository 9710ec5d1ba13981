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
}

function corsHeaders(request: FastifyRequest, reply: FastifyReply): void {
  const origin = request.headers.origin;
  if (!origin) return;
  reply.header('Access-Control-Allow-Origin', origin);
  reply.header('Access-Control-Allow-Credentials', 'true');
  reply.header('Access-Control-Expose-Headers', 'Operation-Id, Retry-After, WWW-Authenticate, Ip-Restriction-Warning');
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
    if (!verdict.allowed) {
      if (verdict.enforced) throw errors.ipRestricted({ ip: request.ip, restrictionId: verdict.restrictionId });
      reply.header('Ip-Restriction-Warning', `${request.ip} is not allowed by IP restriction ${verdict.restrictionId}, which is not enforced`);
      request.log.warn(
        { account_id: who.scope.accountId, key_id: who.keyId, ip: request.ip, ip_restriction_id: verdict.restrictionId },
        'request from an address the api IP restriction does not allow (not enforced)',
      );
    }
    request.ctx = { scope: who.scope, principal: who.principal, keyId: who.keyId, baseUrl: deps.baseUrl(), now: deps.clock.now() };
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
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      return done(errors.malformedJson({ reason: (error as Error).message.slice(0, 200) }), undefined);
    }
    // PostgreSQL text cannot hold NUL; refuse it in every store alike. Raw NULs are already
    // invalid JSON, so only the escape needs a closer look.
    const nulField = /\\u0000/i.test(text) ? findNul(parsed) : undefined;
    if (nulField !== undefined) return done(errors.nulCharacter({ field: nulField || 'request body' }), undefined);
    done(null, parsed);
  });

  // One line per request, with the operation id (as `operation_id`), and never a header.
  app.addHook('onResponse', (request, reply, done) => {
    if ((request.log as unknown as Logger).isLevelEnabled('info'))
      request.log.info(
        {
          method: request.method,
          path: request.url.split('?')[0],
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime * 10) / 10,
          account_id: request.ctx?.scope.accountId,
          key_id: request.ctx?.keyId,
        },
        'request',
      );
    done();
  });
}

/** The dotted path of the first string (or key) holding a NUL character. */
function findNul(value: unknown, at = ''): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? at : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, child] of Object.entries(value)) {
    const here = Array.isArray(value) ? `${at}[${key}]` : at ? `${at}.${key}` : key;
    if (key.includes('\u0000')) return here;
    const found = findNul(child, here);
    if (found !== undefined) return found;
  }
  return undefined;
}

export const ALL_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** Methods routed at a concrete path, for 405 and CORS preflight. */
export function allowedMethods(app: FastifyInstance, path: string): string[] {
  return ALL_METHODS.filter((method) => app.findRoute({ method, url: path }) !== null);
}
