// A credential's ACL: the rules that limit what an agent presenting its token may bind.
// Each rule is checked strictly here and stored in one form; unknown forms are refused, naming the
// rule, rather than stored and ignored. See docs/api.md for what each rule allows.
import { parseDomainName, type NameProblem } from '../../lib/dns/names.js';
import { MAX_LABEL_KEY_BYTES, MAX_LABEL_VALUE_BYTES } from '../backends/backend.schema.js';
import { credentialErrors } from './credential.errors.js';

export const MAX_ACL_RULES = 100;
export const MAX_ACL_RULE_LENGTH = 512;

const BIND = 'bind:';
const bytes = (s: string) => Buffer.byteLength(s, 'utf8');
/** Letters, digits and punctuation: no spaces or control characters in a label key or value. */
const LABEL_PART = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]+$/u;

function nameProblem(p: NameProblem): string {
  switch (p.problem) {
    case 'empty':
      return 'the domain is empty';
    case 'character':
      return `'${p.character}' is not allowed in a domain`;
    case 'empty-label':
      return 'the domain has an empty label';
    case 'label-start':
      return `label '${p.label}' starts with a hyphen`;
    case 'label-end':
      return `label '${p.label}' ends with a hyphen`;
    case 'double-hyphen':
      return `label '${p.label}' has '--' in its third and fourth places`;
    case 'punycode':
      return `label '${p.label}' is not valid Punycode`;
    case 'label-length':
      return `label '${p.label}' is ${p.length} characters long, more than 63`;
    case 'name-length':
      return `the domain is ${p.length} characters long, more than 253`;
    case 'single-label':
      return 'the domain has a single label';
    case 'numeric-tld':
      return `the top-level domain '${p.tld}' is all digits`;
    case 'wildcard-not-allowed':
    case 'wildcard-position':
    case 'wildcard-label':
      return "a wildcard is only '*.' at the start of the domain";
    case 'wildcard-suffix':
      return 'a wildcard needs a domain of two or more labels after it';
  }
}

function labelProblem(key: string, value: string): string | undefined {
  if (key === '') return 'the label key is empty';
  if (value === '') return 'the label value is empty';
  if (bytes(key) > MAX_LABEL_KEY_BYTES) return `the label key is longer than ${MAX_LABEL_KEY_BYTES} bytes`;
  if (bytes(value) > MAX_LABEL_VALUE_BYTES) return `the label value is longer than ${MAX_LABEL_VALUE_BYTES} bytes`;
  if (!LABEL_PART.test(key) || !LABEL_PART.test(value)) return 'a label key or value has a space or a control character';
  if ((key !== '*' && key.includes('*')) || (value !== '*' && value.includes('*'))) return "a wildcard is a whole key or value, '*'";
  return undefined;
}

/** One rule in its stored form, or the 400 that names it (`index` is its place in the list). */
export function readAclRule(rule: string, index: number): string {
  if (rule === '*') return rule;
  if (!rule.startsWith(BIND)) throw credentialErrors.invalidAclRule({ index, rule });
  const target = rule.slice(BIND.length);
  if (target === '*') return rule;
  const equals = target.indexOf('=');
  if (equals !== -1) {
    // A label: the key is everything before the first '='; a value may hold '=' as a backend's may.
    const problem = labelProblem(target.slice(0, equals), target.slice(equals + 1));
    if (problem) throw credentialErrors.invalidAclLabel({ index, rule, problem });
    return rule;
  }
  if (target.includes(':')) throw credentialErrors.invalidAclRule({ index, rule }); // an address (host:port): not a rule this server takes
  const parsed = parseDomainName(target, { wildcard: true });
  if (!parsed.ok) throw credentialErrors.invalidAclDomain({ index, rule, problem: nameProblem(parsed) });
  return `${BIND}${parsed.name}`;
}

/** A whole ACL in its stored form, or the 400 for its first bad rule. */
export function readAcl(rules: readonly string[]): string[] {
  if (rules.length > MAX_ACL_RULES) throw credentialErrors.tooManyAclRules({ count: rules.length, max: MAX_ACL_RULES });
  return rules.map((rule, index) => readAclRule(rule, index));
}

/** Whether the ACL (stored form) lets an agent bind anything at all: empty, `*` or `bind:*`. */
function allowsEverything(acl: readonly string[]): boolean {
  return acl.length === 0 || acl.includes('*') || acl.includes(`${BIND}*`);
}

/**
 * Whether an agent holding this ACL may bind `name` (lower case, A-labels; `*.example.com` for a
 * wildcard endpoint). `bind:app.example.com` allows that name; `bind:*.example.com` allows the
 * names under example.com at any depth and `*.example.com` itself, not `example.com`.
 */
export function aclAllowsName(acl: readonly string[], name: string): boolean {
  if (allowsEverything(acl)) return true;
  for (const rule of acl) {
    if (!rule.startsWith(BIND)) continue;
    const target = rule.slice(BIND.length);
    if (target.includes('=')) continue;
    if (target === name) return true;
    if (target.startsWith('*.') && name.endsWith(target.slice(1))) return true;
  }
  return false;
}

/** Whether this ACL allows an address (`host:port`): no rule names one, so only an ACL that allows everything. */
export function aclAllowsAddress(acl: readonly string[]): boolean {
  return allowsEverything(acl);
}

/** Whether an agent holding this ACL may start a tunnel with these labels: each label must match a label rule. */
export function aclAllowsLabels(acl: readonly string[], labels: Readonly<Record<string, string>>): boolean {
  if (allowsEverything(acl)) return true;
  const rules = acl
    .filter((r) => r.startsWith(BIND) && r.includes('='))
    .map((r) => {
      const target = r.slice(BIND.length);
      const equals = target.indexOf('=');
      return { key: target.slice(0, equals), value: target.slice(equals + 1) };
    });
  return Object.entries(labels).every(([key, value]) => rules.some((r) => (r.key === '*' || r.key === key) && (r.value === '*' || r.value === value)));
}
