// The errors of PEM uploads (src/certificates/pem.ts): certificates, chains and private keys of
// TLS certificates, and the ca_pem of certificate authorities.
import { entry, throwersOf } from '../core/errors.js';

export const pemCatalogue = {
  caNotSingle: entry<{ count: number }>(
    1912,
    400,
    'ca_pem holds more than one certificate.',
    (a) => `ca_pem holds ${a.count} certificates; upload each certificate authority on its own.`,
  ),
  caNotCa: entry<{ reason: string }>(
    1913,
    400,
    'The certificate of ca_pem is not a certificate authority.',
    (a) => `ca_pem is not a certificate authority: ${a.reason}.`,
  ),
  certificatePemInvalid: entry<{ field: string; reason: string }>(
    1900,
    400,
    'certificate_pem (or ca_pem) is not PEM certificate data that can be read.',
    (a) => `${a.field} ${a.reason}.`,
  ),
  privateKeyPemInvalid: entry<{ reason: string }>(
    1901,
    400,
    'private_key_pem is not a PEM private key that can be read.',
    (a) => `private_key_pem ${a.reason}.`,
  ),
  privateKeyEncrypted: entry(
    1902,
    400,
    'private_key_pem is encrypted.',
    () => 'private_key_pem is encrypted; upload the key unencrypted (e.g. `openssl pkey -in key.pem -out plain.pem`). It is sealed at rest by the service.',
  ),
  certificateExpired: entry<{ notAfter: string }>(
    1903,
    400,
    'The uploaded certificate (the leaf of a chain, or a certificate authority) has expired.',
    (a) => `the certificate expired at ${a.notAfter}; upload a certificate that is still valid.`,
  ),
  privateKeyType: entry<{ type: string }>(
    1904,
    400,
    'The private key is not RSA, ECDSA or Ed25519.',
    (a) => `private keys of type ${a.type} are not supported; use RSA, ECDSA or Ed25519.`,
  ),
  pemHeaders: entry<{ field: string }>(
    1910,
    400,
    'A PEM block carries headers.',
    (a) => `${a.field} has a PEM block with headers (such as Proc-Type); blocks must have none.`,
  ),
  pemBlockType: entry<{ field: string; type: string; expected: string }>(
    1911,
    400,
    'A PEM block is of a type the field does not take.',
    (a) => `${a.field} has a '${a.type}' PEM block; it takes ${a.expected}.`,
  ),
  keyMismatch: entry(
    1923,
    400,
    'The private key is not the key of the leaf certificate.',
    () => 'private_key_pem does not match the first certificate of certificate_pem (the leaf); give the leaf first and its own key.',
  ),
  keyAsCertificate: entry(
    1924,
    400,
    'certificate_pem holds a private key.',
    () => 'certificate_pem holds a private key; put the key in private_key_pem and the certificate chain in certificate_pem.',
  ),
  certificateAsKey: entry(
    1925,
    400,
    'private_key_pem holds a certificate.',
    () => 'private_key_pem holds a certificate; put the certificate chain in certificate_pem and the key in private_key_pem.',
  ),
  chainOrder: entry<{ position: number }>(
    1926,
    400,
    'The chain is not ordered leaf first, each certificate signed by the next.',
    (a) =>
      `certificate ${a.position} of certificate_pem is not signed by certificate ${a.position + 1}; order the chain leaf first, then each issuer (intermediates), and leave out the root if it is not signed by the next.`,
  ),
} as const;

/** Error factories: `throw pemErrors.certificatePemInvalid(…)`. */
export const pemErrors = throwersOf(pemCatalogue);
