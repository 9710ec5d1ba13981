// OpenSSH certificates, encoded as PROTOCOL.certkeys describes them and signed with node:crypto,
// and read back (with their signatures checked) when an `ssh -R` client signs in with one.
// Written by hand: the npm libraries that write certificates either do not sign with
// rsa-sha2-512 or do not carry arbitrary critical options and extensions, ssh2 (the SSH listener's
// library) neither reads nor checks them, and the format is a few dozen lines of the SSH wire encoding.
import { randomBytes, sign, verify, type KeyObject } from 'node:crypto';
import { CURVES, keyObjectOf, toSshPublicKey, type SshPublicKey } from './keys.js';
import { SshReader, SshWriter } from './wire.js';

export type CertificateType = 'user' | 'host';

export interface CertificateRequest {
  type: CertificateType;
  subject: SshPublicKey;
  keyId: string;
  /** Random and non-zero when not given. */
  serial?: bigint;
  principals: readonly string[];
  validAfter: Date;
  validBefore: Date;
  criticalOptions?: Record<string, string>;
  extensions?: Record<string, string>;
}

export interface SignedCertificate {
  /** `ssh-ed25519-cert-v01@openssh.com` and so on. */
  algorithm: string;
  blob: Buffer;
  serial: bigint;
}

const seconds = (d: Date) => BigInt(Math.floor(d.getTime() / 1000));

/** Options and extensions: sorted by name; a value is wrapped in a string of its own, a flag is empty. */
function packOptions(options: Record<string, string>): Buffer {
  const w = new SshWriter();
  for (const name of Object.keys(options).sort()) {
    const value = options[name]!;
    w.string(name).string(value === '' ? Buffer.alloc(0) : new SshWriter().string(value).toBuffer());
  }
  return w.toBuffer();
}

function randomSerial(): bigint {
  for (;;) {
    const serial = randomBytes(8).readBigUInt64BE();
    if (serial !== 0n) return serial;
  }
}

/** The signature blob of `data` by the CA: RSA keys sign with rsa-sha2-512. */
function signatureBlob(ca: KeyObject, caPublic: SshPublicKey, data: Buffer): Buffer {
  if (caPublic.keyType === 'ed25519')
    return new SshWriter()
      .string('ssh-ed25519')
      .string(sign(null, data, ca))
      .toBuffer();
  if (caPublic.keyType === 'ecdsa') {
    const curve = CURVES[caPublic.curve!];
    const rs = sign(curve.hash, data, { key: ca, dsaEncoding: 'ieee-p1363' });
    const half = rs.length / 2;
    const inner = new SshWriter().mpint(rs.subarray(0, half)).mpint(rs.subarray(half)).toBuffer();
    return new SshWriter().string(curve.ssh).string(inner).toBuffer();
  }
  return new SshWriter()
    .string('rsa-sha2-512')
    .string(sign('sha512', data, ca))
    .toBuffer();
}

/** Signs with `ca`; pass its SSH public key when known, to spare deriving it again. */
export function signCertificate(ca: KeyObject, request: CertificateRequest, caPublic: SshPublicKey = toSshPublicKey(ca)): SignedCertificate {
  const algorithm = `${request.subject.algorithm}-cert-v01@openssh.com`;
  const serial = request.serial ?? randomSerial();
  const principals = new SshWriter();
  for (const p of request.principals) principals.string(p);
  const body = new SshWriter()
    .string(algorithm)
    .string(randomBytes(32))
    .raw(request.subject.fields)
    .uint64(serial)
    .uint32(request.type === 'user' ? 1 : 2)
    .string(request.keyId)
    .string(principals.toBuffer())
    .uint64(seconds(request.validAfter))
    .uint64(seconds(request.validBefore))
    .string(packOptions(request.criticalOptions ?? {}))
    .string(packOptions(request.extensions ?? {}))
    .string(Buffer.alloc(0))
    .string(caPublic.blob)
    .toBuffer();
  const blob = Buffer.concat([body, new SshWriter().string(signatureBlob(ca, caPublic, body)).toBuffer()]);
  return { algorithm, blob, serial };
}

export function certificateLine(cert: SignedCertificate, comment: string): string {
  return `${cert.algorithm} ${cert.blob.toString('base64')} ${comment}`;
}

/** A certificate as a server reads it when a client signs in with one. */
export interface ParsedCertificate {
  /** The certified key's algorithm: `ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`. */
  keyAlgorithm: string;
  /** The certified key's wire blob. */
  subject: Buffer;
  serial: bigint;
  type: CertificateType;
  keyId: string;
  principals: string[];
  /** Seconds since the epoch. */
  validAfter: bigint;
  validBefore: bigint;
  /** The names of its critical options. */
  criticalOptions: string[];
  /** The CA's public key blob, and its signature blob over `signed`. */
  signatureKey: Buffer;
  signature: Buffer;
  signed: Buffer;
}

const CERT_SUFFIX = '-cert-v01@openssh.com';

/** Reads a certificate's blob; throws on what is not one. The signature is not checked here (verifySshSignature). */
export function parseCertificate(blob: Buffer): ParsedCertificate {
  const r = new SshReader(blob);
  const algorithm = r.text();
  if (!algorithm.endsWith(CERT_SUFFIX)) throw new Error('not a certificate');
  const keyAlgorithm = algorithm.slice(0, -CERT_SUFFIX.length);
  r.string(); // the nonce
  const fields = new SshWriter();
  // Ed25519 has one public field; ECDSA (curve, point) and RSA (e, n) have two.
  for (let i = keyAlgorithm === 'ssh-ed25519' ? 1 : 2; i > 0; i--) fields.string(r.string());
  const serial = r.uint64();
  const type = r.uint32();
  const keyId = r.text();
  const principalsReader = new SshReader(r.string());
  const principals: string[] = [];
  while (!principalsReader.done) principals.push(principalsReader.text());
  const validAfter = r.uint64();
  const validBefore = r.uint64();
  const optionsReader = new SshReader(r.string());
  const criticalOptions: string[] = [];
  while (!optionsReader.done) {
    criticalOptions.push(optionsReader.text());
    optionsReader.string();
  }
  r.string(); // extensions
  r.string(); // reserved
  const signatureKey = r.string();
  const signed = blob.subarray(0, r.position);
  const signature = r.string();
  if (!r.done) throw new Error('trailing data after the certificate');
  if (type !== 1 && type !== 2) throw new Error('neither a user nor a host certificate');
  return {
    keyAlgorithm,
    subject: new SshWriter().string(keyAlgorithm).raw(fields.toBuffer()).toBuffer(),
    serial,
    type: type === 1 ? 'user' : 'host',
    keyId,
    principals,
    validAfter,
    validBefore,
    criticalOptions,
    signatureKey,
    signature: Buffer.from(signature),
    signed: Buffer.from(signed),
  };
}

const RSA_HASHES: Record<string, string> = { 'rsa-sha2-512': 'sha512', 'rsa-sha2-256': 'sha256' };

/**
 * Whether `signature` (an SSH signature blob: its algorithm and bytes) is the signature of `data`
 * by the public key `keyBlob`. RSA's SHA-1 signatures (`ssh-rsa`) are refused, as OpenSSH does.
 */
export function verifySshSignature(keyBlob: Buffer, data: Buffer, signature: Buffer): boolean {
  try {
    const keyAlgorithm = new SshReader(keyBlob).text();
    const key = keyObjectOf(keyAlgorithm, keyBlob);
    const r = new SshReader(signature);
    const algorithm = r.text();
    const bytes = r.string();
    if (!r.done) return false;
    if (keyAlgorithm === 'ssh-ed25519') return algorithm === 'ssh-ed25519' && verify(null, data, key, bytes);
    if (keyAlgorithm === 'ssh-rsa') return RSA_HASHES[algorithm] !== undefined && verify(RSA_HASHES[algorithm], data, key, bytes);
    const curve = Object.values(CURVES).find((c) => c.ssh === keyAlgorithm);
    if (!curve || algorithm !== keyAlgorithm) return false;
    // (r, s) as two mpints, made the fixed-width pair node:crypto reads.
    const rs = new SshReader(bytes);
    const fixed = (n: Buffer) => {
      const magnitude = n[0] === 0 ? n.subarray(1) : n;
      if (magnitude.length > curve.bytes) throw new Error('an ECDSA signature part is too long');
      return Buffer.concat([Buffer.alloc(curve.bytes - magnitude.length), magnitude]);
    };
    const p1363 = Buffer.concat([fixed(rs.string()), fixed(rs.string())]);
    return rs.done && verify(curve.hash, data, { key, dsaEncoding: 'ieee-p1363' }, p1363);
  } catch {
    return false;
  }
}
