// buildApp(deps): the Fastify instance with every route. It reads no environment and never
// listens; main.ts and the tests do that.
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { newId } from './core/ids.js';
import { registerResourceRoutes } from './crud/routes.js';
import type { Deps } from './deps.js';
import { clientError, frameworkError, registerErrorHandling } from './http/error-handler.js';
import { registerOpenApi } from './http/openapi.js';
import { registerProtocol } from './http/protocol.js';
import { validatorCompiler } from './http/validation.js';

export const BODY_LIMIT = 1024 * 1024;

export async function buildApp(deps: Deps, options: { https?: { cert: string; key: string } } = {}): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger,
    // One line per request is written by the protocol layer instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'operation_id' }),
    genReqId: () => newId('op'),
    requestIdHeader: false,
    bodyLimit: BODY_LIMIT,
    return503OnClosing: true,
    frameworkErrors: frameworkError,
    // request.ip: the socket peer, or the first untrusted hop of X-Forwarded-For behind trusted proxies
    trustProxy: deps.config.trustedProxies.length > 0 ? deps.config.trustedProxies : false,
    clientErrorHandler: clientError,
    routerOptions: { caseSensitive: true, ignoreTrailingSlash: false, maxParamLength: 200 },
    ...(options.https ? { https: options.https } : {}),
  }) as unknown as FastifyInstance;

  app.setValidatorCompiler(validatorCompiler);
  const baseUrl = () => deps.config.baseUrl;
  registerProtocol(app, { auth: deps.auth, ipGuard: deps.ipGuard, clock: deps.clock, baseUrl });
  registerErrorHandling(app);
  await registerOpenApi(app, baseUrl);
  for (const resource of Object.values(deps.resources)) registerResourceRoutes(app, resource);
  await app.ready();
  return app;
}
