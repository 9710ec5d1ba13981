// TLS certificate fixtures for the tests: a root CA, an optional intermediate and a leaf (RSA,
// ECDSA P-256 or Ed25519), or a self-signed leaf, made in memory with node:crypto and
// @peculiar/x509, plus the same private key in the other PEM encodings an upload may use.
import { KeyObject, webcrypto } from 'node:crypto';
import net from 'node:net';
import 'reflect-metadata'; // @peculiar/x509 needs it loaded first
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

export type KeyKind = 'rsa' | 'ecdsa' | 'ed25519';

export interface Issued {
  certPem: string;
  /** PKCS#8 PEM */
  keyPem: string;
  /** node private KeyObject */
  key: KeyObject;
  cert: x509.X509Certificate;
}

export interface ChainOptions {
  /** DNS SANs of the leaf, default ['app.example.com'] */
  names?: string[];
  /** IP SANs of the leaf, default none */
  ips?: string[];
  /** leaf subject CN, default names[0] */
  commonName?: string;
  /** leaf key type, default 'ecdsa' (P-256); rsa = 2048 bits */
  keyKind?: KeyKind;
  /** leaf validity, default now-1day .. now+90days */
  notBefore?: Date;
  notAfter?: Date;
  /** extra leaf subject fields */
  subject?: { O?: string; OU?: string; L?: string; ST?: string; C?: string };
  /** 0 (default: leaf signed directly by root) or 1 */
  intermediates?: number;
}

export interface Chain {
  leaf: Issued;
  intermediates: Issued[];
  root: Issued;
  /** leaf first, then intermediates (root not included) */
  chainPem: string;
}

const DAY = 24 * 60 * 60 * 1000;

const ALGS: Record<KeyKind, RsaHashedKeyGenParams | EcKeyGenParams | Algorithm> = {
  rsa: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) },
  ecdsa: { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as EcKeyGenParams,
  ed25519: { name: 'Ed25519' },
};

interface Signer {
  cert: x509.X509Certificate;
  privateKey: CryptoKey;
}

function serial(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0]! & 0x7f) | 0x01; // positive, no leading zero byte
  return Buffer.from(bytes).toString('hex');
}

async function generate(kind: KeyKind): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALGS[kind] as webcrypto.AlgorithmIdentifier, true, ['sign', 'verify'])) as unknown as CryptoKeyPair;
}

function toIssued(cert: x509.X509Certificate, privateKey: CryptoKey): Issued {
  const key = KeyObject.from(privateKey as webcrypto.CryptoKey);
  return { certPem: cert.toString('pem') + '\n', keyPem: key.export({ type: 'pkcs8', format: 'pem' }) as string, key, cert };
}

/** Makes a CA certificate (root when `issuer` is absent) with an ECDSA P-256 key. */
async function makeCa(commonName: string, issuer?: Signer): Promise<Issued & Signer> {
  const keys = await generate('ecdsa');
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: [{ CN: [commonName] }],
    issuer: issuer ? issuer.cert.subjectName : [{ CN: [commonName] }],
    notBefore: new Date(now - DAY),
    notAfter: new Date(now + 10 * 365 * DAY),
    signingAlgorithm: ALGS.ecdsa,
    publicKey: keys.publicKey,
    signingKey: issuer ? issuer.privateKey : keys.privateKey,
    extensions: [
      new x509.BasicConstraintsExtension(true, issuer ? 0 : undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      ...(issuer ? [await x509.AuthorityKeyIdentifierExtension.create(issuer.cert)] : []),
    ],
  });
  return { ...toIssued(cert, keys.privateKey), privateKey: keys.privateKey };
}

/** Makes a leaf certificate; self-signed when `issuer` is absent. */
async function makeLeaf(options: ChainOptions, issuer?: Signer): Promise<Issued> {
  const kind = options.keyKind ?? 'ecdsa';
  const names = options.names ?? ['app.example.com'];
  const ips = options.ips ?? [];
  const keys = await generate(kind);
  const now = Date.now();
  const s = options.subject ?? {};
  const subject: x509.JsonName = [];
  for (const type of ['C', 'ST', 'L', 'O', 'OU'] as const) if (s[type] !== undefined) subject.push({ [type]: [s[type]] });
  const commonName = options.commonName ?? names[0];
  if (commonName !== undefined) subject.push({ CN: [commonName] });
  const usage = kind === 'rsa' ? x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment : x509.KeyUsageFlags.digitalSignature;
  const sans: x509.JsonGeneralName[] = [
    ...names.map((value) => ({ type: 'dns' as const, value })),
    ...ips.map((value) => {
      if (!net.isIP(value)) throw new Error(`not an IP address: ${value}`);
      return { type: 'ip' as const, value };
    }),
  ];
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(usage, true),
    new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
    await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
  ];
  if (sans.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(sans));
  if (issuer) extensions.push(await x509.AuthorityKeyIdentifierExtension.create(issuer.cert));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject,
    issuer: issuer ? issuer.cert.subjectName : subject,
    notBefore: options.notBefore ?? new Date(now - DAY),
    notAfter: options.notAfter ?? new Date(now + 90 * DAY),
    // The issuer's algorithm signs; the leaf only carries its own public key.
    signingAlgorithm: issuer ? ALGS.ecdsa : ALGS[kind],
    publicKey: keys.publicKey,
    signingKey: issuer ? issuer.privateKey : keys.privateKey,
    extensions,
  });
  return toIssued(cert, keys.privateKey);
}

/** A root CA, `options.intermediates` (0 or 1) intermediate CAs and a leaf signed by the last CA. */
export async function makeChain(options: ChainOptions = {}): Promise<Chain> {
  const count = options.intermediates ?? 0;
  if (count !== 0 && count !== 1) throw new Error('intermediates must be 0 or 1');
  const root = await makeCa('Test Root CA');
  const intermediates = count === 1 ? [await makeCa('Test Intermediate CA', root)] : [];
  const leaf = await makeLeaf(options, intermediates[0] ?? root);
  const strip = ({ privateKey: _, ...issued }: Issued & Partial<Signer>): Issued => issued;
  return {
    leaf,
    intermediates: intermediates.map(strip),
    root: strip(root),
    chainPem: [leaf, ...intermediates].map((c) => c.certPem).join(''),
  };
}

/** A single self-signed leaf certificate with the same options as makeChain's leaf. */
export async function selfSigned(options: ChainOptions = {}): Promise<Issued> {
  return makeLeaf(options);
}

/** RSA only: the key as `-----BEGIN RSA PRIVATE KEY-----`. */
export function pkcs1Pem(key: KeyObject): string {
  return key.export({ type: 'pkcs1', format: 'pem' }) as string;
}

/** EC only: the key as `-----BEGIN EC PRIVATE KEY-----`. */
export function sec1Pem(key: KeyObject): string {
  return key.export({ type: 'sec1', format: 'pem' }) as string;
}

/** The key as `-----BEGIN ENCRYPTED PRIVATE KEY-----` (PKCS#8, AES-256-CBC). */
export function encryptedPkcs8Pem(key: KeyObject, passphrase = 'x'): string {
  return key.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase }) as string;
}

/** RSA only: PKCS#1 with the legacy `Proc-Type: 4,ENCRYPTED` and `DEK-Info` headers, passphrase 'x'. */
export function legacyEncryptedPem(key: KeyObject): string {
  return key.export({ type: 'pkcs1', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'x' }) as string;
}

export interface OddCaOptions {
  /** subject and issuer CN, default 'Odd CA' */
  commonName?: string;
  /** the BasicConstraints extension: CA:TRUE (default), CA:FALSE, or none at all */
  basicConstraints?: 'ca' | 'not-ca' | 'absent';
  /** KeyUsage flags, default keyCertSign | cRLSign; null leaves the extension out */
  keyUsages?: x509.KeyUsageFlags | null;
  /** validity, default now-1day .. now+1year */
  notBefore?: Date;
  notAfter?: Date;
}

/** A self-signed ECDSA P-256 certificate shaped like a CA but with what a CA upload may refuse. */
export async function oddCa(options: OddCaOptions = {}): Promise<Issued> {
  const keys = await generate('ecdsa');
  const now = Date.now();
  const name = [{ CN: [options.commonName ?? 'Odd CA'] }];
  const constraints = options.basicConstraints ?? 'ca';
  const usages = options.keyUsages === undefined ? x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign : options.keyUsages;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: name,
    issuer: name,
    notBefore: options.notBefore ?? new Date(now - DAY),
    notAfter: options.notAfter ?? new Date(now + 365 * DAY),
    signingAlgorithm: ALGS.ecdsa,
    publicKey: keys.publicKey,
    signingKey: keys.privateKey,
    extensions: [
      ...(constraints === 'absent' ? [] : [new x509.BasicConstraintsExtension(constraints === 'ca', undefined, true)]),
      ...(usages === null ? [] : [new x509.KeyUsagesExtension(usages, true)]),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return toIssued(cert, keys.privateKey);
}
