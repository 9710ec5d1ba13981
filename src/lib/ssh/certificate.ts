// OpenSSH certificates, encoded as PROTOCOL.certkeys describes them and signed with node:crypto.
// Written by hand: the npm libraries that write certificates either do not sign with
// rsa-sha2-512 or do not carry arbitrary critical options and extensions, and the format is a
// few dozen lines of the SSH wire encoding.
import { randomBytes, sign, type KeyObject } from 'node:crypto';
import { CURVES, toSshPublicKey, type SshPublicKey } from './keys.js';
import { SshWriter } from './wire.js';

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
