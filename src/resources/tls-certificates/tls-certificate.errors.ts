// The errors of TLS certificates: a reference to a certificate from a reserved domain or an agent
// ingress, and deleting one still attached. What is wrong with an upload is src/certificates/pem.errors.ts.
import { entry, shortList, throwersOf } from '../../core/errors.js';

export const tlsCertificateCatalogue = {
  tlsCertificateNotFound: entry<{ id: string }>(
    1927,
    400,
    'certificate_id names no TLS certificate of this account.',
    (a) => `certificate_id '${a.id}' is not a TLS certificate (cert_…) of this account.`,
  ),
  tlsCertificateInUse: entry<{ id: string; referrers: readonly string[] }>(
    1966,
    409,
    'The TLS certificate is still attached to reserved domains.',
    (a) =>
      `TLS certificate ${a.id} is still attached to ${shortList(a.referrers)}; detach it (DELETE /reserved_domains/{id}/certificate) or delete those first.`,
  ),

  // PEM uploads
} as const;

/** Error factories: `throw tlsCertificateErrors.tlsCertificateNotFound(…)`. */
export const tlsCertificateErrors = throwersOf(tlsCertificateCatalogue);
