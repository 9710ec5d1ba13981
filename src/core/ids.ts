// Resource identifiers: `<prefix>_<27 base62 chars>` in the KSUID layout (4 bytes of seconds
// since the KSUID epoch, then 16 random bytes), so that ids sort by creation time.
//
// Written by hand because the KSUID packages on npm are unmaintained and none is monotonic:
// within one second this generator increments the previous payload instead of drawing a new
// random one, so ids made by one process sort in creation order, and "newest first" is exact
// for everything a single instance creates.
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KSUID_EPOCH = 1_400_000_000;
const ENCODED_LENGTH = 27;
const BYTES = 20;

export const ID_BODY = /^[0-9A-Za-z]{27}$/;

function encodeBase62(bytes: Uint8Array): string {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(ENCODED_LENGTH, '0');
}

let lastSecond = -1;
let lastPayload = Buffer.alloc(16);

function nextPayload(second: number): Buffer {
  if (second === lastSecond) {
    // Increment by a random step so ids stay unguessable yet ordered.
    const next = Buffer.from(lastPayload);
    let carry = 1 + (randomBytes(1)[0] ?? 0);
    for (let i = next.length - 1; i >= 0 && carry > 0; i--) {
      const sum = next[i]! + carry;
      next[i] = sum & 0xff;
      carry = sum >> 8;
    }
    if (carry === 0) {
      lastPayload = next;
      return next;
    }
    // Overflow within one second is practically impossible; fall back to a fresh payload.
  }
  lastSecond = second;
  lastPayload = randomBytes(16);
  return lastPayload;
}

/** A new KSUID body (27 base62 characters). */
export function ksuid(now: number = Date.now()): string {
  const second = Math.max(0, Math.floor(now / 1000) - KSUID_EPOCH);
  const bytes = Buffer.alloc(BYTES);
  bytes.writeUInt32BE(second >>> 0, 0);
  nextPayload(second).copy(bytes, 4);
  return encodeBase62(bytes);
}

export function newId(prefix: string, now?: number): string {
  return `${prefix}_${ksuid(now)}`;
}

/** True when `value` is a well-formed id with exactly this prefix. */
export function hasPrefix(value: string, prefix: string): boolean {
  return value.length === prefix.length + 1 + ENCODED_LENGTH && value.startsWith(prefix + '_') && ID_BODY.test(value.slice(prefix.length + 1));
}

/** A random base62 string of `length` characters from the CSPRNG (rejection sampling, no bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248) out += ALPHABET[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}
