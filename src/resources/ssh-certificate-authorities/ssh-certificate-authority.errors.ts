// The errors of SSH certificate authorities: the key asked for, making RSA keys, and deleting a CA
// whose certificates still exist.
import { entry, shortList, throwersOf } from '../../core/errors.js';

export const sshCertificateAuthorityCatalogue = {
  invalidKeySize: entry<{ value: number }>(
    1939,
    400,
    'key_size of an RSA SSH CA is neither 2048 nor 4096.',
    (a) => `key_size ${a.value} is not supported; use 2048 or 4096 (default 4096).`,
  ),
  keySizeNotForType: entry<{ type: string }>(
    1940,
    400,
    'key_size is given for a CA whose key is not RSA.',
    (a) => `key_size applies to RSA keys only; leave it out for private_key_type '${a.type}'.`,
  ),
  curveNotForType: entry<{ type: string }>(
    1942,
    400,
    'elliptic_curve is given for a CA whose key is not ECDSA.',
    (a) => `elliptic_curve applies to ECDSA keys only; leave it out for private_key_type '${a.type}'.`,
  ),
  sshCaKeysBusy: entry<{ max: number; retryAfter: number }>(
    1976,
    429,
    'The account is already making as many RSA keys for SSH certificate authorities as it may at once; retry after the seconds that Retry-After gives.',
    (a) =>
      `This account is already making ${a.max} RSA keys for SSH certificate authorities, as many as it may at once; retry in ${a.retryAfter} s (an Ed25519 or ECDSA CA is made at once).`,
    (a) => ({ 'Retry-After': String(a.retryAfter) }),
  ),
  sshCaInUse: entry<{ id: string; certificates: readonly string[] }>(
    1964,
    409,
    'The SSH CA has signed certificates that still exist.',
    (a) =>
      `SSH certificate authority ${a.id} has signed ${a.certificates.length} certificate(s) that still exist (${shortList(a.certificates)}); delete them first.`,
  ),
} as const;

/** Error factories: `throw sshCertificateAuthorityErrors.invalidKeySize(…)`. */
export const sshCertificateAuthorityErrors = throwersOf(sshCertificateAuthorityCatalogue);
