// The errors of certificate authorities (for mutual TLS). Their PEM upload is read with the TLS
// certificates' (src/resources/tls-certificates/tls-certificate.errors.ts), and a reference to
// one from a mutual_tls module is the module's (src/edge-config/modules/edge-module.errors.ts).
import { entry, shortList, throwersOf } from '../../core/errors.js';

export const certificateAuthorityCatalogue = {
  certificateAuthorityInUse: entry<{ id: string; referrers: readonly string[] }>(
    1958,
    409,
    'The certificate authority is still used by a mutual TLS module.',
    (a) => `certificate authority ${a.id} is still used by ${shortList(a.referrers)}; remove it from their mutual_tls modules first.`,
  ),
} as const;

/** Error factories: `throw certificateAuthorityErrors.certificateAuthorityInUse(…)`. */
export const certificateAuthorityErrors = throwersOf(certificateAuthorityCatalogue);
