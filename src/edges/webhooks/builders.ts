// The readers and scheme builders both providers' tables share (providers-a-l.ts, providers-m-z.ts):
// header lookup, `k=v` pairs, verdicts, and the shapes several providers sign in (an HMAC of the body
// in a header; Stripe's `t=…,v1=…`; Slack's `v0=…` over `v0:<time>:<body>`; Standard Webhooks / Svix).
// One version each, so a fix to a shape reaches every provider that signs that way.
import { createHash, timingSafeEqual, type BinaryLike } from 'node:crypto';
import { PASS, fail, fresh, hmac, sameDigest, type Verdict, type VerifyContext, type WebhookRequest, type WebhookScheme } from './scheme.js';

export type Algorithm = 'sha1' | 'sha256' | 'sha512';
export type Encoding = 'hex' | 'base64' | 'base64url';

export const FIVE_MINUTES = 300;

/** Standard base64 text, padding optional. */
export const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

// ---------------------------------------------------------------------------------------------
// Small readers

/** The first of `names` the request carries, trimmed; an empty value counts as absent. */
export function header(request: WebhookRequest, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = request.headers[name]?.trim();
    if (value) return value;
  }
  return undefined;
}

/** `k1=v1,k2=v2` (the shape of Stripe-like signature headers) as pairs; a repeated key keeps every value, in order. */
export function pairs(value: string): Map<string, string[]> {
  const result = new Map<string, string[]>();
  for (const part of value.split(',')) {
    const at = part.indexOf('=');
    if (at <= 0) continue;
    const key = part.slice(0, at).trim();
    result.set(key, [...(result.get(key) ?? []), part.slice(at + 1).trim()]);
  }
  return result;
}

/**
 * `value` without `prefix` (`sha256=`, `v0=`), or undefined when it does not start with it. The
 * prefix is a label, compared case-insensitively; the digest after it is what is checked.
 */
export function withoutPrefix(value: string | undefined, prefix: string): string | undefined {
  if (value === undefined) return undefined;
  return value.slice(0, prefix.length).toLowerCase() === prefix.toLowerCase() ? value.slice(prefix.length) : undefined;
}

/** A whole number of seconds or milliseconds written as digits only, as the providers send it; anything else is NaN. */
export function integer(text: string | undefined): number {
  return text !== undefined && /^\d{1,16}$/.test(text) ? Number(text) : NaN;
}

/** Whether any of `candidates` is `expected` in `encoding`. */
export function anyDigest(expected: Buffer, candidates: readonly (string | undefined)[], encoding: Encoding): boolean {
  return candidates.some((candidate) => sameDigest(expected, candidate, encoding));
}

/** Whether a token equals the secret, in constant time whatever the two lengths (both are hashed first). */
export function sameToken(given: string | undefined, secret: string): boolean {
  if (!given) return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(secret));
}

/** A GET with no body carrying every one of `parameters` in its query: the handshake some providers send unsigned. */
export function unsignedGet(request: WebhookRequest, ...parameters: string[]): boolean {
  if (request.method.toUpperCase() !== 'GET' || request.body.length > 0) return false;
  try {
    const query = new URL(request.url).searchParams;
    return parameters.every((parameter) => query.has(parameter));
  } catch {
    return false;
  }
}

export const matches = (ok: boolean, what: string): Verdict => (ok ? PASS : fail(`${what} does not match`));
export const missing = (...names: string[]): Verdict => fail(`missing ${names.join(' or ')} header`);
/** A timestamp outside the window; the m–z schemes also give this for one that is absent or not a time. */
export const stale = (what: string, seconds: number): Verdict => fail(`${what} is not within ${seconds} seconds of now (missing, stale or replayed)`);

// ---------------------------------------------------------------------------------------------
// The common shape: an HMAC of the raw body in one header

export interface BodySignature {
  header: string;
  /** Text before the digest in the header's value (`sha256=`). */
  prefix?: string;
  algorithm: Algorithm;
  encoding: Encoding;
}

export interface BodyHmacScheme {
  provider: string;
  source: string;
  /** Where the signature may be, in order of preference: the first header present is the one checked. */
  signatures: BodySignature[];
  /** The HMAC keys the secret stands for (default: the secret itself). */
  keys?: (secret: string) => BinaryLike[];
  /** A request the provider sends unsigned by design (an endpoint challenge), which passes as it is. */
  unsignedChallenge?: (request: WebhookRequest) => boolean;
}

export function bodyHmac(scheme: BodyHmacScheme): WebhookScheme {
  return {
    provider: scheme.provider,
    source: scheme.source,
    verify(secret, request) {
      if (scheme.unsignedChallenge?.(request)) return PASS;
      for (const signature of scheme.signatures) {
        const value = header(request, signature.header);
        if (value === undefined) continue;
        const digest = signature.prefix === undefined ? value : withoutPrefix(value, signature.prefix);
        if (digest === undefined) return fail(`${signature.header} does not start with ${signature.prefix}`);
        const keys = scheme.keys?.(secret) ?? [secret];
        const ok = keys.some((key) => sameDigest(hmac(signature.algorithm, key, request.body), digest, signature.encoding));
        return matches(ok, signature.header);
      }
      return missing(...scheme.signatures.map((signature) => signature.header));
    },
  };
}

// Meta (Graph API, Messenger, Instagram, WhatsApp) signs with the app secret; X-Hub-Signature (SHA-1)
// is the older header it still sends alongside, read only when the SHA-256 one is absent.
export const META_SIGNATURES: BodySignature[] = [
  { header: 'x-hub-signature-256', prefix: 'sha256=', algorithm: 'sha256', encoding: 'hex' },
  { header: 'x-hub-signature', prefix: 'sha1=', algorithm: 'sha1', encoding: 'hex' },
];

// ---------------------------------------------------------------------------------------------
// A timestamp and a signature in one header (`t=…,v1=…`), the HMAC-SHA256 over `<timestamp>.<body>`
// (Stripe's shape, which Calendly, Go1, HostedHooks, Buildkite, Mux and TikTok copy)

export interface StampedScheme {
  provider: string;
  source: string;
  /** The header's names, in order of preference (a provider's docs may give more than one). */
  headers: string[];
  timestampKey: string;
  signatureKey: string;
  toleranceSeconds: number;
}

export function stampedHeader(scheme: StampedScheme): WebhookScheme {
  return {
    provider: scheme.provider,
    source: scheme.source,
    verify(secret, request, context) {
      const value = header(request, ...scheme.headers);
      if (value === undefined) return missing(...scheme.headers);
      return checkStamped(scheme, value, secret, request, context);
    },
  };
}

/** Checks a `t=…,v1=…` header's value (for a provider that sends it or something else, as Buildkite does). */
export function checkStamped(scheme: StampedScheme, value: string, secret: string, request: WebhookRequest, context: VerifyContext): Verdict {
  const fields = pairs(value);
  const stamp = fields.get(scheme.timestampKey)?.[0];
  const signatures = fields.get(scheme.signatureKey) ?? [];
  const timestamp = integer(stamp);
  if (Number.isNaN(timestamp) || signatures.length === 0)
    return fail(`${scheme.headers[0]} lacks ${scheme.timestampKey}=<seconds> or ${scheme.signatureKey}=<signature>`);
  if (!fresh(timestamp, context, scheme.toleranceSeconds)) return stale('the signature timestamp', scheme.toleranceSeconds);
  return matches(anyDigest(hmac('sha256', secret, `${stamp}.`, request.body), signatures, 'hex'), scheme.headers[0]);
}

// A version tag, a timestamp header and the body: `<version>=<hex>` over `<version>:<timestamp>:<body>`
// with HMAC-SHA256 (Slack's shape, which Frame.io, Pinwheel and Zoom copy)

export interface VersionedScheme {
  provider: string;
  source: string;
  signatureHeader: string;
  /** The header holding the signed time, in seconds. */
  timestampHeader: string;
  /** The tag before the digest and in front of the signed text (`v0`). */
  version: string;
  toleranceSeconds: number;
}

export function versionedHmac(scheme: VersionedScheme): WebhookScheme {
  const { signatureHeader, timestampHeader, version, toleranceSeconds } = scheme;
  return {
    provider: scheme.provider,
    source: scheme.source,
    verify(secret, request, context) {
      const value = header(request, signatureHeader);
      const stamp = header(request, timestampHeader);
      if (value === undefined || stamp === undefined) return missing(signatureHeader, timestampHeader);
      const timestamp = integer(stamp);
      if (Number.isNaN(timestamp)) return fail(`${timestampHeader} is not a number of seconds`);
      if (!fresh(timestamp, context, toleranceSeconds)) return stale(timestampHeader, toleranceSeconds);
      const signature = withoutPrefix(value, `${version}=`);
      if (signature === undefined) return fail(`${signatureHeader} does not start with ${version}=`);
      return matches(sameDigest(hmac('sha256', secret, `${version}:${stamp}:`, request.body), signature, 'hex'), signatureHeader);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Standard Webhooks / Svix: `<id>.<timestamp>.<body>` under the base64 key after `whsec_`

/** The HMAC key of a `whsec_<base64>` secret (Brex's API hands out the base64 alone). Undefined when it is not base64. */
export function standardKey(secret: string): Buffer | undefined {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  return BASE64.test(encoded) ? Buffer.from(encoded, 'base64') : undefined;
}

/** Checks `<prefix>-id`, `<prefix>-timestamp` (five minutes) and `<prefix>-signature` under any of `keys`. */
export function checkStandard(prefix: string, keys: Buffer[], request: WebhookRequest, context: VerifyContext): Verdict {
  const id = header(request, `${prefix}-id`);
  const stamp = header(request, `${prefix}-timestamp`);
  if (id === undefined || stamp === undefined) return missing(`${prefix}-id`, `${prefix}-timestamp`);
  const timestamp = integer(stamp);
  if (Number.isNaN(timestamp)) return fail(`${prefix}-timestamp is not a number of seconds`);
  if (!fresh(timestamp, context, FIVE_MINUTES)) return stale(`${prefix}-timestamp`, FIVE_MINUTES);
  // Several space-separated `v1,<base64>` entries while the sender rotates its key; one is enough.
  const signatures = (header(request, `${prefix}-signature`) ?? '').split(' ').map((entry) => withoutPrefix(entry, 'v1,'));
  return matches(
    keys.some((key) => anyDigest(hmac('sha256', key, `${id}.${stamp}.`, request.body), signatures, 'base64')),
    `${prefix}-signature`,
  );
}

/** Standard Webhooks, with the header prefixes the provider may use (`webhook-`, `svix-`), the first present checked. */
export function standardWebhooks(provider: string, source: string, prefixes: string[]): WebhookScheme {
  return {
    provider,
    source,
    verify(secret, request, context) {
      const prefix = prefixes.find((candidate) => header(request, `${candidate}-signature`) !== undefined);
      if (prefix === undefined) return missing(...prefixes.map((candidate) => `${candidate}-signature`));
      const key = standardKey(secret);
      if (key === undefined) return fail('the secret is not a whsec_ secret (base64 after the prefix)');
      return checkStandard(prefix, [key], request, context);
    },
  };
}
