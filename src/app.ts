// buildApp(deps): the Fastify instance with every route. It reads no environment and never
// listens; main.ts and the tests do that.
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { newId } from './core/ids.js';
import { registerResourceRoutes } from './crud/routes.js';
import type { Deps } from './deps.js';
import { clientErrorHandler, frameworkError, registerErrorHandling } from './http/error-handler.js';
import { registerHealth } from './http/health.js';
import { registerIdempotency } from './http/idempotency.js';
import { registerMetrics } from './http/metrics.js';
import { managedCertificates } from './certificates/certificate-report.js';
import { registerOpenApi } from './http/openapi.js';
import { registerTunnelSessionCommands } from './resources/tunnel-sessions/tunnel-session.commands.js';
import { registerProtocol } from './http/protocol.js';
import { registerRateLimit } from './http/rate-limit.js';
import { registerSaml } from './http/saml.js';
import { validatorCompiler } from './http/validation.js';
import { requestLoggerFactory, unredactedLogger } from './logger.js';

export const BODY_LIMIT = 1024 * 1024;

/** At most one warning a minute while connections are refused for EDGEPLANE_MAX_CONNECTIONS. */
const REFUSED_LOG_INTERVAL_MS = 60_000;

export async function buildApp(deps: Deps, options: { https?: { cert: string; key: string } } = {}): Promise<FastifyInstance> {
  const limits = deps.config.connections;
  // Node checks the headers and request deadlines of all connections on an interval (30 s by
  // default) rather than per socket: check often enough to close a connection within about a
  // second of its deadline.
  const deadlines = {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    connectionsCheckingInterval: Math.min(1000, Math.max(50, Math.floor(limits.headersTimeoutMs / 4))),
  };
  const app = Fastify({
    loggerInstance: deps.logger,
    // One line per request is written by the protocol layer instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'operation_id' }),
    // A request's pino child is made only if the request logs through it (src/logger.ts).
    childLoggerFactory: requestLoggerFactory,
    genReqId: () => newId('op'),
    requestIdHeader: false,
    bodyLimit: BODY_LIMIT,
    // While closing, requests on open connections are still answered (see drainOnClose), not refused.
    return503OnClosing: false,
    frameworkErrors: frameworkError,
    // request.ip: the socket peer, or the first untrusted hop of X-Forwarded-For behind trusted proxies
    trustProxy: deps.config.trustedProxies.length > 0 ? deps.config.trustedProxies : false,
    clientErrorHandler: clientErrorHandler(limits, deps.logger),
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    routerOptions: { caseSensitive: true, ignoreTrailingSlash: false, maxParamLength: 200 },
    // A TLS client that never finishes its handshake is not yet an HTTP connection: it gets the headers timeout too.
    ...(options.https ? { https: { ...options.https, ...deadlines, handshakeTimeout: limits.headersTimeoutMs } } : { http: deadlines }),
  }) as unknown as FastifyInstance;

  // Past the limit Node closes new connections as soon as they are accepted; open ones go on.
  app.server.maxConnections = limits.max;
  let refused = 0;
  let reportedAt = -Infinity;
  app.server.on('drop', () => {
    refused++;
    if (performance.now() - reportedAt < REFUSED_LOG_INTERVAL_MS) return;
    reportedAt = performance.now();
    deps.logger.warn({ refused, max_connections: limits.max }, 'connections refused: EDGEPLANE_MAX_CONNECTIONS are open');
    refused = 0;
  });

  drainOnClose(app);
  app.setValidatorCompiler(validatorCompiler);
  const baseUrl = () => deps.config.baseUrl;
  registerProtocol(app, { auth: deps.auth, ipGuard: deps.ipGuard, clock: deps.clock, baseUrl, requestLines: unredactedLogger(deps.logger) });
  if (deps.rateLimiter) {
    await deps.rateLimiter.ready();
    registerRateLimit(app, deps.rateLimiter);
  }
  registerIdempotency(app, { store: deps.store, now: () => deps.clock.now() });
  registerErrorHandling(app);
  await registerOpenApi(app, baseUrl);
  registerHealth(app, deps);
  registerMetrics(app, { ...deps, token: deps.config.metricsToken, certificates: (now) => managedCertificates(deps.store, now) });
  for (const resource of Object.values(deps.resources)) registerResourceRoutes(app, resource);
  registerTunnelSessionCommands(app, deps);
  registerSaml(app, deps);
  await app.ready();
  return app;
}

/**
 * A graceful stop (SIGTERM): the listening socket closes, idle connections are closed, and a
 * request that arrives meanwhile on an open connection is answered like any other, with
 * `Connection: close`, so that the client (or the balancer) opens its next connection to another
 * instance. No request is refused for the stop, and none is cut off.
 */
function drainOnClose(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (_request, reply, done) => {
    if (closing) reply.header('Connection', 'close');
    done();
  });
}
