// The errors of IP policies: deleting one that is still used. A reference to one that does not
// exist is refused by policyNotFound (src/edge-config/values/named-resources.ts).
import { entry, shortList, throwersOf } from '../../core/errors.js';

export const ipPolicyCatalogue = {
  ipPolicyInUse: entry<{ id: string; referrers: readonly string[] }>(
    1420,
    409,
    'The IP policy is still used by an IP restriction or an edge module and cannot be deleted.',
    (a) => `IP policy ${a.id} is still used by ${shortList(a.referrers)}; remove it from there first.`,
  ),
} as const;

/** Error factories: `throw ipPolicyErrors.ipPolicyInUse(…)`. */
export const ipPolicyErrors = throwersOf(ipPolicyCatalogue);
