// Every failure leaves through here as one body: {error_code, status_code, msg, details}.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
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

/** Writes a whole response straight to the socket (there is no request or reply object), logs it and closes. */
function answerAndClose(socket: Socket, statusLine: string, apiError: ApiError, logger: Logger): void {
  const operationId = newId('op');
  // The one log line of a request that never reached the router, under the operation id the client gets.
  logger.info({ operation_id: operationId, status: apiError.status, error_code: apiError.errorCode, ip: socket.remoteAddress }, 'request');
  const body = JSON.stringify({ error_code: apiError.errorCode, status_code: apiError.status, msg: apiError.message, details: { operation_id: operationId } });
  socket.end(
    `HTTP/1.1 ${statusLine}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nOperation-Id: ${operationId}\r\nConnection: close\r\n\r\n${body}`,
  );
  // The HTTP server allows half-open sockets: a peer that never closes its side would keep this
  // one; drop it once the answer has been handed to the kernel.
  socket.once('finish', () => socket.destroy());
}

/** What Node's HTTP server keeps on a connection's socket (internal, hence every part optional). */
interface HttpSocketState {
  /** The response being written or awaited, and its request. */
  _httpMessage?: { headersSent?: boolean; req?: unknown } | null;
  /** The request last read (headers complete), whose body may still be arriving. */
  parser?: { incoming?: { complete?: boolean } | null } | null;
}

/**
 * HTTP the parser cannot read, and requests not received in time (Fastify's `clientErrorHandler`,
 * Node's `clientError` event): still our error body. Node reports both a missed headers timeout
 * and a missed request timeout as ERR_HTTP_REQUEST_TIMEOUT. Everything else that arrives here is
 * no HTTP to answer: socket errors, and on HTTPS failed or timed-out TLS handshakes (an answer
 * could not even be encrypted; Node leaves closing those to this handler).
 */
export function clientErrorHandler(limits: { headersTimeoutMs: number; requestTimeoutMs: number }, logger: Logger) {
  return function clientError(error: Error & { code?: string }, socket: Socket): void {
    const code = error.code ?? '';
    if (!socket.writable || (code !== 'ERR_HTTP_REQUEST_TIMEOUT' && !code.startsWith('HPE_'))) {
      socket.destroy();
      return;
    }
    if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      const { _httpMessage: pending, parser } = socket as Socket & HttpSocketState;
      const incoming = parser?.incoming;
      const receivingBody = incoming != null && incoming.complete === false;
      // A 408 only where HTTP/1.1 allows one, as the one answer to the request being received:
      // its body is awaited by the app that has not answered yet, or its headers are incomplete
      // and no earlier answer is pending. Not after an early answer to it (a 401 is sent without
      // reading the body), nor ahead of an earlier request's answer (pipelining).
      const answerable = receivingBody ? pending != null && pending.req === incoming && !pending.headersSent : pending == null;
      if (!answerable) {
        socket.destroy();
        return;
      }
      const part = receivingBody ? 'request' : 'headers';
      const seconds = (part === 'request' ? limits.requestTimeoutMs : limits.headersTimeoutMs) / 1000;
      answerAndClose(socket, '408 Request Timeout', errors.requestTimeout({ seconds, part }), logger);
      return;
    }
    const apiError = errors.malformedRequest({
      reason: code === 'HPE_HEADER_OVERFLOW' ? 'the request headers are too large' : 'it is not well-formed HTTP/1.1',
    });
    answerAndClose(socket, '400 Bad Request', apiError, logger);
  };
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
