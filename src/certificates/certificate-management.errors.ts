// The errors of certificate management policies, which reserved domains and agent ingresses
// share (certificate-management.ts reads them).
import { entry, throwersOf } from '../core/errors.js';

export const certificateManagementCatalogue = {
  invalidAuthority: entry<{ value: string }>(
    1908,
    400,
    'certificate_management_policy.authority is not a supported certificate authority.',
    (a) => `certificate authority '${a.value}' is not supported; the only supported authority is letsencrypt.`,
  ),
  invalidCertKeyType: entry<{ value: string }>(
    1909,
    400,
    'certificate_management_policy.private_key_type is not rsa or ecdsa.',
    (a) => `private_key_type '${a.value}' is not supported for managed certificates; use rsa or ecdsa.`,
  ),
} as const;

/** Error factories: `throw certificateManagementErrors.invalidAuthority(…)`. */
export const certificateManagementErrors = throwersOf(certificateManagementCatalogue);
