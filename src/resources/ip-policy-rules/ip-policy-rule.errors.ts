// The errors of IP policy rules: a CIDR that is not a network, and two rules for one CIDR.
import { entry, throwersOf } from '../../core/errors.js';

export const ipPolicyRuleCatalogue = {
  invalidCidr: entry<{ cidr: string }>(
    1406,
    400,
    'cidr is not an IPv4 or IPv6 network in CIDR notation.',
    (a) => `cidr '${a.cidr}' is not a valid IPv4 or IPv6 CIDR such as 10.0.0.0/8 or 2001:db8::/32.`,
  ),
  cidrNotNetwork: entry<{ cidr: string; suggestion: string }>(
    1409,
    400,
    "cidr names a host inside the network instead of the network's first address.",
    (a) => `cidr '${a.cidr}' must be given as the lowest address of its range; did you mean '${a.suggestion}'?`,
  ),
  cidrMissingMask: entry<{ cidr: string }>(
    1413,
    400,
    'cidr has no prefix length (mask).',
    (a) => `cidr '${a.cidr}' has no mask; add one, e.g. '${a.cidr}/${a.cidr.includes(':') ? 128 : 32}' for this address alone.`,
  ),
  duplicateRule: entry<{ cidr: string; policyId: string }>(
    1408,
    409,
    'The IP policy already has a rule for that CIDR.',
    (a) => `IP policy ${a.policyId} already has a rule for ${a.cidr}; change that rule instead.`,
  ),
} as const;

/** Error factories: `throw ipPolicyRuleErrors.invalidCidr(…)`. */
export const ipPolicyRuleErrors = throwersOf(ipPolicyRuleCatalogue);
