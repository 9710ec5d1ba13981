// What a webhook provider's signature scheme is to the edge: a check of one request against the
// route's secret, and where the provider publishes the scheme. The schemes themselves are in the
// providers-*.ts tables; docs/webhooks.md lists them, one row each, with their sources.
import { createHmac, timingSafeEqual, type BinaryLike } from 'node:crypto';

/** A request as the provider sent it, body read whole. */
export interface WebhookRequest {
  method: string;
  /** The URL it was sent to, as the provider saw it: `https://host/path?query`. */
  url: string;
  /** Header values by lower-case name; a repeated header's values joined with `, ` (as node:http does). */
  headers: Readonly<Record<string, string | undefined>>;
  body: Buffer;
}

export type Verdict = { ok: true } | { ok: false; reason: string };

export interface VerifyContext {
  now: Date;
  /**
   * A public key or certificate (PEM) a provider publishes at a URL the request names (AWS SNS's
   * signing certificate). The edge fetches it from the provider's own hosts only; tests give their own.
   */
  fetchCertificate(url: string): Promise<string>;
}

export interface WebhookScheme {
  /** The provider as the API names it (lower case). */
  provider: string;
  /** Where the provider publishes the scheme. */
  source: string;
  /** Checks one request; never throws on bad input (a verdict says why). */
  verify(secret: string, request: WebhookRequest, context: VerifyContext): Verdict | Promise<Verdict>;
  /** The status a refused request gets: 403, unless the provider acts on another (Xero wants 401). */
  refusalStatus?: 401 | 403;
}

export const PASS: Verdict = { ok: true };
export const fail = (reason: string): Verdict => ({ ok: false, reason });

/** HMAC of `data` under `key`. */
export function hmac(algorithm: 'sha1' | 'sha256' | 'sha512', key: BinaryLike, ...data: (string | Buffer)[]): Buffer {
  const mac = createHmac(algorithm, key);
  for (const part of data) mac.update(part);
  return mac.digest();
}

const SHAPES = { hex: /^(?:[0-9a-fA-F]{2})+$/, base64: /^[A-Za-z0-9+/]+={0,2}$/, base64url: /^[A-Za-z0-9_-]+={0,2}$/ } as const;

/** Whether `given` (text in `encoding`) is `expected`, compared in constant time; text not wholly in `encoding` is not. */
export function sameDigest(expected: Buffer, given: string | undefined, encoding: 'hex' | 'base64' | 'base64url'): boolean {
  const text = given?.trim();
  if (!text || !SHAPES[encoding].test(text)) return false;
  const decoded = Buffer.from(text, encoding);
  return decoded.length === expected.length && timingSafeEqual(decoded, expected);
}

/** Whether a timestamp (seconds since the epoch) is within `toleranceSeconds` of now, either way. */
export function fresh(timestampSeconds: number, context: VerifyContext, toleranceSeconds: number): boolean {
  return Number.isFinite(timestampSeconds) && Math.abs(context.now.getTime() / 1000 - timestampSeconds) <= toleranceSeconds;
}

/**
 * The largest body the edge reads to verify a webhook. Providers' own caps are mostly far below this
 * (AWS SNS 256 KiB); GitHub's is 25 MB, but its deliveries that large are rare and buffering that much
 * per request at the edge is not worth it. A larger body is refused with a reason, never truncated.
 */
export const MAX_WEBHOOK_BODY_BYTES = 1024 * 1024;

/**
 * The window, either way, for a provider that signs a time but documents none: 180 s, what ngrok's
 * documentation says it uses in that case, so that a route moved from ngrok accepts what it did.
 */
export const UNDOCUMENTED_TOLERANCE_SECONDS = 180;
