// SSH public keys: parsing an authorized-keys line into a verified key, and turning a node:crypto
// key into its SSH blob. Only what a certificate authority of today should accept: RSA of 2048
// to 16384 bits, ECDSA on P-256/P-384/P-521, and Ed25519.
import { createPublicKey, type KeyObject } from 'node:crypto';
import { SshReader, SshWriter } from './wire.js';

export type KeyType = 'rsa' | 'ecdsa' | 'ed25519';
export type Curve = 'p256' | 'p384' | 'p521';

export const CURVES: Record<Curve, { ssh: string; identifier: string; jwk: string; hash: string; bytes: number }> = {
  p256: { ssh: 'ecdsa-sha2-nistp256', identifier: 'nistp256', jwk: 'P-256', hash: 'sha256', bytes: 32 },
  p384: { ssh: 'ecdsa-sha2-nistp384', identifier: 'nistp384', jwk: 'P-384', hash: 'sha384', bytes: 48 },
  p521: { ssh: 'ecdsa-sha2-nistp521', identifier: 'nistp521', jwk: 'P-521', hash: 'sha512', bytes: 66 },
};

export interface SshPublicKey {
  /** The key's SSH algorithm name: `ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`. */
  algorithm: string;
  keyType: KeyType;
  /** The wire blob: algorithm name and public parameters. */
  blob: Buffer;
  /** The public parameters only (what a certificate carries after its nonce). */
  fields: Buffer;
  bits: number;
  curve?: Curve;
}

export class KeyError extends Error {}

const b64u = (s: string) => Buffer.from(s, 'base64url');

/** The SSH form of a node:crypto public (or private) key. */
export function toSshPublicKey(key: KeyObject): SshPublicKey {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  const jwk = pub.export({ format: 'jwk' }) as { kty: string; crv?: string; x?: string; y?: string; n?: string; e?: string };
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') {
    const fields = new SshWriter().string(b64u(jwk.x!)).toBuffer();
    return { algorithm: 'ssh-ed25519', keyType: 'ed25519', fields, blob: new SshWriter().string('ssh-ed25519').raw(fields).toBuffer(), bits: 256 };
  }
  if (jwk.kty === 'EC') {
    const curve = (Object.keys(CURVES) as Curve[]).find((c) => CURVES[c].jwk === jwk.crv);
    if (!curve) throw new KeyError(`unsupported curve ${jwk.crv}`);
    const c = CURVES[curve];
    const point = Buffer.concat([Buffer.from([4]), b64u(jwk.x!).subarray(-c.bytes), b64u(jwk.y!).subarray(-c.bytes)]);
    const fields = new SshWriter().string(c.identifier).string(point).toBuffer();
    return {
      algorithm: c.ssh,
      keyType: 'ecdsa',
      curve,
      fields,
      blob: new SshWriter().string(c.ssh).raw(fields).toBuffer(),
      bits: c.bytes * 8 === 528 ? 521 : c.bytes * 8,
    };
  }
  if (jwk.kty === 'RSA') {
    const n = b64u(jwk.n!);
    const fields = new SshWriter().mpint(b64u(jwk.e!)).mpint(n).toBuffer();
    return {
      algorithm: 'ssh-rsa',
      keyType: 'rsa',
      fields,
      blob: new SshWriter().string('ssh-rsa').raw(fields).toBuffer(),
      bits: pub.asymmetricKeyDetails?.modulusLength ?? n.length * 8,
    };
  }
  throw new KeyError(`unsupported key type ${jwk.kty}`);
}

/** The algorithm name a wire blob starts with (RFC 4253 §6.6), or undefined when it has none. */
export function blobAlgorithm(blob: Buffer): string | undefined {
  if (blob.length < 4) return undefined;
  const length = blob.readUInt32BE(0);
  if (length === 0 || length > 64 || 4 + length > blob.length) return undefined;
  return blob.subarray(4, 4 + length).toString('latin1');
}

export function authorizedKeysLine(key: SshPublicKey, comment?: string): string {
  return `${key.algorithm} ${key.blob.toString('base64')}${comment ? ` ${comment}` : ''}`;
}

/**
 * RSA sizes a certificate authority accepts: 2048 bits at least; at most OpenSSH's
 * SSH_RSA_MAXIMUM_MODULUS_SIZE, 16384 (sshkey.c refuses larger keys); a public exponent of at
 * most 64 bits, OpenSSL's OPENSSL_RSA_MAX_PUBEXP_BITS, past which it refuses to verify with keys
 * above 3072 bits (real keys use 65537, 17 bits).
 */
export const RSA_MIN_BITS = 2048;
export const RSA_MAX_BITS = 16384;
export const RSA_MAX_EXPONENT_BITS = 64;

/** The bits of an unsigned big-endian integer without leading zero bytes. */
const bitLength = (b: Buffer) => (b.length === 0 ? 0 : (b.length - 1) * 8 + (32 - Math.clz32(b[0]!)));

function unsigned(b: Buffer): Buffer {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  return b.subarray(i);
}

/**
 * Parses `<algorithm> <base64> [comment]` and checks the key: it must decode, name the same
 * algorithm inside as outside, and be a key node:crypto accepts (a valid point on the curve,
 * a sane RSA modulus). The message of a KeyError says what is wrong, for the API's 400.
 */
export function parseAuthorizedKey(line: string): SshPublicKey {
  const text = line.trim();
  if (text.includes('PRIVATE KEY')) throw new KeyError('is a private key; send the public key (the .pub file), never the private one');
  const parts = text.split(/\s+/);
  if (parts.length < 2) throw new KeyError('is not an OpenSSH public key line such as "ssh-ed25519 AAAA… comment"');
  const [algorithm, encoded] = parts as [string, string];
  if (algorithm.endsWith('-cert-v01@openssh.com')) throw new KeyError('is a certificate; send the public key it certifies');
  if (algorithm === 'ssh-dss') throw new KeyError('is a DSA key, which is insecure and not supported; use Ed25519, ECDSA or RSA of at least 2048 bits');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) throw new KeyError('has a key part that is not base64');
  // Re-encode from the validated key, so what is signed is exactly a well-formed key.
  return toSshPublicKey(keyObjectOf(algorithm, Buffer.from(encoded, 'base64')));
}

/**
 * The node:crypto key of a public key's wire blob, checked as parseAuthorizedKey says; `algorithm`
 * is the name the blob must hold. KeyError says what is wrong.
 */
export function keyObjectOf(algorithm: string, blob: Buffer): KeyObject {
  try {
    const r = new SshReader(blob);
    const inner = r.text();
    if (inner !== algorithm) throw new KeyError(`says '${algorithm}' but holds a '${inner.slice(0, 40)}' key`);
    let key: KeyObject;
    if (algorithm === 'ssh-ed25519') {
      const pk = r.string();
      if (pk.length !== 32) throw new KeyError('has an Ed25519 key of the wrong length');
      key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: pk.toString('base64url') }, format: 'jwk' });
    } else if (algorithm.startsWith('ecdsa-sha2-')) {
      const curve = (Object.keys(CURVES) as Curve[]).find((c) => CURVES[c].ssh === algorithm);
      if (!curve) throw new KeyError(`uses the unsupported algorithm '${algorithm}'; ECDSA keys must be on nistp256, nistp384 or nistp521`);
      const c = CURVES[curve];
      if (r.text() !== c.identifier) throw new KeyError('names a curve that does not match its algorithm');
      const point = r.string();
      if (point.length !== 1 + 2 * c.bytes || point[0] !== 4) throw new KeyError('has an ECDSA point that is not an uncompressed point of its curve');
      key = createPublicKey({
        key: { kty: 'EC', crv: c.jwk, x: point.subarray(1, 1 + c.bytes).toString('base64url'), y: point.subarray(1 + c.bytes).toString('base64url') },
        format: 'jwk',
      });
    } else if (algorithm === 'ssh-rsa') {
      const e = unsigned(r.string());
      const n = unsigned(r.string());
      // What OpenSSH and OpenSSL would refuse to use, refused before it gets a certificate.
      const bits = bitLength(n);
      if (bits < RSA_MIN_BITS) throw new KeyError(`is an RSA key of ${bits} bits; RSA keys must have at least ${RSA_MIN_BITS} bits`);
      if (bits > RSA_MAX_BITS) throw new KeyError(`is an RSA key of ${bits} bits; OpenSSH refuses RSA keys of more than ${RSA_MAX_BITS} bits`);
      if (bitLength(e) > RSA_MAX_EXPONENT_BITS)
        throw new KeyError(
          `has an RSA public exponent of ${bitLength(e)} bits; at most ${RSA_MAX_EXPONENT_BITS} bits are accepted (OpenSSL refuses larger ones)`,
        );
      if (bitLength(e) < 2 || e[e.length - 1]! % 2 === 0 || n[n.length - 1]! % 2 === 0)
        throw new KeyError('has an RSA exponent or modulus that is even or below 3, which no working RSA key has');
      key = createPublicKey({ key: { kty: 'RSA', n: n.toString('base64url'), e: e.toString('base64url') }, format: 'jwk' });
    } else {
      throw new KeyError(`uses the unsupported algorithm '${algorithm.slice(0, 40)}'; use ssh-ed25519, ecdsa-sha2-nistp256/384/521 or ssh-rsa`);
    }
    if (!r.done) throw new KeyError('has trailing data after the key');
    return key;
  } catch (error) {
    if (error instanceof KeyError) throw error;
    throw new KeyError('could not be decoded as an SSH public key');
  }
}
