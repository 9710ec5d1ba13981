// The errors of IP policies: a reference to one that does not exist (rules, restrictions and the
// modules of edges name policies through policyNotFound), and deleting one that is still used.
import { entry, shortList, throwersOf } from '../../core/errors.js';

export const ipPolicyCatalogue = {
  ipPolicyNotFound: entry<{ field: string; id: string }>(
    1402,
    400,
    'A referenced IP policy does not exist in this account.',
    (a) => `${a.field} '${a.id}' is not an IP policy (ipp_…) of this account.`,
  ),
  ipPolicyInUse: entry<{ id: string; referrers: readonly string[] }>(
    1420,
    409,
    'The IP policy is still used by an IP restriction or an edge module and cannot be deleted.',
    (a) => `IP policy ${a.id} is still used by ${shortList(a.referrers)}; remove it from there first.`,
  ),
} as const;

/** Error factories: `throw ipPolicyErrors.ipPolicyNotFound(…)`. */
export const ipPolicyErrors = throwersOf(ipPolicyCatalogue);
