// Requests to identity providers: a fetch (the shape openid-client's customFetch takes) over
// node:https, so that the CAs the operator (or a test) trusts for identity providers apply, and
// so that no answer takes longer than the timeout or is longer than 1 MiB. Errors come out
// classified (unreachable, timed out, answered garbage), for the sign-in's error page.
import http from 'node:http';
import https from 'node:https';
import { EDGE_ERRORS, type IngressError } from '../errors.js';

/** The longest answer read from an identity provider. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** A failure to reach an identity provider, with the answer it means. */
export class IdpError extends Error {
  constructor(
    readonly error: IngressError,
    message: string,
  ) {
    super(message);
    this.name = 'IdpError';
  }
}

export interface IdpFetchOptions {
  timeoutMs: number;
  /** More CAs to trust (PEM), beside Node's (which NODE_EXTRA_CA_CERTS extends). */
  ca?: string;
}

type FetchInit = { method?: string; headers?: Record<string, string> | Headers; body?: unknown; signal?: AbortSignal | null };

const bodyText = (body: unknown): string | undefined =>
  body === undefined || body === null ? undefined : body instanceof URLSearchParams ? body.toString() : String(body);

/** A fetch toward identity providers: `timeoutMs` for the whole exchange, at most 1 MiB read, redirects not followed. */
export function idpFetch(options: IdpFetchOptions): (url: string | URL, init?: FetchInit) => Promise<Response> {
  const agent = options.ca ? new https.Agent({ ca: options.ca, keepAlive: true, maxSockets: 64 }) : undefined;
  return (url, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const target = new URL(url);
      const headers = init.headers instanceof Headers ? Object.fromEntries(init.headers) : { ...init.headers };
      const body = bodyText(init.body);
      if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
      const secure = target.protocol === 'https:';
      const req = (secure ? https : http).request(target, {
        method: init.method ?? 'GET',
        headers,
        ...(secure && agent && { agent }),
      });
      const fail = (err: IdpError) => {
        clearTimeout(timer);
        req.destroy();
        reject(err);
      };
      const timer = setTimeout(
        () => fail(new IdpError(EDGE_ERRORS.idpTimedOut, `${target.origin} did not answer within ${options.timeoutMs} ms`)),
        options.timeoutMs,
      );
      init.signal?.addEventListener('abort', () => fail(new IdpError(EDGE_ERRORS.idpTimedOut, `the request to ${target.origin} was aborted`)), { once: true });
      req.on('error', (err) => fail(new IdpError(EDGE_ERRORS.idpUnreachable, `${target.origin} could not be reached: ${err.message}`)));
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) return fail(new IdpError(EDGE_ERRORS.idpInvalid, `${target.origin} answered more than 1 MiB`));
          chunks.push(chunk);
        });
        res.on('error', (err) => fail(new IdpError(EDGE_ERRORS.idpUnreachable, `${target.origin} broke off its answer: ${err.message}`)));
        res.on('end', () => {
          clearTimeout(timer);
          const status = res.statusCode ?? 0;
          if (status < 200 || status > 599) return reject(new IdpError(EDGE_ERRORS.idpInvalid, `${target.origin} answered status ${status}`));
          const out = new Headers();
          for (const [name, value] of Object.entries(res.headers))
            for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) out.append(name, v);
          const empty = status === 204 || status === 304 || init.method === 'HEAD';
          resolve(new Response(empty ? null : Buffer.concat(chunks), { status, headers: out }));
        });
      });
      req.end(body);
    });
}

/** The classified failure of anything thrown while talking to a provider: ours as is, a library's as garbage. */
export function idpFailure(err: unknown): { error: IngressError; why: string } {
  if (err instanceof IdpError) return { error: err.error, why: err.message };
  // openid-client wraps a customFetch failure in its cause.
  const cause = (err as { cause?: unknown } | undefined)?.cause;
  if (cause instanceof IdpError) return { error: cause.error, why: cause.message };
  return { error: EDGE_ERRORS.idpInvalid, why: err instanceof Error ? `${err.name}: ${err.message}` : 'unknown failure' };
}
