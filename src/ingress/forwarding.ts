// What the HTTP proxy and the edges do alike with a request and its answer on their way through:
// the client's host and address, the headers sent on (hop-by-hop ones dropped, X-Forwarded-*
// added) and returned, how a failure of the far side is told, and a stream made to look like the
// socket node:http's client expects.
import type http from 'node:http';
import type net from 'node:net';
import type { Duplex, Readable, Writable } from 'node:stream';
import { INGRESS_ERRORS, type IngressError } from '../edges/errors.js';
import { isRefusal } from '../lib/muxado/frame.js';
import { hostPort } from '../lib/net-address.js';

export type Scheme = 'http' | 'https';

/** Hop-by-hop headers (RFC 9110 §7.6.1), never forwarded; `Proxy-*` are dropped as well. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-connection']);
/** Set by the proxy itself: what a client sends under these names is not passed on. */
const SET_HERE = new Set(['x-forwarded-proto', 'x-forwarded-host', 'x-forwarded-for']);

/** The request's host in lower case, without port or trailing dot; '' when it has none. */
export function hostOf(value: string | undefined): string {
  if (!value) return '';
  let host = value.trim().toLowerCase();
  if (host.startsWith('[')) host = host.slice(0, host.indexOf(']') + 1);
  else {
    const colon = host.lastIndexOf(':');
    if (colon >= 0 && /^\d*$/.test(host.slice(colon + 1))) host = host.slice(0, colon);
  }
  return host.endsWith('.') ? host.slice(0, -1) : host;
}

/** A socket's address as people write it: an IPv4-mapped IPv6 address (`::ffff:1.2.3.4`) as the IPv4 one. */
export function plainIp(raw: string | undefined): string {
  const ip = raw ?? '';
  return ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice('::ffff:'.length) : ip;
}

/** The client's address as TunnelTarget.connect takes it: `ip:port`, an IPv6 address in brackets. */
export function clientAddress(socket: net.Socket): { ip: string; addr: string } {
  const ip = plainIp(socket.remoteAddress);
  return { ip, addr: hostPort(ip, socket.remotePort ?? 0) };
}

/** The names a Connection header lists: hop-by-hop headers of this message only. */
function connectionTokens(req: http.IncomingMessage): Set<string> {
  const value = req.headers.connection;
  return new Set(
    (value ?? '')
      .split(',')
      .map((t) => t.trim().toLowerCase())
      .filter(Boolean),
  );
}

/** The headers to send on, as raw name/value pairs, names as the client sent them, with X-Forwarded-*. */
export function forwardedHeaders(req: http.IncomingMessage, scheme: Scheme, clientIp: string, upgrade: boolean): string[] {
  const listed = connectionTokens(req);
  const out: string[] = [];
  const forwardedFor: string[] = [];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const value = raw[i + 1]!;
    const lower = name.toLowerCase();
    if (lower === 'x-forwarded-for') forwardedFor.push(value);
    if (SET_HERE.has(lower) || HOP_BY_HOP.has(lower) || lower.startsWith('proxy-') || listed.has(lower)) continue;
    // node:http answered `Expect: 100-continue` already; the upstream is not to answer it again.
    if (lower === 'expect') continue;
    out.push(name, value);
  }
  if (upgrade) out.push('Connection', 'Upgrade', 'Upgrade', req.headers.upgrade ?? '');
  // A body of unknown length goes on chunked: node:http's client frames it (it does not for a GET).
  else if (req.headers['transfer-encoding'] !== undefined) out.push('Transfer-Encoding', 'chunked');
  forwardedFor.push(clientIp);
  out.push('X-Forwarded-For', forwardedFor.join(', '), 'X-Forwarded-Proto', scheme);
  if (req.headers.host !== undefined) out.push('X-Forwarded-Host', req.headers.host);
  return out;
}

/** The response's headers for the client: hop-by-hop ones dropped, the rest as the upstream sent them. */
export function returnedHeaders(res: http.IncomingMessage): string[] {
  const listed = connectionTokens(res);
  const out: string[] = [];
  const raw = res.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const lower = raw[i]!.toLowerCase();
    if (HOP_BY_HOP.has(lower) || lower.startsWith('proxy-') || listed.has(lower)) continue;
    out.push(raw[i]!, raw[i + 1]!);
  }
  return out;
}

/**
 * Whether a request has a body (RFC 9112 §6.3: a Transfer-Encoding, or a Content-Length above 0).
 * One without is sent on with end() rather than piped: a pipeline per request cost a GET through
 * an edge more than half its rate (measured: 2,300–2,550 req/s with end(), 870–1,660 piped).
 */
export function hasBody(req: http.IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * An answer's body to the client: `from.pipe(to)`, with what pipeline() adds for one pair — a
 * failure or an early close of either side destroys both and calls `failed` once — but not its
 * cost per call (an AbortController, and a DOMException with a stack trace when it ends): in a
 * bare Node proxy measured alike, 9,600–11,100 req/s with pipeline(), 16,300–16,600 with this.
 */
export function relay(from: Readable, to: Writable, failed: () => void): void {
  let over = false;
  const fail = () => {
    if (over) return;
    over = true;
    from.destroy();
    to.destroy();
    failed();
  };
  from.once('error', fail);
  to.once('error', fail);
  // Closed before its end (the far side cut it off): the client's answer is cut off too.
  from.once('close', () => from.readableEnded || fail());
  to.once('close', () => to.writableFinished || fail());
  from.pipe(to);
}

/**
 * Which error a failure of the agent's side is: the stream was refused (the tunnel is not held
 * where it was looked for: offline), it broke, or what came back is no HTTP response. `code` is
 * node's string code, or a muxado error's number (a stream reset by an agent or a peer).
 */
export function classify(err: Error & { code?: unknown }): IngressError {
  if (err instanceof AgentConnectError) return INGRESS_ERRORS.agentFailed;
  if (isRefusal(err)) return INGRESS_ERRORS.endpointOffline;
  if ((typeof err.code === 'string' && err.code.startsWith('HPE_')) || err.message === 'socket hang up') return INGRESS_ERRORS.invalidResponse;
  return INGRESS_ERRORS.agentFailed;
}

/** TunnelTarget.connect threw: the session is gone. */
export class AgentConnectError extends Error {}

/**
 * node:http's client and Agent call socket methods a plain Duplex lacks; as no-ops they lose
 * nothing: the stream has no Nagle, no TCP keepalive and no event-loop handle, and idle streams
 * live no longer than their client connection.
 */
export function asSocket(stream: Duplex): net.Socket {
  const s = stream as Duplex & Partial<Record<'setKeepAlive' | 'setNoDelay' | 'setTimeout' | 'ref' | 'unref', (...args: unknown[]) => unknown>>;
  for (const method of ['setKeepAlive', 'setNoDelay', 'setTimeout', 'ref', 'unref'] as const) {
    if (typeof s[method] !== 'function') s[method] = () => stream;
  }
  return stream as net.Socket;
}
