// HTTPS with no setup: on first start, a local CA and a server certificate signed by it are
// created in <data dir>/tls, so that `curl --cacert <data dir>/tls/ca.crt` works. The server
// certificate is re-issued from the same CA when it nears expiry or no longer covers the host.
import { webcrypto } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { x509 } from './lib/crypto/x509.js';

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 24 * 60 * 60 * 1000;
const SERVER_VALIDITY_DAYS = 397;
const RENEW_BEFORE_DAYS = 30;

export interface LocalTls {
  caFile: string;
  certFile: string;
  keyFile: string;
  cert: string;
  key: string;
  created: boolean;
}

function serial(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = bytes[0]! & 0x7f;
  return Buffer.from(bytes).toString('hex');
}

async function exportKey(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key as webcrypto.CryptoKey));
  return `-----BEGIN PRIVATE KEY-----\n${der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n?$/, '\n')}-----END PRIVATE KEY-----\n`;
}

async function importKey(pem: string): Promise<CryptoKey> {
  const der = Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
  return (await webcrypto.subtle.importKey('pkcs8', der, ALG, true, ['sign'])) as unknown as CryptoKey;
}

function writePrivate(file: string, content: string): void {
  fs.writeFileSync(file, content, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
}

async function createCa(): Promise<{ cert: x509.X509Certificate; key: CryptoKey; keyPem: string }> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as unknown as CryptoKeyPair;
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: 'CN=edgeplane local CA',
    notBefore: new Date(now - DAY),
    notAfter: new Date(now + 10 * 365 * DAY),
    signingAlgorithm: ALG,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert, key: keys.privateKey, keyPem: await exportKey(keys.privateKey) };
}

function covers(cert: x509.X509Certificate, hosts: readonly string[]): boolean {
  const san = cert.getExtension(x509.SubjectAlternativeNameExtension);
  const names = new Set((san?.names.items ?? []).map((n) => n.value.toLowerCase()));
  return hosts.every((h) => names.has(h.toLowerCase()));
}

interface LocalCa {
  cert: x509.X509Certificate;
  key: CryptoKey;
}

/** The local CA in `dir`, created when it is not there yet (`created`). */
async function loadOrCreateCa(dir: string): Promise<{ ca: LocalCa; caFile: string; created: boolean }> {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const caFile = path.join(dir, 'ca.crt');
  const caKeyFile = path.join(dir, 'ca.key');
  if (fs.existsSync(caFile) && fs.existsSync(caKeyFile)) {
    return {
      caFile,
      created: false,
      ca: { cert: new x509.X509Certificate(fs.readFileSync(caFile, 'utf8')), key: await importKey(fs.readFileSync(caKeyFile, 'utf8')) },
    };
  }
  const fresh = await createCa();
  writePrivate(caKeyFile, fresh.keyPem);
  fs.writeFileSync(caFile, fresh.cert.toString('pem') + '\n');
  return { caFile, created: true, ca: fresh };
}

/** The leaf in `certFile`/`keyFile` when it still serves `hosts` for a while, else undefined. */
function currentLeaf(certFile: string, keyFile: string, hosts: readonly string[]): { cert: string; key: string } | undefined {
  if (!fs.existsSync(certFile) || !fs.existsSync(keyFile)) return undefined;
  const cert = fs.readFileSync(certFile, 'utf8');
  const current = new x509.X509Certificate(cert);
  if (current.notAfter.getTime() - Date.now() <= RENEW_BEFORE_DAYS * DAY || !covers(current, hosts)) return undefined;
  return { cert, key: fs.readFileSync(keyFile, 'utf8') };
}

/** A server certificate for `hosts` (DNS names, wildcards, IPs) signed by `ca`, written to `certFile`/`keyFile`. */
async function issueLeaf(ca: LocalCa, hosts: readonly string[], certFile: string, keyFile: string): Promise<{ cert: string; key: string }> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as unknown as CryptoKeyPair;
  const now = Date.now();
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${hosts.find((h) => net.isIP(h) === 0 && h !== 'localhost') ?? 'localhost'}`,
    issuer: ca.cert.subject,
    notBefore: new Date(now - DAY),
    notAfter: new Date(now + SERVER_VALIDITY_DAYS * DAY),
    signingAlgorithm: ALG,
    publicKey: keys.publicKey,
    signingKey: ca.key,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(hosts.map((h) => ({ type: net.isIP(h) ? 'ip' : 'dns', value: h }) as x509.JsonGeneralName)),
      await x509.AuthorityKeyIdentifierExtension.create(ca.cert),
    ],
  });
  const cert = leaf.toString('pem') + '\n';
  const key = await exportKey(keys.privateKey);
  writePrivate(keyFile, key);
  fs.writeFileSync(certFile, cert);
  return { cert, key };
}

/** The CA and server certificate in `<dataDir>/tls`, created or renewed as needed. */
export async function ensureLocalTls(dataDir: string, hosts: readonly string[]): Promise<LocalTls> {
  const dir = path.join(dataDir, 'tls');
  const { ca, caFile, created } = await loadOrCreateCa(dir);
  const certFile = path.join(dir, 'server.crt');
  const keyFile = path.join(dir, 'server.key');
  const allHosts = [...new Set(['localhost', '127.0.0.1', '::1', ...hosts])];
  const current = created ? undefined : currentLeaf(certFile, keyFile, allHosts);
  if (current) return { caFile, certFile, keyFile, ...current, created: false };
  const issued = await issueLeaf(ca, allHosts, certFile, keyFile);
  return { caFile, certFile, keyFile, ...issued, created: true };
}

/**
 * The certificate public ingress serves for names under a service domain: `*.<domain>` and the
 * domain itself, from the same local CA (created if need be), kept in
 * `<dataDir>/tls/service-<domain>.crt` and `.key` and re-issued when it nears expiry.
 */
export async function ensureServiceDomainTls(dataDir: string, domain: string): Promise<{ cert: string; key: string; caFile: string }> {
  const dir = path.join(dataDir, 'tls');
  const { ca, caFile, created } = await loadOrCreateCa(dir);
  const hosts = [`*.${domain}`, domain];
  const certFile = path.join(dir, `service-${domain}.crt`);
  const keyFile = path.join(dir, `service-${domain}.key`);
  const current = created ? undefined : currentLeaf(certFile, keyFile, hosts);
  return { ...(current ?? (await issueLeaf(ca, hosts, certFile, keyFile))), caFile };
}
