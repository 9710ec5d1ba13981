// Traffic policies of an edge, in their two module forms, checked before they are stored:
// - `policy` (the older one): `{enabled?, inbound?, outbound?}`, each direction a list of named
//   rules; returned normalized;
// - `traffic_policy`: a JSON or YAML document (a string, stored and echoed as sent) mapping each
//   phase of the protocol (TCP: `on_tcp_connect`) to a list of rules.
// A rule has CEL expressions (all must hold for its actions to run) and actions. Everything here
// is pure: IP policies named by `restrict-ips` are returned (policyIdsOf, documentPolicyIds) for
// the caller to check against the account.
import { LineCounter, parseDocument } from 'yaml';
import { errors, type ApiError } from '../../core/errors.js';
import { hasPrefix } from '../../core/ids.js';
import { parseCidr } from '../../lib/ip/cidr.js';
import { checkExpression, type CelEnvName } from './cel.js';

export const LIMITS = { rulesPerPhase: 100, expressionsPerRule: 32, actionsPerRule: 32, expressionLength: 4096 } as const;

/** The largest traffic_policy document, in UTF-8 bytes. */
export const MAX_DOCUMENT_BYTES = 256 * 1024;

export interface EndpointRule {
  name: string;
  expressions: string[];
  actions: { type: string; config: Record<string, unknown> | null }[];
}

export interface EndpointPolicy {
  enabled: boolean;
  inbound: EndpointRule[];
  outbound: EndpointRule[] | null;
}

export type PolicyProtocol = 'tcp';

/** Every action type of a protocol, what each direction of the policy module allows, and the phases of a document. */
const PROTOCOLS = {
  tcp: {
    actions: ['deny', 'log', 'restrict-ips'],
    directions: { inbound: ['deny', 'log', 'restrict-ips'], outbound: ['log'] },
    phases: { on_tcp_connect: { env: 'tcp', actions: ['deny', 'log', 'restrict-ips'] } },
  },
} as const satisfies Record<
  PolicyProtocol,
  {
    actions: readonly string[];
    directions: { inbound: readonly string[]; outbound: readonly string[] };
    phases: Record<string, { env: CelEnvName; actions: readonly string[] }>;
  }
>;

/** How a shape error is reported: a body field (policy module) or a place in the document. */
type ShapeError = (path: string, problem: string) => ApiError;

const fieldError: ShapeError = (path, problem) => errors.invalidField({ field: `policy.${path}`, problem });
const documentError: ShapeError = (path, problem) => errors.invalidPolicyDocument({ problem: `at ${path} ${problem}` });

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

const clip = (text: string, max = 80) => (text.length > max ? `${text.slice(0, max - 3)}...` : text);

/** The first key of `value` not in `known`. */
function unknownKey(value: JsonObject, known: readonly string[]): string | undefined {
  return Object.keys(value).find((key) => !known.includes(key));
}

// ---------------------------------------------------------------------------------------------
// Action configs: each returns the problem (completing "the config of action 'x' …") or nothing.

type ConfigCheck = (config: JsonObject | null) => string | undefined;

function unknownConfigKey(config: JsonObject, known: readonly string[]): string | undefined {
  const key = unknownKey(config, known);
  if (key === undefined) return undefined;
  return known.length === 0
    ? `must be empty on a TCP edge; got key '${clip(key, 40)}'`
    : `has unknown key '${clip(key, 40)}'; the keys are ${known.join(', ')}`;
}

/** The problem with one CIDR, in the words of the IP policy rules; nothing when it is fine. */
function cidrProblem(at: string, text: string): string | undefined {
  const parsed = parseCidr(text);
  if (parsed.ok) return undefined;
  const shown = clip(text, 64);
  if (parsed.problem === 'not-network') return `has ${at} '${shown}', which is not the lowest address of its range; did you mean '${parsed.suggestion}'`;
  if (parsed.problem === 'missing-mask')
    return `has ${at} '${shown}' with no mask; add one, e.g. '${shown}/${text.includes(':') ? 128 : 32}' for this address alone`;
  return `has ${at} '${shown}', which is not a valid IPv4 or IPv6 CIDR such as 10.0.0.0/8 or 2001:db8::/32`;
}

function stringList(config: JsonObject, key: string, what: string, itemProblem: (at: string, item: string) => string | undefined): string | undefined {
  const list = config[key];
  if (list === undefined) return undefined;
  if (!Array.isArray(list)) return `has '${key}' of type ${jsonType(list)}; it must be a list of ${what}`;
  for (const [i, item] of list.entries()) {
    if (typeof item !== 'string') return `has ${key}[${i}] of type ${jsonType(item)}; it must be a string`;
    const problem = itemProblem(`${key}[${i}]`, item);
    if (problem) return problem;
  }
  return undefined;
}

const CONFIG_CHECKS: Record<string, ConfigCheck> = {
  deny: (config) => (config === null ? undefined : unknownConfigKey(config, [])),

  log: (config) => {
    if (config === null) return undefined;
    const unknown = unknownConfigKey(config, ['metadata']);
    if (unknown) return unknown;
    if (config.metadata !== undefined && !isObject(config.metadata)) return `has 'metadata' of type ${jsonType(config.metadata)}; it must be an object`;
    return undefined;
  },

  'restrict-ips': (config) => {
    const keys = ['enforce', 'allow', 'deny', 'ip_policies'] as const;
    if (config === null) return 'is required: list at least one of allow, deny or ip_policies';
    const unknown = unknownConfigKey(config, keys);
    if (unknown) return unknown;
    if (config.enforce !== undefined && typeof config.enforce !== 'boolean')
      return `has 'enforce' of type ${jsonType(config.enforce)}; it must be true or false`;
    const problem =
      stringList(config, 'allow', 'CIDRs', cidrProblem) ??
      stringList(config, 'deny', 'CIDRs', cidrProblem) ??
      stringList(config, 'ip_policies', 'IP policy ids', (at, id) =>
        hasPrefix(id, 'ipp') ? undefined : `has ${at} '${clip(id, 64)}', which is not an IP policy id (ipp_…)`,
      );
    if (problem) return problem;
    if (!(['allow', 'deny', 'ip_policies'] as const).some((key) => (config[key] as unknown[] | undefined)?.length))
      return 'must list at least one of allow, deny or ip_policies';
    return undefined;
  },
};

// ---------------------------------------------------------------------------------------------
// Rules, shared by both forms.

interface RulesContext {
  /** `inbound`, `outbound` or the phase: how messages name the list. */
  where: string;
  env: CelEnvName;
  /** The action types allowed here, and every type the protocol knows. */
  allowed: readonly string[];
  known: readonly string[];
  /** The policy module requires rule names; a document does not. */
  nameRequired: boolean;
  shapeError: ShapeError;
}

const RULE_KEYS = ['name', 'expressions', 'actions'] as const;
const ACTION_KEYS = ['type', 'config'] as const;

function checkRules(list: unknown[], ctx: RulesContext): EndpointRule[] {
  if (list.length > LIMITS.rulesPerPhase) throw errors.tooManyRules({ where: ctx.where, count: list.length, max: LIMITS.rulesPerPhase });
  return list.map((rule, index) => checkRule(rule, index, ctx));
}

/** A value that is a list, or absent (null or undefined: an empty list). */
function listAt(value: unknown, path: string, what: string, shapeError: ShapeError): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw shapeError(path, `must be a list of ${what}; got ${jsonType(value)}`);
  return value;
}

function checkRule(rule: unknown, index: number, ctx: RulesContext): EndpointRule {
  const { where, shapeError } = ctx;
  const path = `${where}[${index}]`;
  if (!isObject(rule)) throw shapeError(path, `must be an object (a rule); got ${jsonType(rule)}`);
  const extra = unknownKey(rule, RULE_KEYS);
  if (extra !== undefined) throw shapeError(`${path}.${clip(extra, 40)}`, `is not a field of a rule; the fields are ${RULE_KEYS.join(', ')}`);

  if (rule.name !== undefined && rule.name !== null && typeof rule.name !== 'string')
    throw shapeError(`${path}.name`, `must be a string; got ${jsonType(rule.name)}`);
  const name = typeof rule.name === 'string' ? rule.name : '';
  if (ctx.nameRequired && name.trim() === '') throw errors.ruleWithoutName({ where, index });
  const label = clip(name.trim() === '' ? `#${index + 1}` : name);

  const expressions = listAt(rule.expressions, `${path}.expressions`, 'CEL expressions', shapeError);
  const actions = listAt(rule.actions, `${path}.actions`, 'actions', shapeError);
  if (expressions.length > LIMITS.expressionsPerRule)
    throw errors.tooManyExpressions({ where, rule: label, what: 'expressions', count: expressions.length, max: LIMITS.expressionsPerRule });
  if (actions.length > LIMITS.actionsPerRule)
    throw errors.tooManyExpressions({ where, rule: label, what: 'actions', count: actions.length, max: LIMITS.actionsPerRule });
  if (actions.length === 0) throw errors.ruleWithoutActions({ where, rule: label });

  for (const [i, expression] of expressions.entries()) {
    if (typeof expression !== 'string') throw shapeError(`${path}.expressions[${i}]`, `must be a string; got ${jsonType(expression)}`);
    if (expression.length > LIMITS.expressionLength) {
      const length = Array.from(expression).length;
      if (length > LIMITS.expressionLength) throw errors.expressionTooLong({ where, rule: label, length, max: LIMITS.expressionLength });
    }
    const checked = checkExpression(expression, ctx.env);
    if (!checked.ok)
      throw errors.invalidExpression({
        where,
        rule: label,
        expression: clip(expression.replace(/\s*\n\s*/g, ' ')),
        position: checked.position,
        reason: checked.reason,
      });
  }

  const checkedActions = actions.map((action, i) => {
    const at = `${path}.actions[${i}]`;
    if (!isObject(action)) throw shapeError(at, `must be an object (an action); got ${jsonType(action)}`);
    const extraKey = unknownKey(action, ACTION_KEYS);
    if (extraKey !== undefined) throw shapeError(`${at}.${clip(extraKey, 40)}`, `is not a field of an action; the fields are ${ACTION_KEYS.join(', ')}`);
    if (typeof action.type !== 'string')
      throw shapeError(`${at}.type`, action.type === undefined ? 'is required' : `must be a string; got ${jsonType(action.type)}`);
    const type = action.type;
    if (!ctx.known.includes(type)) throw errors.unknownActionType({ where, rule: label, type: clip(type, 40), valid: ctx.known });
    if (!ctx.allowed.includes(type)) throw errors.actionNotAllowed({ where, rule: label, type, valid: ctx.allowed });
    const config = action.config ?? null;
    if (config !== null && !isObject(config)) throw shapeError(`${at}.config`, `must be an object; got ${jsonType(config)}`);
    const problem = CONFIG_CHECKS[type]?.(config);
    if (problem) throw errors.invalidActionConfig({ where, rule: label, type, problem });
    return { type, config };
  });

  return { name, expressions: expressions as string[], actions: checkedActions };
}

// ---------------------------------------------------------------------------------------------
// The policy module.

const POLICY_KEYS = ['enabled', 'inbound', 'outbound'] as const;

/**
 * The old `policy` module body ({enabled?, inbound?, outbound?}) checked for a TCP edge; returns it
 * normalized: enabled default true, config null when absent, outbound null when absent/null,
 * inbound [] when absent. Throws ApiError.
 */
export function checkEndpointPolicy(body: unknown, protocol: PolicyProtocol): EndpointPolicy {
  const spec = PROTOCOLS[protocol];
  if (!isObject(body)) throw errors.invalidField({ field: 'policy', problem: `must be an object; got ${jsonType(body)}` });
  const extra = unknownKey(body, POLICY_KEYS);
  if (extra !== undefined) throw fieldError(clip(extra, 40), `is not a field of a policy; the fields are ${POLICY_KEYS.join(', ')}`);
  if (body.enabled !== undefined && body.enabled !== null && typeof body.enabled !== 'boolean')
    throw fieldError('enabled', `must be true or false; got ${jsonType(body.enabled)}`);

  const direction = (where: 'inbound' | 'outbound') =>
    checkRules(listAt(body[where], where, 'rules', fieldError), {
      where,
      env: protocol,
      allowed: spec.directions[where],
      known: spec.actions,
      nameRequired: true,
      shapeError: fieldError,
    });
  return {
    enabled: (body.enabled as boolean | null | undefined) ?? true,
    inbound: direction('inbound'),
    outbound: body.outbound === undefined || body.outbound === null ? null : direction('outbound'),
  };
}

// ---------------------------------------------------------------------------------------------
// The traffic_policy module's document.

/** The document as data: JSON when it starts with `{`, YAML otherwise. Throws 2212. */
function parsePolicyDocument(value: unknown): unknown {
  if (typeof value !== 'string') throw errors.invalidPolicyDocument({ problem: `must be a string holding a JSON or YAML document; got ${jsonType(value)}` });
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_DOCUMENT_BYTES) throw errors.invalidPolicyDocument({ problem: `is ${bytes} bytes long; at most ${MAX_DOCUMENT_BYTES} are allowed` });
  const text = value.replace(/^\uFEFF/, '');
  if (/^\s*\{/.test(text)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text) as unknown;
    } catch (error) {
      throw errors.invalidPolicyDocument({ problem: `is not valid JSON: ${clip(String((error as Error).message).split('\n')[0]!, 160)}` });
    }
    // JSON.parse keeps the last of two equal keys, so what is checked would not be all that is
    // stored (and echoed): a key given twice is refused, as YAML refuses it. JSON is YAML, whose
    // parser reports duplicates with their place.
    const lineCounter = new LineCounter();
    const duplicate = parseDocument(text, { uniqueKeys: true, lineCounter }).errors.find((e) => e.code === 'DUPLICATE_KEY');
    if (duplicate) {
      const { line, col } = lineCounter.linePos(duplicate.pos[0]);
      throw errors.invalidPolicyDocument({ problem: `has a key given twice at line ${line}, column ${col}; give each key once` });
    }
    return parsed;
  }
  const lineCounter = new LineCounter();
  let doc: ReturnType<typeof parseDocument>;
  try {
    doc = parseDocument(text, { prettyErrors: false, uniqueKeys: true, strict: true, lineCounter });
  } catch (error) {
    throw errors.invalidPolicyDocument({ problem: `is not valid YAML: ${clip(String((error as Error).message).split('\n')[0]!, 160)}` });
  }
  const [first] = doc.errors;
  if (first) {
    const { line, col } = lineCounter.linePos(first.pos[0]);
    const at = ` at line ${line}, column ${col}`;
    throw errors.invalidPolicyDocument({ problem: `is not valid YAML${at}: ${clip(first.message.split('\n')[0]!, 160)}` });
  }
  try {
    return doc.toJS({ maxAliasCount: 100 }) as unknown;
  } catch (error) {
    throw errors.invalidPolicyDocument({ problem: `is not a usable YAML document: ${clip(String((error as Error).message).split('\n')[0]!, 160)}` });
  }
}

/**
 * The newer `traffic_policy` module value (a JSON or YAML string) checked for the protocol's
 * phases (tcp: on_tcp_connect only). Returns nothing; throws ApiError.
 */
export function checkTrafficPolicyDocument(value: string, protocol: PolicyProtocol): void {
  const spec = PROTOCOLS[protocol];
  const phases: Record<string, { env: CelEnvName; actions: readonly string[] }> = spec.phases;
  const doc = parsePolicyDocument(value);
  if (!isObject(doc)) throw errors.invalidPolicyDocument({ problem: `must be a mapping of phases to lists of rules; got ${jsonType(doc)}` });
  const valid = Object.keys(phases);
  const unknown = unknownKey(doc, valid);
  if (unknown !== undefined) throw errors.unknownPhase({ phase: clip(unknown, 40), valid });
  for (const [phase, rules] of Object.entries(doc)) {
    if (!Array.isArray(rules)) throw documentError(phase, `must be a list of rules; got ${jsonType(rules)}`);
    const { env, actions } = phases[phase]!;
    checkRules(rules, { where: phase, env, allowed: actions, known: spec.actions, nameRequired: false, shapeError: documentError });
  }
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
  const ids = new Set<string>();
  const doc = parsePolicyDocument(value);
  if (!isObject(doc)) return [];
  for (const rules of Object.values(doc)) {
    if (!Array.isArray(rules)) continue;
    for (const rule of rules) if (isObject(rule) && Array.isArray(rule.actions)) ipPolicyIds(rule.actions, ids);
  }
  return [...ids];
}
