// The jwt-validation action: a token taken from the request (a header, with its prefix, or a
// field of a buffered form or JSON body), its JWS signature verified with `jose` against the keys
// of the JWKS URLs (`jws.keys.sources.additional_jkus`; with none, the token's issuer's, found by
// OpenID Connect discovery when that issuer is allowed), and its claims checked: `iss` one of the
// issuers, `aud` one of the audiences, `exp` and `nbf` against the clock, the algorithm one of the
// allowed ones (never `none`), and `typ` for the typed token types (`at+jwt`, `it+jwt`).
//
// JWKS are fetched with deps.fetch, cached per compiled policy for JWKS_TTL_MS, fetched again
// sooner when a token names a key id not in them (at most once per JWKS_COOLDOWN_MS); a JWKS that
// cannot be fetched while a copy is cached is served from the copy. A token that fails is a 401
// with `WWW-Authenticate: Bearer` (RFC 6750: `error="invalid_token"` when a token was given); keys
// that cannot be had at all (no copy, the fetch failed) are an error decision, since no token
// could be judged.
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { firstHeader, headerMap } from './cel-runtime.js';
import type { HeaderField, PolicyRequest } from './types.js';

export interface JwtConfig {
  issuer: { allow_list: { value: string }[] };
  audience: { allow_list: { value: string }[] };
  http: { tokens: { type: string; method: 'header' | 'body'; name: string; prefix?: string }[] };
  jws: { allowed_algorithms: string[]; keys?: { sources?: { additional_jkus?: string[] } } };
}

export const JWKS_TTL_MS = 10 * 60_000;
export const JWKS_COOLDOWN_MS = 30_000;
const FETCH_TIMEOUT_MS = 5_000;
const MAX_JWKS_BYTES = 1024 * 1024;

export type JwtOutcome = { ok: true } | { ok: false; status: 401; headers: HeaderField[]; body: string } | { ok: false; error: string };

/** Keys could not be had: the policy answers with an error decision. */
class KeysUnavailable extends Error {}

interface Cached {
  jwks: JSONWebKeySet;
  fetchedAt: number;
}

/** `typ` a token type requires (RFC 9068 access tokens, and ID tokens typed likewise). */
const TYPED: Record<string, string[]> = { 'at+jwt': ['at+jwt', 'application/at+jwt'], 'it+jwt': ['it+jwt', 'application/it+jwt'] };

function unauthorized(description?: string): JwtOutcome {
  const challenge = description === undefined ? 'Bearer' : `Bearer error="invalid_token", error_description="${description.replace(/["\\\r\n]/g, ' ')}"`;
  return {
    ok: false,
    status: 401,
    headers: [
      ['www-authenticate', challenge],
      ['content-type', 'text/plain; charset=utf-8'],
    ],
    body: `401 Unauthorized${description === undefined ? '' : `: ${description}`}\n`,
  };
}

/** A token from a buffered body: a form field, or a string member of a JSON object. */
function fromBody(req: PolicyRequest, name: string): string | undefined {
  if (req.body === undefined) return undefined;
  const text = typeof req.body === 'string' ? req.body : Buffer.from(req.body).toString('utf8');
  const type = firstHeader(headerMap(req.headers), 'content-type').toLowerCase();
  if (type.includes('json')) {
    try {
      const value = (JSON.parse(text) as Record<string, unknown> | null)?.[name];
      return typeof value === 'string' ? value : undefined;
    } catch {
      return undefined;
    }
  }
  return new URLSearchParams(text).get(name) ?? undefined;
}

export class JwtValidator {
  readonly needsBody: boolean;
  private readonly issuers: string[];
  private readonly audiences: string[];
  private readonly algorithms: string[];
  private readonly jkus: string[];
  private readonly cache = new Map<string, Cached>();
  private readonly pending = new Map<string, Promise<Cached>>();

  constructor(
    private readonly config: JwtConfig,
    private readonly fetcher: typeof fetch,
    private readonly clock: () => Date,
  ) {
    this.needsBody = config.http.tokens.some((token) => token.method === 'body');
    this.issuers = config.issuer.allow_list.map((item) => item.value);
    this.audiences = config.audience.allow_list.map((item) => item.value);
    this.algorithms = config.jws.allowed_algorithms;
    this.jkus = config.jws.keys?.sources?.additional_jkus ?? [];
  }

  /** The first token the request has, in the order of `http.tokens`, with its type. */
  private tokenOf(req: PolicyRequest): { token: string; type: string } | undefined {
    const headers = headerMap(req.headers);
    for (const source of this.config.http.tokens) {
      let value: string | undefined;
      if (source.method === 'header') {
        value = headers.get(source.name.toLowerCase())?.[0];
        const prefix = source.prefix ?? '';
        if (value !== undefined && prefix !== '') value = value.toLowerCase().startsWith(prefix.toLowerCase()) ? value.slice(prefix.length) : undefined;
      } else value = fromBody(req, source.name);
      value = value?.trim();
      if (value) return { token: value, type: source.type };
    }
    return undefined;
  }

  async validate(req: PolicyRequest): Promise<JwtOutcome> {
    const found = this.tokenOf(req);
    if (!found) return unauthorized();
    const now = this.clock();
    let issuer: string | undefined;
    try {
      decodeProtectedHeader(found.token);
      issuer = decodeJwt(found.token).iss;
    } catch {
      return unauthorized('the token is not a JWT');
    }
    try {
      await jwtVerify(found.token, this.keys(issuer, now.getTime()), {
        issuer: this.issuers,
        audience: this.audiences,
        algorithms: this.algorithms,
        currentDate: now,
        requiredClaims: ['iss', 'aud'],
      }).then(({ protectedHeader }) => {
        const typed = TYPED[found.type];
        if (typed && !typed.includes(String(protectedHeader.typ ?? '').toLowerCase())) throw new errors.JWTInvalid(`the token's typ is not ${found.type}`);
      });
      return { ok: true };
    } catch (error) {
      if (error instanceof KeysUnavailable) return { ok: false, error: error.message };
      return unauthorized(describe(error));
    }
  }

  /** The key getter for a token of `issuer`: the merged keys of every JWKS URL, fetched again once when none has the token's key. */
  private keys(issuer: string | undefined, now: number): JWTVerifyGetKey {
    return async (header, token) => {
      const urls = this.jkus.length > 0 ? this.jkus : issuer !== undefined && this.issuers.includes(issuer) ? [await this.discover(issuer, now)] : [];
      if (urls.length === 0) throw new errors.JWKSNoMatchingKey('no JWKS URL is configured, and the issuer is not allowed');
      const merged = async (force: boolean) =>
        createLocalJWKSet({ keys: (await Promise.all(urls.map((url) => this.jwks(url, now, force)))).flatMap((c) => c.jwks.keys) });
      try {
        return await (
          await merged(false)
        )(header, token);
      } catch (error) {
        if (!(error instanceof errors.JWKSNoMatchingKey) || !urls.some((url) => now - (this.cache.get(url)?.fetchedAt ?? 0) >= JWKS_COOLDOWN_MS)) throw error;
        return (await merged(true))(header, token);
      }
    };
  }

  /** The JWKS at `url`: the cached copy while fresh (or when `force`d, once it is past the cooldown), else fetched. */
  private async jwks(url: string, now: number, force: boolean): Promise<Cached> {
    const cached = this.cache.get(url);
    const age = cached ? now - cached.fetchedAt : Infinity;
    if (cached && age < JWKS_TTL_MS && !(force && age >= JWKS_COOLDOWN_MS)) return cached;
    try {
      return await this.fetchOnce(url, async (body) => {
        const jwks = body as JSONWebKeySet;
        if (!Array.isArray(jwks?.keys)) throw new Error('it is not a JWKS (no keys list)');
        return { jwks, fetchedAt: now };
      });
    } catch (error) {
      if (cached) return cached;
      throw new KeysUnavailable(`jwt-validation could not fetch the JWKS at ${url}: ${(error as Error).message}`);
    }
  }

  /** The `jwks_uri` of `issuer`'s OpenID configuration (cached as a JWKS URL is). */
  private async discover(issuer: string, now: number): Promise<string> {
    const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    const cached = this.cache.get(url);
    if (cached && now - cached.fetchedAt < JWKS_TTL_MS) return (cached.jwks as unknown as { jwks_uri: string }).jwks_uri;
    try {
      const found = await this.fetchOnce(url, async (body) => {
        const uri = (body as { jwks_uri?: unknown } | null)?.jwks_uri;
        if (typeof uri !== 'string') throw new Error('it has no jwks_uri');
        return { jwks: { jwks_uri: uri } as unknown as JSONWebKeySet, fetchedAt: now };
      });
      return (found.jwks as unknown as { jwks_uri: string }).jwks_uri;
    } catch (error) {
      if (cached) return (cached.jwks as unknown as { jwks_uri: string }).jwks_uri;
      throw new KeysUnavailable(`jwt-validation could not discover the keys of ${issuer}: ${(error as Error).message}`);
    }
  }

  /** One fetch of `url` at a time, however many requests wait on it; its JSON read into the cache by `read`. */
  private fetchOnce(url: string, read: (body: unknown) => Promise<Cached>): Promise<Cached> {
    let pending = this.pending.get(url);
    if (!pending) {
      pending = (async () => {
        if (!/^https?:\/\//i.test(url)) throw new Error('it is not an http(s) URL');
        const response = await this.fetcher(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), headers: { accept: 'application/json' } });
        if (!response.ok) throw new Error(`it answered ${response.status}`);
        const text = await response.text();
        if (text.length > MAX_JWKS_BYTES) throw new Error('it is larger than 1 MiB');
        const cached = await read(JSON.parse(text) as unknown);
        this.cache.set(url, cached);
        return cached;
      })().finally(() => this.pending.delete(url));
      this.pending.set(url, pending);
    }
    return pending;
  }
}

/** Why a token failed, in words fit for a WWW-Authenticate header (no token content). */
function describe(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'the token has expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'iss') return 'the token is not from an allowed issuer';
    if (error.claim === 'aud') return 'the token is not for an allowed audience';
    if (error.claim === 'nbf') return 'the token is not valid yet';
    return `the token's ${error.claim} claim is invalid`;
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return "the token's algorithm is not allowed";
  if (error instanceof errors.JWKSNoMatchingKey) return 'no key verifies the token';
  if (error instanceof errors.JWSSignatureVerificationFailed) return "the token's signature is invalid";
  if (error instanceof errors.JWTInvalid || error instanceof errors.JWSInvalid) return (error as Error).message.replace(/[^\x20-\x7e]/g, ' ');
  return 'the token is invalid';
}
