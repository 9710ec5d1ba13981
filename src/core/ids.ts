// Resource identifiers: `<prefix>_<27 base62 chars>` in the KSUID layout (4 bytes of seconds
// since the KSUID epoch, then 16 random bytes), so that ids sort by creation time.
//
// Written by hand because the KSUID packages on npm are unmaintained and none is monotonic:
// within one second this generator increments the previous payload instead of drawing a new
// random one, so ids made by one process sort in creation order, and "newest first" is exact
// for everything a single instance creates.
import { createHash, randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KSUID_EPOCH = 1_400_000_000;
const ENCODED_LENGTH = 27;

export const ID_BODY = /^[0-9A-Za-z]{27}$/;

// Ids are made on every request (operation ids), so this is kept cheap: the id is held as five
// 32-bit words (seconds, then 128 bits of payload), random words come from a pooled CSPRNG
// buffer instead of one system call each, and base62 is long division over the words.
const POOL_WORDS = 1024;
let pool = new Uint32Array(randomBytes(POOL_WORDS * 4).buffer);
let poolIndex = 0;

function randomWord(): number {
  if (poolIndex === POOL_WORDS) {
    pool = new Uint32Array(randomBytes(POOL_WORDS * 4).buffer);
    poolIndex = 0;
  }
  return pool[poolIndex++]!;
}

function encodeBase62(source: Uint32Array): string {
  const words = Uint32Array.from(source);
  let out = '';
  for (let d = 0; d < ENCODED_LENGTH; d++) {
    let remainder = 0;
    for (let i = 0; i < words.length; i++) {
      // remainder * 2^32 + word < 62 * 2^32: exact in a double
      const value = remainder * 0x1_0000_0000 + words[i]!;
      const quotient = Math.floor(value / 62);
      words[i] = quotient;
      remainder = value - quotient * 62;
    }
    out = ALPHABET[remainder]! + out;
  }
  return out;
}

// The last id made, as base62 digit values. Within one second the next id is the last one plus
// a random step (1..256), added digit by digit: cheaper than encoding 160 bits again, and the
// same number as incrementing the payload.
let lastDigits: number[] = [];
let lastSecond = -1;

/** A new KSUID body (27 base62 characters). */
export function ksuid(now: number = Date.now()): string {
  const second = Math.max(0, Math.floor(now / 1000) - KSUID_EPOCH);
  if (second !== lastSecond) {
    lastSecond = second;
    const words = Uint32Array.of(second >>> 0, randomWord(), randomWord(), randomWord(), randomWord());
    lastDigits = [...encodeBase62(words)].map((c) => ALPHABET.indexOf(c));
  } else {
    let carry = 1 + (randomWord() & 0xff);
    for (let i = ENCODED_LENGTH - 1; i >= 0 && carry > 0; i--) {
      const sum = lastDigits[i]! + carry;
      lastDigits[i] = sum % 62;
      carry = Math.floor(sum / 62);
    }
  }
  let out = '';
  for (const d of lastDigits) out += ALPHABET[d];
  return out;
}

export function newId(prefix: string, now?: number): string {
  return `${prefix}_${ksuid(now)}`;
}

/** True when `value` is a well-formed id with exactly this prefix. */
export function hasPrefix(value: string, prefix: string): boolean {
  return value.length === prefix.length + 1 + ENCODED_LENGTH && value.startsWith(prefix + '_') && ID_BODY.test(value.slice(prefix.length + 1));
}

/**
 * A random base62 string of `length` characters from the CSPRNG (rejection sampling, no bias).
 * It draws from the same pooled CSPRNG output as ids, each word used once: a system call per
 * API key token was 7 % of POST /api_keys.
 */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const word = randomWord();
    for (let shift = 0; shift < 32 && out.length < length; shift += 8) {
      const byte = (word >>> shift) & 0xff;
      if (byte < 248) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

/**
 * An id that is the same every time it is derived from the same `seed` (a labeled tunnel's id
 * across its agent's reconnects, say): the KSUID layout with `at` as its time and the first 16
 * bytes of the seed's SHA-256 as its payload.
 */
export function derivedId(prefix: string, at: Date, seed: string): string {
  const digest = createHash('sha256').update(seed).digest();
  const second = Math.max(0, Math.floor(at.getTime() / 1000) - KSUID_EPOCH);
  const words = Uint32Array.of(second >>> 0, digest.readUInt32BE(0), digest.readUInt32BE(4), digest.readUInt32BE(8), digest.readUInt32BE(12));
  return `${prefix}_${encodeBase62(words)}`;
}

/** The time an id was made (its KSUID seconds); the epoch itself for a body that is not base62. */
export function idTime(id: string): Date {
  const body = id.slice(id.lastIndexOf('_') + 1);
  let seconds = 0;
  if (ID_BODY.test(body)) {
    // The top 32 of the 160 bits: divide the base62 number by 2^128, digit by digit.
    let value = 0n;
    for (const c of body) value = value * 62n + BigInt(ALPHABET.indexOf(c));
    seconds = Number(value >> 128n);
  }
  return new Date((seconds + KSUID_EPOCH) * 1000);
}
