// The API key token: `<key id without "ak_">_<secret>`. Only SHA-256 of the secret is stored.
import { hash } from 'node:crypto';
import { errors } from '../../core/errors.js';
import { newId, randomBase62 } from '../../core/ids.js';

const SECRET_LENGTH = 40;
const TOKEN = /^([0-9A-Za-z]{27})_([0-9A-Za-z]{32,128})$/;
const KEY_ID = /^ak_[0-9A-Za-z]{27}$/;

/**
 * SHA-256 of a token's secret, as lowercase hex: what is stored, and what a presented token's
 * secret is compared with on every request. The one-shot `hash` costs a fifth of
 * `createHash().update().digest()` (0.8 µs against 4.2 µs here), and this runs per request.
 */
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/**
 * Whether two hex digests are equal, in time that does not depend on where they differ.
 * By hand because `timingSafeEqual` takes Buffers, and making two per request costs more
 * than the hash; a digest's length is public (always 64), so only its characters matter.
 */
export function sameDigest(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/** A new key id, its token (shown once) and the hash that is stored instead. */
export function newKeyMaterial(): { id: string; token: string; secret_hash: string } {
  const id = newId('ak');
  const secret = randomBase62(SECRET_LENGTH);
  return { id, token: `${id.slice('ak_'.length)}_${secret}`, secret_hash: hashSecret(secret) };
}

/** The key id and secret of an `Authorization: Bearer <token>` header, or the 401 that says what is wrong. */
export function parseAuthorization(header: string | undefined): { keyId: string; secret: string } {
  if (header === undefined || header.trim() === '') throw errors.missingAuthorization();
  const space = header.indexOf(' ');
  const scheme = space === -1 ? header : header.slice(0, space);
  if (scheme.toLowerCase() !== 'bearer') throw errors.unsupportedAuthScheme({ scheme: scheme.slice(0, 20) });
  const token = header.slice(space + 1).trim();
  const match = TOKEN.exec(token);
  if (!match) throw KEY_ID.test(token) ? errors.tokenIsKeyId() : errors.malformedToken();
  return { keyId: `ak_${match[1]}`, secret: match[2]! };
}
