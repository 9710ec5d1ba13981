// An uploaded certificate chain and its private key, read and checked before anything is stored:
// PEM blocks without headers and of the right type, a chain ordered leaf first with each
// certificate signed by the next, an unencrypted RSA/ECDSA/Ed25519 key (PKCS#1, SEC1 or PKCS#8)
// that is the leaf's own, and a leaf that has not expired. node:crypto checks signatures and the
// key; @peculiar/x509 reads the fields that node:crypto only gives as display strings (names,
// key usages).
import { createPrivateKey, X509Certificate as NodeCertificate, type KeyObject } from 'node:crypto';
import { rfc3339 } from '../core/time.js';
import { derElementCount } from '../lib/crypto/der.js';
import { x509 } from '../lib/crypto/x509.js';
import { pemErrors } from './pem.errors.js';

export type CertificateKeyType = 'rsa' | 'ecdsa' | 'ed25519';

/** The response fields derived from the leaf certificate. */
export interface CertificateDetails {
  subject_common_name: string;
  subject_alternative_names: { dns_names: string[]; ips: string[] };
  not_before: string;
  not_after: string;
  key_usages: string[];
  extended_key_usages: string[];
  issuer_common_name: string;
  serial_number: string;
  subject_organization: string;
  subject_organizational_unit: string;
  subject_locality: string;
  subject_province: string;
  subject_country: string;
}

export interface ReadCertificate {
  /** The chain as stored and returned: each block re-armored, leaf first. */
  certificatePem: string;
  details: CertificateDetails;
  /** Names a domain may be served with: the DNS SANs, or the common name when there are none. */
  dnsNames: string[];
  keyType: CertificateKeyType;
  /** The key as PKCS#8 PEM, to be sealed. */
  keyPem: string;
}

interface PemBlock {
  type: string;
  headers: boolean;
  body: string;
}

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/g;
const MAX_CHAIN = 10;
/**
 * The most DER elements (names, usages, extensions and the parts of each) of the certificate whose
 * fields are read: @peculiar/x509 spends tens of microseconds on each, so this keeps reading under
 * ~20 ms. Some 400 names fit; public CAs issue at most 100 to 250.
 */
export const MAX_CERTIFICATE_ELEMENTS = 512;

function blocks(pem: string): PemBlock[] {
  return [...pem.matchAll(BLOCK)].map((m) => ({ type: m[1]!, headers: /^[A-Za-z-]+:/m.test(m[2]!), body: m[2]!.replace(/\s+/g, '') }));
}

const armor = (type: string, base64: string) => `-----BEGIN ${type}-----\n${base64.replace(/.{64}/g, '$&\n').replace(/\n?$/, '\n')}-----END ${type}-----\n`;

const KEY_BLOCKS = ['PRIVATE KEY', 'RSA PRIVATE KEY', 'EC PRIVATE KEY', 'ENCRYPTED PRIVATE KEY'];

function readChain(pem: string, field: 'certificate_pem' | 'ca_pem'): { certs: NodeCertificate[]; first: x509.X509Certificate; armored: string[] } {
  const found = blocks(pem);
  const key = found.find((b) => KEY_BLOCKS.includes(b.type));
  if (key || (found.length === 0 && /PRIVATE KEY-----/.test(pem))) {
    if (field === 'certificate_pem') throw pemErrors.keyAsCertificate();
    throw pemErrors.pemBlockType({ field, type: key?.type ?? 'PRIVATE KEY', expected: 'one CERTIFICATE block' });
  }
  if (found.length === 0) throw pemErrors.certificatePemInvalid({ field, reason: 'has no PEM block (-----BEGIN CERTIFICATE-----)' });
  const other = found.find((b) => b.type !== 'CERTIFICATE');
  if (other) throw pemErrors.pemBlockType({ field, type: other.type, expected: 'CERTIFICATE blocks only' });
  if (found.some((b) => b.headers)) throw pemErrors.pemHeaders({ field });
  if (field === 'ca_pem' && found.length > 1) throw pemErrors.caNotSingle({ count: found.length });
  if (found.length > MAX_CHAIN) throw pemErrors.certificatePemInvalid({ field, reason: `has ${found.length} certificates; a chain has at most ${MAX_CHAIN}` });
  const armored = found.map((b) => armor('CERTIFICATE', b.body));
  const certs: NodeCertificate[] = [];
  for (const [i, text] of armored.entries()) {
    try {
      certs.push(new NodeCertificate(text));
    } catch {
      throw pemErrors.certificatePemInvalid({ field, reason: `has a certificate (number ${i + 1}) that cannot be parsed as X.509` });
    }
  }
  // The first certificate's fields are read (the leaf's, or the CA's); the others are only checked
  // as its issuers, by OpenSSL. Bounded before @peculiar/x509 reads it (see MAX_CERTIFICATE_ELEMENTS).
  if (derElementCount(certs[0]!.raw, MAX_CERTIFICATE_ELEMENTS) > MAX_CERTIFICATE_ELEMENTS)
    throw pemErrors.certificatePemInvalid({
      field,
      reason: `has a certificate (number 1) of more than ${MAX_CERTIFICATE_ELEMENTS} DER elements (names, usages, extensions and their parts); at most ${MAX_CERTIFICATE_ELEMENTS} are read, some 400 names`,
    });
  try {
    return { certs, first: new x509.X509Certificate(armored[0]!), armored };
  } catch {
    throw pemErrors.certificatePemInvalid({ field, reason: 'has a certificate (number 1) that cannot be parsed as X.509' });
  }
}

function readKey(pem: string): KeyObject {
  const found = blocks(pem);
  if (found.some((b) => b.type === 'CERTIFICATE')) throw pemErrors.certificateAsKey();
  if (found.some((b) => b.type === 'ENCRYPTED PRIVATE KEY') || /Proc-Type:\s*4,ENCRYPTED/.test(pem)) throw pemErrors.privateKeyEncrypted();
  if (found.length === 0) throw pemErrors.privateKeyPemInvalid({ reason: 'has no PEM block (-----BEGIN PRIVATE KEY-----)' });
  if (found.length > 1) throw pemErrors.privateKeyPemInvalid({ reason: `has ${found.length} PEM blocks; give exactly one private key` });
  const block = found[0]!;
  if (!KEY_BLOCKS.includes(block.type))
    throw pemErrors.pemBlockType({
      field: 'private_key_pem',
      type: block.type,
      expected: 'one PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY block',
    });
  if (block.headers) throw pemErrors.pemHeaders({ field: 'private_key_pem' });
  try {
    return createPrivateKey({ key: armor(block.type, block.body), format: 'pem' });
  } catch {
    throw pemErrors.privateKeyPemInvalid({ reason: `has a ${block.type} block that cannot be read as one` });
  }
}

function keyTypeOf(key: KeyObject): CertificateKeyType {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return 'rsa';
    case 'ec':
      return 'ecdsa';
    case 'ed25519':
      return 'ed25519';
    default:
      throw pemErrors.privateKeyType({ type: key.asymmetricKeyType ?? 'unknown' });
  }
}

const USAGE_NAMES: [x509.KeyUsageFlags, string][] = [
  [x509.KeyUsageFlags.digitalSignature, 'digital_signature'],
  [x509.KeyUsageFlags.nonRepudiation, 'content_commitment'],
  [x509.KeyUsageFlags.keyEncipherment, 'key_encipherment'],
  [x509.KeyUsageFlags.dataEncipherment, 'data_encipherment'],
  [x509.KeyUsageFlags.keyAgreement, 'key_agreement'],
  [x509.KeyUsageFlags.keyCertSign, 'cert_sign'],
  [x509.KeyUsageFlags.cRLSign, 'crl_sign'],
  [x509.KeyUsageFlags.encipherOnly, 'encipher_only'],
  [x509.KeyUsageFlags.decipherOnly, 'decipher_only'],
];

const EXTENDED_USAGE_NAMES: Record<string, string> = {
  '2.5.29.37.0': 'any',
  '1.3.6.1.5.5.7.3.1': 'server_auth',
  '1.3.6.1.5.5.7.3.2': 'client_auth',
  '1.3.6.1.5.5.7.3.3': 'code_signing',
  '1.3.6.1.5.5.7.3.4': 'email_protection',
  '1.3.6.1.5.5.7.3.8': 'time_stamping',
  '1.3.6.1.5.5.7.3.9': 'ocsp_signing',
};

const field = (name: x509.Name, type: string) => name.getField(type)[0] ?? '';

function detailsOf(leaf: x509.X509Certificate): { details: CertificateDetails; dnsNames: string[] } {
  const san = leaf.getExtension(x509.SubjectAlternativeNameExtension);
  const items = san?.names.items ?? [];
  const sanDns = items.filter((n) => n.type === 'dns').map((n) => n.value.toLowerCase());
  const ips = items.filter((n) => n.type === 'ip').map((n) => n.value);
  const usages = leaf.getExtension(x509.KeyUsagesExtension)?.usages ?? 0;
  const extended = (leaf.getExtension(x509.ExtendedKeyUsageExtension)?.usages ?? []).map((oid) => EXTENDED_USAGE_NAMES[String(oid)] ?? String(oid));
  const commonName = field(leaf.subjectName, 'CN');
  return {
    dnsNames: sanDns.length > 0 ? sanDns : commonName ? [commonName.toLowerCase()] : [],
    details: {
      subject_common_name: commonName,
      subject_alternative_names: { dns_names: sanDns, ips },
      not_before: rfc3339(leaf.notBefore),
      not_after: rfc3339(leaf.notAfter),
      key_usages: USAGE_NAMES.filter(([flag]) => (usages & flag) !== 0).map(([, name]) => name),
      extended_key_usages: extended,
      issuer_common_name: field(leaf.issuerName, 'CN'),
      serial_number: leaf.serialNumber.toLowerCase(),
      subject_organization: field(leaf.subjectName, 'O'),
      subject_organizational_unit: field(leaf.subjectName, 'OU'),
      subject_locality: field(leaf.subjectName, 'L'),
      subject_province: field(leaf.subjectName, 'ST'),
      subject_country: field(leaf.subjectName, 'C'),
    },
  };
}

/** Reads and checks an upload; throws the API error for the first problem found. */
export function readCertificateUpload(certificatePem: string, privateKeyPem: string, now: Date): ReadCertificate {
  const { certs, first: leaf, armored } = readChain(certificatePem, 'certificate_pem');
  const key = readKey(privateKeyPem);
  const keyType = keyTypeOf(key);
  for (let i = 0; i + 1 < certs.length; i++) {
    const issued = certs[i]!.checkIssued(certs[i + 1]!) && certs[i]!.verify(certs[i + 1]!.publicKey);
    if (!issued) throw pemErrors.chainOrder({ position: i + 1 });
  }
  if (!certs[0]!.checkPrivateKey(key)) throw pemErrors.keyMismatch();
  const { details, dnsNames } = detailsOf(leaf);
  if (leaf.notAfter.getTime() <= now.getTime()) throw pemErrors.certificateExpired({ notAfter: details.not_after });
  return {
    certificatePem: armored.join(''),
    details,
    dnsNames,
    keyType,
    keyPem: key.export({ type: 'pkcs8', format: 'pem' }) as string,
  };
}

/** The fields of a certificate authority's response, derived from its certificate. */
export type CaDetails = Pick<CertificateDetails, 'subject_common_name' | 'not_before' | 'not_after' | 'key_usages' | 'extended_key_usages'>;

/**
 * An uploaded certificate authority: one certificate, a CA by its basic constraints, whose key
 * usage (when it has one) allows signing certificates, not expired.
 */
export function readCaUpload(caPem: string, now: Date): { caPem: string; details: CaDetails } {
  const { first: ca, armored } = readChain(caPem, 'ca_pem');
  const constraints = ca.getExtension(x509.BasicConstraintsExtension);
  if (!constraints?.ca)
    throw pemErrors.caNotCa({ reason: constraints ? 'its basic constraints say CA:FALSE' : 'it has no basic constraints extension (CA:TRUE)' });
  const usages = ca.getExtension(x509.KeyUsagesExtension);
  if (usages && (usages.usages & x509.KeyUsageFlags.keyCertSign) === 0)
    throw pemErrors.caNotCa({ reason: 'its key usage does not allow signing certificates (keyCertSign)' });
  const { details } = detailsOf(ca);
  if (ca.notAfter.getTime() <= now.getTime()) throw pemErrors.certificateExpired({ notAfter: details.not_after });
  const { subject_common_name, not_before, not_after, key_usages, extended_key_usages } = details;
  return { caPem: armored[0]!, details: { subject_common_name, not_before, not_after, key_usages, extended_key_usages } };
}
