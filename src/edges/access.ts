// The access checks of edges and routes that need no upstream: the IP restriction (the IP policies
// it names, their rules as the snapshot holds them) and the user agent filter (RE2 patterns).
// Each is compiled once per snapshot object and kept beside it, so a request only matches.
import { IpMatcher, type Rule } from '../lib/ip/cidr.js';
import { compileRe2, type Re2Pattern } from '../lib/regex/re2-runtime.js';
import type { IpPolicyRules, IpRestrictionModule, UserAgentFilterModule } from './edge-config.js';

/** Each module's matcher, made from the policies it was made with (a snapshot holds both; a new snapshot, new ones). */
const ipMatchers = new WeakMap<IpRestrictionModule, { policies: ReadonlyMap<string, IpPolicyRules>; matcher: IpMatcher }>();

/**
 * Whether the client's address passes the IP restriction: some allow rule of its policies matches
 * it and no deny rule does (deny wins; policies with deny rules alone refuse everyone, as the
 * API's own IP restrictions do). A policy deleted meanwhile adds no rule.
 */
export function ipAllowed(module: IpRestrictionModule, policies: ReadonlyMap<string, IpPolicyRules>, clientIp: string): boolean {
  let matcher = ipMatchers.get(module)?.policies === policies ? ipMatchers.get(module)!.matcher : undefined;
  if (!matcher) {
    const rules: Rule[] = [];
    for (const id of module.ip_policy_ids) {
      const policy = policies.get(id);
      for (const cidr of policy?.allow ?? []) rules.push({ cidr, action: 'allow' });
      for (const cidr of policy?.deny ?? []) rules.push({ cidr, action: 'deny' });
    }
    matcher = new IpMatcher(rules);
    ipMatchers.set(module, { policies, matcher });
  }
  return matcher.allows(clientIp);
}

const userAgentPatterns = new WeakMap<UserAgentFilterModule, { allow: Re2Pattern[]; deny: Re2Pattern[] } | 'invalid'>();

function compileAll(module: UserAgentFilterModule): { allow: Re2Pattern[]; deny: Re2Pattern[] } | 'invalid' {
  try {
    return { allow: module.allow.map((p) => compileRe2(p)), deny: module.deny.map((p) => compileRe2(p)) };
  } catch {
    // The API stores only patterns RE2 compiles; a stored one that does not (a damaged row) fails closed.
    return 'invalid';
  }
}

/**
 * Whether the User-Agent passes the filter: one matching an allow pattern passes (allow wins over
 * deny); else one matching a deny pattern is refused; else, when there are allow patterns and no
 * deny ones, it is refused (an allow list), and otherwise it passes. Patterns are RE2, unanchored,
 * run in linear time. A request without User-Agent is matched as the empty string. A filter
 * whose patterns do not compile refuses every request.
 */
export function userAgentAllowed(module: UserAgentFilterModule, userAgent: string): boolean {
  let compiled = userAgentPatterns.get(module);
  if (!compiled) {
    compiled = compileAll(module);
    userAgentPatterns.set(module, compiled);
  }
  if (compiled === 'invalid') return false;
  if (compiled.allow.some((p) => p.test(userAgent))) return true;
  if (compiled.deny.some((p) => p.test(userAgent))) return false;
  return !(compiled.allow.length > 0 && compiled.deny.length === 0);
}
