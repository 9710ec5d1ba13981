// Traffic policies of an edge, in their two module forms, checked before they are stored:
// - `policy` (the older one): `{enabled?, inbound?, outbound?}`, each direction a list of named
//   rules; returned normalized;
// - `traffic_policy`: a JSON or YAML document (a string, stored and echoed as sent) mapping each
//   phase of the protocol (TCP: `on_tcp_connect`; HTTP: `on_http_request`, `on_http_response`)
//   to a list of rules.
// This file holds the two forms and what callers use; the document's parse (document.ts), the
// rules (rules.ts) and the actions' configs (action-configs.ts) are beside it. Everything here is
// pure: IP policies named by `restrict-ips` are returned (policyIdsOf, documentPolicyIds) for the
// caller to check against the account.
import { errors } from '../../core/errors.js';
import { parsePolicyDocument } from './document.js';
import { PROTOCOLS, type PolicyProtocol } from './protocols.js';
import { checkRules, documentError, fieldError, listAt, policyBudget, type EndpointRule } from './rules.js';
import { clip, isObject, jsonType, unknownKey } from './values.js';
import { trafficPolicyErrors } from './traffic-policy.errors.js';

export { MAX_RESPONSE_CONTENT_BYTES } from './action-configs.js';
export { MAX_DOCUMENT_BYTES } from './document.js';
export { DOCUMENT_LIMITS } from './document-bounds.js';
export { LIMITS } from './limits.js';
export type { PolicyProtocol } from './protocols.js';
export type { EndpointRule } from './rules.js';

export interface EndpointPolicy {
  enabled: boolean;
  inbound: EndpointRule[];
  outbound: EndpointRule[] | null;
}

// ---------------------------------------------------------------------------------------------
// The policy module.

const POLICY_KEYS = ['enabled', 'inbound', 'outbound'] as const;

/**
 * The old `policy` module body ({enabled?, inbound?, outbound?}) checked for an edge of `protocol`
 * (inbound: connections or requests; outbound: responses); returns it normalized: enabled default true, config null when absent, outbound null when absent/null,
 * inbound [] when absent. Throws ApiError.
 */
export function checkEndpointPolicy(body: unknown, protocol: PolicyProtocol): EndpointPolicy {
  const spec = PROTOCOLS[protocol];
  if (!isObject(body)) throw errors.invalidField({ field: 'policy', problem: `must be an object; got ${jsonType(body)}` });
  const extra = unknownKey(body, POLICY_KEYS);
  if (extra !== undefined) throw fieldError(clip(extra, 40), `is not a field of a policy; the fields are ${POLICY_KEYS.join(', ')}`);
  if (body.enabled !== undefined && body.enabled !== null && typeof body.enabled !== 'boolean')
    throw fieldError('enabled', `must be true or false; got ${jsonType(body.enabled)}`);

  const budget = policyBudget();
  const direction = (where: 'inbound' | 'outbound') =>
    checkRules(listAt(body[where], where, 'rules', fieldError), {
      where,
      env: spec.directions[where].env,
      allowed: spec.directions[where].actions,
      protocol: spec,
      nameRequired: true,
      shapeError: fieldError,
      budget,
    });
  return {
    enabled: (body.enabled as boolean | null | undefined) ?? true,
    inbound: direction('inbound'),
    outbound: body.outbound === undefined || body.outbound === null ? null : direction('outbound'),
  };
}

// ---------------------------------------------------------------------------------------------
// The traffic_policy module.

/**
 * The newer `traffic_policy` module value (a JSON or YAML string) checked for the protocol's
 * phases (tcp: on_tcp_connect; http: on_http_request, on_http_response). Returns the IP policy ids
 * its restrict-ips actions name (as documentPolicyIds), from the one parse; throws ApiError.
 */
export function checkTrafficPolicyDocument(value: string, protocol: PolicyProtocol): string[] {
  const spec = PROTOCOLS[protocol];
  const phases = spec.phases;
  const doc = parsePolicyDocument(value);
  if (!isObject(doc)) throw trafficPolicyErrors.invalidPolicyDocument({ problem: `must be a mapping of phases to lists of rules; got ${jsonType(doc)}` });
  const valid = Object.keys(phases);
  const unknown = unknownKey(doc, valid);
  if (unknown !== undefined) throw trafficPolicyErrors.unknownPhase({ phase: clip(unknown, 40), valid });
  const budget = policyBudget();
  for (const [phase, rules] of Object.entries(doc)) {
    if (!Array.isArray(rules)) throw documentError(phase, `must be a list of rules; got ${jsonType(rules)}`);
    const { env, actions } = phases[phase]!;
    checkRules(rules, { where: phase, env, allowed: actions, protocol: spec, nameRequired: false, shapeError: documentError, budget });
  }
  return idsOfDocument(doc);
}

// ---------------------------------------------------------------------------------------------
// The IP policies that restrict-ips actions name.

function ipPolicyIds(actions: Iterable<unknown>, into: Set<string>): void {
  for (const action of actions) {
    if (!isObject(action) || action.type !== 'restrict-ips' || !isObject(action.config)) continue;
    const ids = action.config.ip_policies;
    if (Array.isArray(ids)) for (const id of ids) if (typeof id === 'string') into.add(id);
  }
}

/** restrict-ips configs name IP policy ids: each once, in order of appearance, for the caller to check against the account. */
export function policyIdsOf(policy: EndpointPolicy): string[] {
  const ids = new Set<string>();
  for (const rule of [...policy.inbound, ...(policy.outbound ?? [])]) ipPolicyIds(rule.actions, ids);
  return [...ids];
}

/** The same for a traffic_policy document (one that checkTrafficPolicyDocument accepts). */
export function documentPolicyIds(value: string): string[] {
  return idsOfDocument(parsePolicyDocument(value));
}

function idsOfDocument(doc: unknown): string[] {
  const ids = new Set<string>();
  if (!isObject(doc)) return [];
  for (const rules of Object.values(doc)) {
    if (!Array.isArray(rules)) continue;
    for (const rule of rules) if (isObject(rule) && Array.isArray(rule.actions)) ipPolicyIds(rule.actions, ids);
  }
  return [...ids];
}
