// Every failure leaves through here as one body: {error_code, status_code, msg, details}.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Socket } from 'node:net';
import { ApiError, errors } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { allowedMethods } from './protocol.js';
import { validationToApiError } from '../core/validation.js';

function toApiError(error: FastifyError, request: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error;
  if (error.validation) return validationToApiError(error.validation as never, error.validationContext ?? 'body');
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return errors.bodyTooLarge({ limit: request.routeOptions.bodyLimit ?? 1048576 });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return errors.malformedRequest({ reason: 'the body is shorter or longer than its Content-Length' });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return errors.unsupportedContentType({ contentType: String(request.headers['content-type'] ?? '') });
  }
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    return errors.malformedRequest({ reason: error.message });
  }
  request.log.error({ err: error }, 'unhandled error');
  return errors.internal();
}

export function sendError(reply: FastifyReply, request: FastifyRequest, error: ApiError): FastifyReply {
  return reply
    .code(error.status)
    .header('Operation-Id', request.id)
    .headers(error.headers)
    .type('application/json; charset=utf-8')
    .send({ error_code: error.errorCode, status_code: error.status, msg: error.message, details: { ...error.details, operation_id: request.id } });
}

/** Errors the router raises before any hook runs (Fastify's `frameworkErrors` option). */
export function frameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = request.url.split('?')[0]!;
  const apiError =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? errors.notFound({ title: 'resource', id: path.slice(path.lastIndexOf('/') + 1, path.lastIndexOf('/') + 81) })
      : errors.malformedRequest({ reason: `the path '${path.slice(0, 100)}' is not a valid URL path` });
  return sendError(reply, request, apiError);
}

/** HTTP the parser cannot read (Fastify's `clientErrorHandler`): still our error body. */
export function clientError(error: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const apiError = errors.malformedRequest({
    reason: error.code === 'HPE_HEADER_OVERFLOW' ? 'the request headers are too large' : 'it is not well-formed HTTP/1.1',
  });
  const operationId = newId('op');
  const body = JSON.stringify({ error_code: apiError.errorCode, status_code: apiError.status, msg: apiError.message, details: { operation_id: operationId } });
  socket.end(
    `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nOperation-Id: ${operationId}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const apiError = toApiError(error, request);
    if (apiError.status >= 500) request.log.warn({ error_code: apiError.errorCode }, apiError.message);
    return sendError(reply, request, apiError);
  });

  // Unknown paths, wrong methods and CORS preflight: nothing here is routed.
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    const allow = allowedMethods(app, path);
    if (request.method === 'OPTIONS' && allow.length > 0) {
      const methods = [...allow, 'OPTIONS'].join(', ');
      reply.header('Allow', methods);
      if (request.headers.origin && request.headers['access-control-request-method']) {
        reply.header('Access-Control-Allow-Methods', methods);
        const requested = request.headers['access-control-request-headers'];
        if (requested) reply.header('Access-Control-Allow-Headers', requested);
        reply.header('Access-Control-Max-Age', '600');
      }
      return reply.code(204).send();
    }
    if (allow.length > 0) return sendError(reply, request, errors.methodNotAllowed({ method: request.method, path, allow: [...allow, 'OPTIONS'] }));
    return sendError(reply, request, errors.routeNotFound({ method: request.method, path }));
  });
}
