// Webhook verification at the edge: the providers' table, one call that checks a request against a
// route's provider and secret, and the fetcher for the one scheme that needs a certificate (AWS SNS).
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { SCHEMES_A_L, isSnsCertificateUrl } from './providers-a-l.js';
import { SCHEMES_M_Z } from './providers-m-z.js';
import { MAX_WEBHOOK_BODY_BYTES, fail, type Verdict, type VerifyContext, type WebhookRequest, type WebhookScheme } from './scheme.js';

export { MAX_WEBHOOK_BODY_BYTES };
export type { Verdict, VerifyContext, WebhookRequest, WebhookScheme };

const SCHEMES = new Map<string, WebhookScheme>([...SCHEMES_A_L, ...SCHEMES_M_Z].map((scheme) => [scheme.provider, scheme]));

/** The scheme of a provider as the API names it (case-insensitive), or undefined. */
export function schemeOf(provider: string): WebhookScheme | undefined {
  return SCHEMES.get(provider.toLowerCase());
}

/** The status a refused request of the provider gets (403, or the one the provider acts on). */
export function refusalStatusOf(provider: string): 401 | 403 {
  return schemeOf(provider)?.refusalStatus ?? 403;
}

// ---------------------------------------------------------------------------------------------
// The SNS signing certificate

export interface CertificateFetcherOptions {
  /** The whole fetch, connection to last byte (default 5 s). */
  timeoutMs?: number;
  /** A larger answer is refused (default 64 KiB; an SNS certificate is about 2 KiB). */
  maxBytes?: number;
  /** Certificates kept, by URL, least recently used dropped first (default 64). */
  cacheSize?: number;
  /** For tests: where to connect instead, and the CA to trust for it. The URL and its host check are unchanged. */
  connect?: { lookup?: LookupFunction; port?: number; ca?: string };
}

/**
 * A fetcher for SNS signing certificates: https only, on an SNS host only (checked again here, not
 * only by the scheme), redirects not followed (a redirect could leave AWS), the answer's size and the
 * time it takes bounded, and certificates cached by URL (AWS names each certificate by its own URL, so
 * the text behind one does not change). A failed fetch is not cached.
 */
export function createCertificateFetcher(options: CertificateFetcherOptions = {}): (url: string) => Promise<string> {
  const timeoutMs = options.timeoutMs ?? 5000;
  const maxBytes = options.maxBytes ?? 64 * 1024;
  const cacheSize = options.cacheSize ?? 64;
  const cache = new Map<string, Promise<string>>(); // a Map keeps insertion order: the first key is the least recently used

  function download(url: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const request = httpsRequest(
        url,
        {
          method: 'GET',
          signal: AbortSignal.timeout(timeoutMs),
          lookup: options.connect?.lookup,
          port: options.connect?.port,
          ca: options.connect?.ca,
          agent: false,
        },
        (response) => {
          if (response.statusCode !== 200) {
            response.resume();
            reject(new Error(`the certificate URL answered ${response.statusCode} (redirects are not followed)`));
            return;
          }
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > maxBytes) request.destroy(new Error(`the certificate is larger than ${maxBytes} bytes`));
            else chunks.push(chunk);
          });
          response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
          response.on('error', reject);
        },
      );
      request.on('error', (error) => reject(error.name === 'AbortError' ? new Error(`the certificate fetch took longer than ${timeoutMs} ms`) : error));
      request.end();
    });
  }

  return (url) => {
    if (!isSnsCertificateUrl(url)) return Promise.reject(new Error('not an SNS certificate URL (https on sns.<region>.amazonaws.com)'));
    const cached = cache.get(url);
    if (cached) {
      cache.delete(url);
      cache.set(url, cached);
      return cached;
    }
    const pending = download(url);
    cache.set(url, pending);
    if (cache.size > cacheSize) cache.delete(cache.keys().next().value as string);
    pending.catch(() => {
      if (cache.get(url) === pending) cache.delete(url);
    });
    return pending;
  };
}

/** The edge's certificate fetcher, one cache for the process. */
export const fetchCertificate = createCertificateFetcher();

// ---------------------------------------------------------------------------------------------
// Verification

/**
 * Checks a request against a provider's published scheme and the route's secret. Never throws: an
 * unknown provider, a body over the limit and any error inside a scheme are refusals with a reason.
 * A reason never holds the secret or an expected signature.
 */
export async function verifyWebhook(provider: string, secret: string, request: WebhookRequest, context: Partial<VerifyContext> = {}): Promise<Verdict> {
  try {
    const scheme = schemeOf(provider);
    if (!scheme) return fail(`unknown webhook provider ${JSON.stringify(provider.slice(0, 64))}`);
    if (request.body.length > MAX_WEBHOOK_BODY_BYTES) return fail(`the body is larger than ${MAX_WEBHOOK_BODY_BYTES} bytes`);
    return await scheme.verify(secret, request, { now: context.now ?? new Date(), fetchCertificate: context.fetchCertificate ?? fetchCertificate });
  } catch (error) {
    return fail(`the request could not be verified: ${error instanceof Error ? error.message : String(error)}`);
  }
}
