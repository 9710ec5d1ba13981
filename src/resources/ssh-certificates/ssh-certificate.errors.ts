// The errors of SSH host and user certificates: the CA and the key they sign, and their values as
// ssh-values.ts reads them (validity, principals, critical options and extensions).
import { entry, throwersOf } from '../../core/errors.js';

export const sshCertificateCatalogue = {
  invalidTimestamp: entry<{ field: string; value: string }>(
    241,
    400,
    'A time is not an RFC 3339 timestamp.',
    (a) => `${a.field} '${a.value}' is not an RFC 3339 timestamp of a time that exists, such as 2026-11-21T10:00:00Z.`,
  ),
  sshCaNotFound: entry<{ id: string }>(
    1949,
    400,
    'ssh_certificate_authority_id names no SSH CA of this account.',
    (a) => `ssh_certificate_authority_id '${a.id}' is not an SSH certificate authority (sshca_…) of this account.`,
  ),
  invalidPublicKey: entry<{ reason: string }>(1950, 400, 'public_key is not a supported OpenSSH public key.', (a) => `public_key ${a.reason}.`),
  invalidValidity: entry<{ validAfter: string; validUntil: string }>(
    1962,
    400,
    'valid_until is not after valid_after.',
    (a) => `valid_until ${a.validUntil} must be after valid_after ${a.validAfter}.`,
  ),
  unknownCriticalOption: entry<{ name: string }>(
    1965,
    400,
    'critical_options names an option other than force-command and source-address.',
    (a) => `critical option '${a.name}' is not supported; the defined ones are force-command and source-address.`,
  ),
  invalidSourceAddress: entry<{ value: string; entry: string }>(
    1967,
    400,
    'The source-address critical option is not a comma-separated list of addresses and CIDRs.',
    (a) => `source-address '${a.value}' has '${a.entry}', which is not an IP address or a CIDR in network form (e.g. 192.0.2.0/24).`,
  ),
  invalidOption: entry<{ kind: string; name: string; problem: string }>(
    1968,
    400,
    'A critical option or an extension has a name or value OpenSSH would not accept.',
    (a) => `${a.kind} '${a.name}' ${a.problem}.`,
  ),
  invalidPrincipal: entry<{ value: string; problem: string }>(
    1969,
    400,
    'A principal is not a valid user or host name.',
    (a) => `principal '${a.value}' ${a.problem}.`,
  ),
} as const;

/** Error factories: `throw sshCertificateErrors.invalidTimestamp(…)`. */
export const sshCertificateErrors = throwersOf(sshCertificateCatalogue);
