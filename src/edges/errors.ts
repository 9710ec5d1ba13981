// The answers public ingress gives itself, instead of the agent's upstream: ngrok's error codes,
// in an `ngrok-error-code` header and in the body, as an HTML page for browsers and text otherwise.
// docs/ingress.md lists them. Kept with the edges, below the listeners, because the edges' sign-in
// answers with them as the listeners do.
import type http from 'node:http';

export interface IngressError {
  code: string;
  status: number;
  message: (url: string) => string;
}

export const INGRESS_ERRORS = {
  /** No tunnel online serves the host. */
  endpointOffline: { code: 'ERR_NGROK_3200', status: 404, message: (url: string) => `The endpoint ${url} is offline.` },
  /** The agent's stream could not be opened, or broke before the response began. */
  agentFailed: { code: 'ERR_NGROK_3210', status: 502, message: (url: string) => `Error forwarding the connection to the agent serving ${url}.` },
  /** The agent's side ended, or sent something that is not HTTP, before a complete response head. */
  invalidResponse: {
    code: 'ERR_NGROK_3004',
    status: 502,
    message: (url: string) => `The upstream of ${url} returned an invalid or incomplete HTTP response.`,
  },
} as const satisfies Record<string, IngressError>;

/**
 * The answers of edges (docs/ingress.md): edgeplane's own codes, where ngrok's documentation has
 * none to reuse. `detail` is what the message names: the path, the module, the backend.
 */
export const EDGE_ERRORS = {
  badPath: { code: 'ERR_EP_INGRESS_710', status: 400, message: (url: string) => `The request target is not a path ${url} can route.` },
  noRoute: { code: 'ERR_EP_INGRESS_701', status: 404, message: (url: string) => `No route of the edge serving ${url} matches the path.` },
  ipRefused: { code: 'ERR_EP_INGRESS_702', status: 403, message: (url: string) => `Your IP address may not reach ${url}.` },
  unauthorized: { code: 'ERR_EP_INGRESS_715', status: 401, message: (url: string) => `${url} asks for a user name and password (basic auth).` },
  agentUnenforceable: {
    code: 'ERR_EP_INGRESS_716',
    status: 501,
    message: (url: string) => `The endpoint configuration of ${url} asks for what agent endpoints cannot hold to; no request is passed around it.`,
  },
  userAgentRefused: { code: 'ERR_EP_INGRESS_703', status: 403, message: (url: string) => `Your user agent may not reach ${url}.` },
  circuitOpen: {
    code: 'ERR_EP_INGRESS_704',
    status: 503,
    message: (url: string) => `The upstream of ${url} is failing; requests are refused for a while (circuit breaker).`,
  },
  unreachable: { code: 'ERR_EP_INGRESS_706', status: 502, message: (url: string) => `The upstream of ${url} could not be reached.` },
  timedOut: { code: 'ERR_EP_INGRESS_707', status: 504, message: (url: string) => `The upstream of ${url} did not answer in time.` },
  noBackend: { code: 'ERR_EP_INGRESS_708', status: 502, message: (url: string) => `The route serving ${url} has no backend.` },
  bodyTooLarge: {
    code: 'ERR_EP_INGRESS_712',
    status: 413,
    message: (url: string) => `The request's body is longer than the 1 MiB the traffic policy of ${url} reads before the request goes on.`,
  },
  websocketOnly: {
    code: 'ERR_EP_INGRESS_711',
    status: 426,
    message: (url: string) => `The route serving ${url} takes WebSocket connections only: it converts them to TCP for its backend.`,
  },
  webhookRefused: {
    code: 'ERR_EP_INGRESS_713',
    status: 403,
    message: (url: string) => `The request to ${url} does not carry a valid signature of the route's webhook provider.`,
  },
  /** The same refusal for a provider that acts on a 401 (Xero). */
  webhookUnauthorized: {
    code: 'ERR_EP_INGRESS_713',
    status: 401,
    message: (url: string) => `The request to ${url} does not carry a valid signature of the route's webhook provider.`,
  },
  webhookBodyTooLarge: {
    code: 'ERR_EP_INGRESS_714',
    status: 413,
    message: (url: string) => `The request's body is longer than the 1 MiB ${url} reads to verify a webhook's signature.`,
  },
  signInRequired: { code: 'ERR_EP_INGRESS_720', status: 401, message: (url: string) => `Sign in to reach ${url}: open it in a browser.` },
  signInRefused: { code: 'ERR_EP_INGRESS_721', status: 403, message: (url: string) => `You are signed in, but your account may not reach ${url}.` },
  signInFailed: { code: 'ERR_EP_INGRESS_722', status: 400, message: (url: string) => `The sign-in to ${url} could not be completed; start again from ${url}.` },
  idpUnreachable: {
    code: 'ERR_EP_INGRESS_723',
    status: 502,
    message: (url: string) => `The identity provider of ${url} could not be reached; no one can sign in until it can.`,
  },
  idpTimedOut: { code: 'ERR_EP_INGRESS_724', status: 504, message: (url: string) => `The identity provider of ${url} did not answer in time.` },
  idpInvalid: {
    code: 'ERR_EP_INGRESS_725',
    status: 502,
    message: (url: string) => `The identity provider of ${url} gave an answer that is not a valid sign-in.`,
  },
  noOAuthApp: {
    code: 'ERR_EP_INGRESS_726',
    status: 501,
    message: (url: string) => `The route serving ${url} signs users in with the server's own OAuth application, and this server has none for its provider.`,
  },
  signInBroken: {
    code: 'ERR_EP_INGRESS_727',
    status: 500,
    message: (url: string) => `The sign-in to ${url} failed on this server's side (its configuration could not be read).`,
  },
  internalOffline: {
    code: 'ERR_EP_INGRESS_717',
    status: 502,
    message: (url: string) => `The traffic policy of ${url} forwards to an internal endpoint of its account that is not online.`,
  },
  policyNotForwarded: {
    code: 'ERR_EP_INGRESS_718',
    status: 502,
    message: (url: string) => `The traffic policy of the cloud endpoint ${url} neither answered nor forwarded this request (no forward-internal applied).`,
  },
  policyFailed: {
    code: 'ERR_EP_INGRESS_709',
    status: 500,
    message: (url: string) => `The traffic policy of ${url} could not be evaluated for this request.`,
  },
} as const satisfies Record<string, IngressError>;

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  413: 'Content Too Large',
  426: 'Upgrade Required',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The body and content type of an error answer: HTML when the client takes it (a browser), else text. */
export function errorBody(error: IngressError, url: string, accept: string | undefined, detail?: string): { body: string; contentType: string } {
  const message = detail ? `${error.message(url)} ${detail}` : error.message(url);
  if (accept !== undefined && /\btext\/html\b/i.test(accept)) {
    const body =
      `<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>${escapeHtml(error.code)}</title></head>` +
      `<body><h1>${escapeHtml(message)}</h1><p>${escapeHtml(error.code)}</p></body></html>\n`;
    return { body, contentType: 'text/html; charset=utf-8' };
  }
  return { body: `${message}\n\n${error.code}\n`, contentType: 'text/plain; charset=utf-8' };
}

/** Answers a request with the error, unless the response has begun (then it is cut off). */
export function sendError(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  error: IngressError,
  url: string,
  detail?: string,
  headers?: Record<string, string>,
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const { body, contentType } = errorBody(error, url, req.headers.accept, detail);
  res.writeHead(error.status, {
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(body),
    'ngrok-error-code': error.code,
    'Cache-Control': 'no-store',
    ...headers,
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** The same answer as raw bytes, for a connection no longer read by node:http (an upgrade), which then closes. */
export function rawErrorResponse(error: IngressError, url: string, accept: string | undefined, detail?: string, headers?: Record<string, string>): string {
  const { body, contentType } = errorBody(error, url, accept, detail);
  const more = Object.entries(headers ?? {})
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return (
    `HTTP/1.1 ${error.status} ${REASONS[error.status] ?? 'Error'}\r\n${more}` +
    `Content-Type: ${contentType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nngrok-error-code: ${error.code}\r\n` +
    `Cache-Control: no-store\r\nConnection: close\r\n\r\n${body}`
  );
}
