// Traffic policies of an edge, in their two module forms, checked before they are stored:
// - `policy` (the older one): `{enabled?, inbound?, outbound?}`, each direction a list of named
//   rules; returned normalized;
// - `traffic_policy`: a JSON or YAML document (a string, stored and echoed as sent) mapping each
//   phase of the protocol (TCP: `on_tcp_connect`; HTTP: `on_http_request`, `on_http_response`)
//   to a list of rules.
// A rule has CEL expressions (all must hold for its actions to run) and actions. Everything here
// is pure: IP policies named by `restrict-ips` are returned (policyIdsOf, documentPolicyIds) for
// the caller to check against the account.
import { CST, Lexer, LineCounter, isAlias, isMap, isScalar, isSeq, parseDocument, type Document } from 'yaml';
import { errors, type ApiError } from '../../core/errors.js';
import { hasPrefix } from '../../core/ids.js';
import { isFieldValue, isToken } from '../../lib/http/syntax.js';
import { parseCidr } from '../../lib/ip/cidr.js';
import { re2Problem } from '../../lib/regex/re2.js';
import { checkExpression, checkValueExpression, type CelEnvName } from './cel.js';
import { trafficPolicyErrors } from './traffic-policy.errors.js';

// Checking CEL costs time in proportion to its length (up to a few microseconds a character), and
// a config value by value (a CIDR costs microseconds), so a policy's expressions and its configs'
// values are bounded all together as well as one by one: a policy module body of 1 MiB could
// otherwise hold 50,000 CIDRs.
export const LIMITS = {
  rulesPerPhase: 100,
  expressionsPerRule: 32,
  actionsPerRule: 32,
  expressionLength: 4096,
  expressionsLength: 32 * 1024,
  configValues: 10_000,
} as const;

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

export type PolicyProtocol = 'tcp' | 'http';

/** How a shape error is reported: a body field (policy module) or a place in the document. */
type ShapeError = (path: string, problem: string) => ApiError;

const fieldError: ShapeError = (path, problem) => errors.invalidField({ field: `policy.${path}`, problem });
const documentError: ShapeError = (path, problem) => trafficPolicyErrors.invalidPolicyDocument({ problem: `at ${path} ${problem}` });

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
// Places inside a config are named by their path (`status_code`, `http.tokens[0].name`).

/**
 * Where the CEL of a config is checked: the environment of its rule, and the policy's budget of
 * expression characters, which `spend` takes from (throwing 1971 when it is spent).
 */
interface CelScope {
  env: CelEnvName;
  spend(expression: string): void;
}

/** A config check gets the CEL scope of its rule, for configs that hold expressions. */
type ConfigCheck = (config: JsonObject | null, cel: CelScope) => string | undefined;

/** An unknown key of the config (`at` empty) or of an object inside it (`at` its path). */
function unknownConfigKey(config: JsonObject, known: readonly string[], at = ''): string | undefined {
  const key = unknownKey(config, known);
  if (key === undefined) return undefined;
  return at === ''
    ? `has unknown key '${clip(key, 40)}'; the keys are ${known.join(', ')}`
    : `has unknown key '${at}.${clip(key, 40)}'; the keys of '${at}' are ${known.join(', ')}`;
}

/** The check of an action that takes no config on this kind of edge (deny on TCP). */
const noConfig =
  (edge: string): ConfigCheck =>
  (config) => {
    const key = config === null ? undefined : Object.keys(config)[0];
    return key === undefined ? undefined : `must be empty on ${edge}; got key '${clip(key, 40)}'`;
  };

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

/** A list of strings at `at` (absent is fine), each item checked by `itemProblem`. */
function stringList(list: unknown, at: string, what: string, itemProblem: (at: string, item: string) => string | undefined): string | undefined {
  if (list === undefined) return undefined;
  if (!Array.isArray(list)) return `has '${at}' of type ${jsonType(list)}; it must be a list of ${what}`;
  for (const [i, item] of list.entries()) {
    if (typeof item !== 'string') return `has ${at}[${i}] of type ${jsonType(item)}; it must be a string`;
    const problem = itemProblem(`${at}[${i}]`, item);
    if (problem) return problem;
  }
  return undefined;
}

// The HTTP configs are nested objects of a few kinds of values, so they are declared as shapes:
// a check of one value at its path, composed into objects, lists and maps.

/** The problem with the value at `at` (present: absence is the object's business), or nothing. */
type ValueCheck = (value: unknown, at: string, cel: CelScope) => string | undefined;

/** A field of an object: its check, and whether it must be there. */
type Field = ValueCheck | { required: ValueCheck };

const required = (check: ValueCheck): Field => ({ required: check });

/** An object with these fields and no other; `at` empty for the config itself. */
function objectOf(fields: Record<string, Field>): ValueCheck {
  const known = Object.keys(fields);
  return (value, at, cel) => {
    if (!isObject(value)) return `has '${at}' of type ${jsonType(value)}; it must be an object`;
    const extra = unknownConfigKey(value, known, at);
    if (extra) return extra;
    for (const [key, field] of Object.entries(fields)) {
      const path = at === '' ? key : `${at}.${key}`;
      const isRequired = typeof field !== 'function';
      if (value[key] === undefined) {
        if (isRequired) return `is missing '${path}', which is required`;
        continue;
      }
      const problem = (isRequired ? field.required : field)(value[key], path, cel);
      if (problem) return problem;
    }
    return undefined;
  };
}

/** A config of this shape; `config: null` (or absent) is fine unless a field is required. */
function configOf(fields: Record<string, Field>): ConfigCheck {
  const check = objectOf(fields);
  const needed = Object.keys(fields).filter((key) => typeof fields[key] !== 'function');
  return (config, cel) => {
    if (config === null) return needed.length === 0 ? undefined : `is required: give ${needed.join(', ')}`;
    return check(config, '', cel);
  };
}

/** A list of `what`, with `min`..`max` items, each checked by `item`. */
function listOf(what: string, item: ValueCheck, { min = 0, max = Infinity } = {}): ValueCheck {
  return (value, at, cel) => {
    if (!Array.isArray(value)) return `has '${at}' of type ${jsonType(value)}; it must be a list of ${what}`;
    if (value.length < min) return `has '${at}' with ${value.length} items; give at least ${min}`;
    if (value.length > max) return `has '${at}' with ${value.length} items; at most ${max} are allowed`;
    for (const [i, element] of value.entries()) {
      const problem = item(element, `${at}[${i}]`, cel);
      if (problem) return problem;
    }
    return undefined;
  };
}

/** A check of a string's content. */
type TextCheck = (value: string, at: string, cel: CelScope) => string | undefined;

/** A string, whose content `problem` (if given) may refuse. */
function text({ nonEmpty = false, maxBytes = Infinity, problem }: { nonEmpty?: boolean; maxBytes?: number; problem?: TextCheck } = {}): ValueCheck {
  return (value, at, cel) => {
    if (typeof value !== 'string') return `has '${at}' of type ${jsonType(value)}; it must be a string`;
    if (nonEmpty && value.trim() === '') return `has '${at}' empty; give a value`;
    const bytes = Buffer.byteLength(value, 'utf8');
    if (bytes > maxBytes) return `has '${at}' of ${bytes} bytes; at most ${maxBytes} are allowed`;
    return problem?.(value, at, cel);
  };
}

/** An integer from `min` to `max`. */
function integer(min: number, max: number): ValueCheck {
  return (value, at) => {
    const range = `an integer from ${min} to ${max}`;
    if (typeof value !== 'number') return `has '${at}' of type ${jsonType(value)}; it must be ${range}`;
    if (!Number.isInteger(value) || value < min || value > max) return `has '${at}' ${value}, which is not ${range}`;
    return undefined;
  };
}

/** One of a few values (strings or numbers). */
function oneOf(values: readonly (string | number)[]): ValueCheck {
  return (value, at) =>
    values.includes(value as string | number)
      ? undefined
      : `has '${at}' ${clip(JSON.stringify(value) ?? String(value), 40)}, which is not one of ${values.join(', ')}`;
}

/** An object used as a map of `what`: each key checked by `keyProblem`, each value by `item`. */
function mapOf(what: string, keyProblem: TextCheck, item: ValueCheck, { nonEmpty = false } = {}): ValueCheck {
  return (value, at, cel) => {
    if (!isObject(value)) return `has '${at}' of type ${jsonType(value)}; it must be an object mapping ${what}`;
    if (nonEmpty && Object.keys(value).length === 0) return `has '${at}' empty; give at least one entry`;
    for (const [key, element] of Object.entries(value)) {
      const problem = keyProblem(key, at, cel) ?? item(element, `${at}.${clip(key, 40)}`, cel);
      if (problem) return problem;
    }
    return undefined;
  };
}

const anObject: ValueCheck = (value, at) => (isObject(value) ? undefined : `has '${at}' of type ${jsonType(value)}; it must be an object`);

// RFC 9110 §5.1: a field name is a token.
const NOT_A_HEADER_NAME = "which is not a header name (letters, digits and !#$%&'*+-.^_`|~ only)";

const headerName = text({ problem: (name, at) => (isToken(name) ? undefined : `has '${at}' '${clip(name, 40)}', ${NOT_A_HEADER_NAME}`) });

// A CR or LF would end the header and start another (or the body): header injection. HTTP/2 and HTTP/3 refuse NUL.
const headerValue = text({
  problem: (value, at) => (isFieldValue(value) ? undefined : `has '${at}' with a control character (such as CR, LF or NUL), which a header value cannot hold`),
});

const headerMap = ({ nonEmpty = false } = {}) =>
  mapOf('header names to values', (key, at) => (isToken(key) ? undefined : `has '${at}' key '${clip(key, 40)}', ${NOT_A_HEADER_NAME}`), headerValue, {
    nonEmpty,
  });

/** A regular expression the edge (RE2, Go's syntax) can compile. */
const regex: ValueCheck = text({
  nonEmpty: true,
  problem: (source, at) => {
    const problem = re2Problem(source);
    return problem && `has '${at}' '${clip(source, 64)}', which ${clip(problem, 120)}`;
  },
});

const statusCode = integer(100, 999);

/** A Go-style duration of hours, minutes and seconds (`90s`, `1m30s`, `1.5h`), in milliseconds. */
function durationMs(value: string): number | undefined {
  if (!/^(\d+(\.\d+)?[hms])+$/.test(value)) return undefined;
  const unit = { h: 3_600_000, m: 60_000, s: 1_000 } as const;
  let total = 0;
  for (const [, amount, u] of value.matchAll(/(\d+(?:\.\d+)?)([hms])/g)) total += Number(amount) * unit[u as keyof typeof unit];
  return Math.round(total);
}

/** The rate limit's window: 60s to 24h, in steps of 10s (the granularity the edge counts in). */
const rateWindow = text({
  problem: (value, at) => {
    const ms = durationMs(value);
    const shown = clip(value, 40);
    if (ms === undefined) return `has '${at}' '${shown}', which is not a duration such as 60s, 90s, 5m or 1h`;
    if (ms < 60_000 || ms > 86_400_000) return `has '${at}' '${shown}', which is not from 60s to 24h`;
    if (ms % 10_000 !== 0) return `has '${at}' '${shown}', which is not a multiple of 10s`;
    return undefined;
  },
});

/** A CEL expression giving a value (a bucket key), checked in the rule's environment. */
const valueExpression = text({
  nonEmpty: true,
  problem: (value, at, cel) => {
    const length = Array.from(value).length;
    if (length > LIMITS.expressionLength) return `has '${at}' of ${length} characters; at most ${LIMITS.expressionLength} are allowed`;
    cel.spend(value);
    const checked = checkValueExpression(value, cel.env);
    return checked.ok ? undefined : `has '${at}' '${clip(value, 64)}', which is not a valid expression here: ${checked.reason} (${checked.position})`;
  },
});

const allowList = objectOf({ allow_list: required(listOf('{value} objects', objectOf({ value: required(text({ nonEmpty: true })) }), { min: 1 })) });

const JWT_TOKEN_TYPES = ['access_token', 'at+jwt', 'id_token', 'it+jwt', 'jwt', 'plain'] as const;

// The shape of jwt-validation's config (ngrok's), not its cryptography: issuers, audiences and
// where tokens are must be given; key sources are URLs the edge fetches.
const jwtValidation = configOf({
  issuer: required(allowList),
  audience: required(allowList),
  http: required(
    objectOf({
      tokens: required(
        listOf(
          'tokens',
          objectOf({
            type: required(oneOf(JWT_TOKEN_TYPES)),
            method: required(oneOf(['header', 'body'])),
            name: required(text({ nonEmpty: true })),
            prefix: text(),
          }),
          { min: 1 },
        ),
      ),
    }),
  ),
  jws: required(
    objectOf({
      allowed_algorithms: required(
        listOf(
          'algorithm names',
          text({
            nonEmpty: true,
            problem: (value, at) => (value.toLowerCase() === 'none' ? `has '${at}' 'none'; unsigned tokens cannot be allowed` : undefined),
          }),
          { min: 1 },
        ),
      ),
      keys: objectOf({ sources: objectOf({ additional_jkus: listOf('URLs', text({ nonEmpty: true })) }) }),
    }),
  ),
});

/** Largest custom-response body, in UTF-8 bytes. */
export const MAX_RESPONSE_CONTENT_BYTES = 64 * 1024;

/** The configs the same on every protocol. */
const SHARED_CHECKS = {
  log: configOf({ metadata: anObject }),

  'restrict-ips': (config) => {
    const keys = ['enforce', 'allow', 'deny', 'ip_policies'] as const;
    if (config === null) return 'is required: list at least one of allow, deny or ip_policies';
    const unknown = unknownConfigKey(config, keys);
    if (unknown) return unknown;
    if (config.enforce !== undefined && typeof config.enforce !== 'boolean')
      return `has 'enforce' of type ${jsonType(config.enforce)}; it must be true or false`;
    const problem =
      stringList(config.allow, 'allow', 'CIDRs', cidrProblem) ??
      stringList(config.deny, 'deny', 'CIDRs', cidrProblem) ??
      stringList(config.ip_policies, 'ip_policies', 'IP policy ids', (at, id) =>
        hasPrefix(id, 'ipp') ? undefined : `has ${at} '${clip(id, 64)}', which is not an IP policy id (ipp_…)`,
      );
    if (problem) return problem;
    if (!(['allow', 'deny', 'ip_policies'] as const).some((key) => (config[key] as unknown[] | undefined)?.length))
      return 'must list at least one of allow, deny or ip_policies';
    return undefined;
  },
} satisfies Record<string, ConfigCheck>;

const TCP_CHECKS: Record<string, ConfigCheck> = { ...SHARED_CHECKS, deny: noConfig('a TCP edge') };

const HTTP_CHECKS: Record<string, ConfigCheck> = {
  ...SHARED_CHECKS,
  deny: configOf({ status_code: statusCode }),
  'custom-response': configOf({
    status_code: required(statusCode),
    content: text({ maxBytes: MAX_RESPONSE_CONTENT_BYTES }),
    headers: headerMap(),
    content_type: text({ nonEmpty: true }),
  }),
  'rate-limit': configOf({
    name: text(),
    algorithm: oneOf(['sliding_window']),
    capacity: required(integer(1, 2_000_000_000)),
    rate: required(rateWindow),
    bucket_key: listOf('CEL expressions', valueExpression, { max: 10 }),
  }),
  'url-rewrite': configOf({ from: required(regex), to: required(text()), format: text({ nonEmpty: true }) }),
  'add-headers': configOf({ headers: required(headerMap({ nonEmpty: true })) }),
  'remove-headers': configOf({
    headers: required(listOf('header names', headerName, { min: 1 })),
  }),
  redirect: configOf({ to: required(text({ nonEmpty: true })), from: regex, status_code: oneOf([301, 302, 303, 307, 308]), headers: headerMap() }),
  'compress-response': configOf({ algorithms: listOf('algorithm names', oneOf(['gzip', 'deflate', 'br', 'compress'])) }),
  'jwt-validation': jwtValidation,
};

/** Where rules run: the CEL environment of their expressions and the actions allowed there. */
interface Place {
  env: CelEnvName;
  actions: readonly string[];
}

interface ProtocolSpec {
  /** Every action type of the protocol (sorted, as messages list them), and the check of each one's config. */
  actions: readonly string[];
  checks: Readonly<Record<string, ConfigCheck>>;
  /** The policy module's two directions, and the phases of a traffic_policy document. */
  directions: { inbound: Place; outbound: Place };
  phases: Readonly<Record<string, Place>>;
}

function protocolSpec(checks: Record<string, ConfigCheck>, places: Pick<ProtocolSpec, 'directions' | 'phases'>): ProtocolSpec {
  return { actions: Object.keys(checks).sort(), checks, ...places };
}

const HTTP_REQUEST_ACTIONS = [
  'add-headers',
  'custom-response',
  'deny',
  'jwt-validation',
  'log',
  'rate-limit',
  'redirect',
  'remove-headers',
  'restrict-ips',
  'url-rewrite',
] as const;
const HTTP_RESPONSE_ACTIONS = ['add-headers', 'compress-response', 'custom-response', 'log', 'remove-headers'] as const;

const PROTOCOLS: Record<PolicyProtocol, ProtocolSpec> = {
  tcp: protocolSpec(TCP_CHECKS, {
    directions: { inbound: { env: 'tcp', actions: ['deny', 'log', 'restrict-ips'] }, outbound: { env: 'tcp', actions: ['log'] } },
    phases: { on_tcp_connect: { env: 'tcp', actions: ['deny', 'log', 'restrict-ips'] } },
  }),
  // The policy module's inbound runs on requests and its outbound on responses, as the document's two phases do.
  http: protocolSpec(HTTP_CHECKS, {
    directions: {
      inbound: { env: 'policy_http_request', actions: HTTP_REQUEST_ACTIONS },
      outbound: { env: 'policy_http_response', actions: HTTP_RESPONSE_ACTIONS },
    },
    phases: {
      on_http_request: { env: 'http_request', actions: HTTP_REQUEST_ACTIONS },
      on_http_response: { env: 'http_response', actions: HTTP_RESPONSE_ACTIONS },
    },
  }),
};

// ---------------------------------------------------------------------------------------------
// Rules, shared by both forms.

interface RulesContext {
  /** `inbound`, `outbound` or the phase: how messages name the list. */
  where: string;
  env: CelEnvName;
  /** The action types allowed here, and the protocol (every type it knows, and their configs). */
  allowed: readonly string[];
  protocol: ProtocolSpec;
  /** The policy module requires rule names; a document does not. */
  nameRequired: boolean;
  shapeError: ShapeError;
  /** What the whole policy may still check: characters of CEL, values of configs. */
  budget: { cel: number; values: number };
}

/** A fresh budget for one policy. */
const policyBudget = () => ({ cel: LIMITS.expressionsLength, values: LIMITS.configValues });

/** The values of a config (keys, scalars, arrays and objects), counted to just past `max`. */
function countValues(value: unknown, max: number, count = 0): number {
  count++;
  if (Array.isArray(value)) {
    for (const item of value) if ((count = countValues(item, max, count)) > max) break;
  } else if (isObject(value)) {
    for (const key of Object.keys(value)) if ((count = countValues(value[key], max, count + 1)) > max) break;
  }
  return count;
}

const RULE_KEYS = ['name', 'expressions', 'actions'] as const;
const ACTION_KEYS = ['type', 'config'] as const;

function checkRules(list: unknown[], ctx: RulesContext): EndpointRule[] {
  if (list.length > LIMITS.rulesPerPhase) throw trafficPolicyErrors.tooManyRules({ where: ctx.where, count: list.length, max: LIMITS.rulesPerPhase });
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
  if (ctx.nameRequired && name.trim() === '') throw trafficPolicyErrors.ruleWithoutName({ where, index });
  const label = clip(name.trim() === '' ? `#${index + 1}` : name);

  const expressions = listAt(rule.expressions, `${path}.expressions`, 'CEL expressions', shapeError);
  const actions = listAt(rule.actions, `${path}.actions`, 'actions', shapeError);
  if (expressions.length > LIMITS.expressionsPerRule)
    throw trafficPolicyErrors.tooManyExpressions({ where, rule: label, what: 'expressions', count: expressions.length, max: LIMITS.expressionsPerRule });
  if (actions.length > LIMITS.actionsPerRule)
    throw trafficPolicyErrors.tooManyExpressions({ where, rule: label, what: 'actions', count: actions.length, max: LIMITS.actionsPerRule });
  if (actions.length === 0) throw trafficPolicyErrors.ruleWithoutActions({ where, rule: label });

  const cel: CelScope = {
    env: ctx.env,
    spend(expression) {
      ctx.budget.cel -= expression.length;
      if (ctx.budget.cel < 0) throw trafficPolicyErrors.policyExpressionsTooLong({ where, rule: label, max: LIMITS.expressionsLength });
    },
  };

  for (const [i, expression] of expressions.entries()) {
    if (typeof expression !== 'string') throw shapeError(`${path}.expressions[${i}]`, `must be a string; got ${jsonType(expression)}`);
    if (expression.length > LIMITS.expressionLength) {
      const length = Array.from(expression).length;
      if (length > LIMITS.expressionLength) throw trafficPolicyErrors.expressionTooLong({ where, rule: label, length, max: LIMITS.expressionLength });
    }
    cel.spend(expression);
    const checked = checkExpression(expression, ctx.env);
    if (!checked.ok)
      throw trafficPolicyErrors.invalidExpression({
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
    const known = ctx.protocol.actions;
    if (!known.includes(type)) throw trafficPolicyErrors.unknownActionType({ where, rule: label, type: clip(type, 40), valid: known });
    if (!ctx.allowed.includes(type)) throw trafficPolicyErrors.actionNotAllowed({ where, rule: label, type, valid: ctx.allowed });
    const config = action.config ?? null;
    if (config !== null && !isObject(config)) throw shapeError(`${at}.config`, `must be an object; got ${jsonType(config)}`);
    if (config !== null) ctx.budget.values -= countValues(config, ctx.budget.values);
    if (ctx.budget.values < 0) throw trafficPolicyErrors.policyTooManyValues({ where, rule: label, max: LIMITS.configValues });
    const problem = ctx.protocol.checks[type]?.(config, cel);
    if (problem) throw trafficPolicyErrors.invalidActionConfig({ where, rule: label, type, problem });
    return { type, config };
  });

  return { name, expressions: expressions as string[], actions: checkedActions };
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
// The traffic_policy module's document.

/**
 * The limits of a document's shape (1970). Parsing YAML costs time in proportion to its tokens
 * (a few microseconds each), and some shapes cost more: deep nesting, many anchors or tags on one
 * node, aliases that repeat a large part. So the text is lexed first, which is cheap and stops at
 * the first limit, and only then parsed; the parsed document is then walked once (keys per
 * mapping, duplicate keys, values with what aliases repeat) before it becomes data.
 */
export const DOCUMENT_LIMITS = { tokens: 20_000, depth: 32, anchors: 100, aliases: 100, tags: 100, values: 10_000, keysPerMapping: 1_000 } as const;

const tooComplex = (problem: string) => trafficPolicyErrors.policyDocumentTooComplex({ problem });

/** The lexer's markers, which stand for no text of the source. */
const MARKERS = new Set(['\x02', '\x18', '\x1f']);

/**
 * Counts what parsing would cost, from the tokens alone; throws 1970 at the first limit. Nesting
 * is told from the brackets of flow style, and in block style from the columns where nodes start
 * (the first of a line, each `-` and `?`): one deeper than every open one is inside them all. The
 * parser recurses once per level, and overflows its stack at some thousands.
 */
function checkTokens(text: string): void {
  const { tokens: maxTokens, depth: maxDepth } = DOCUMENT_LIMITS;
  let tokens = 0;
  let depth = 0;
  let offset = 0;
  /** The columns of the open block nodes, and where the current line starts. */
  const columns: number[] = [];
  let lineStart = 0;
  let atLineStart = true;
  const tooDeep = () => tooComplex(`nests lists and mappings more than ${maxDepth} levels deep at ${placeIn(text, offset)}`);
  const counts = { anchor: 0, alias: 0, tag: 0 };
  const limit = { anchor: 'anchors', alias: 'aliases', tag: 'tags' } as const;
  const shown = { anchor: 'anchors (&name)', alias: 'aliases (*name)', tag: 'tags (!tag)' } as const;
  for (const token of new Lexer().lex(text)) {
    if (MARKERS.has(token)) continue;
    if (++tokens > maxTokens)
      throw tooComplex(`has more than ${maxTokens} tokens (keys, values, punctuation, indentation, comments and line breaks each count); make it shorter`);
    const type = CST.tokenType(token);
    if (type === 'newline') {
      atLineStart = true;
      lineStart = offset + token.length;
    } else if (type !== 'space' && type !== 'comment') {
      if (depth === 0 && (atLineStart || type === 'seq-item-ind' || type === 'explicit-key-ind')) {
        const column = offset - lineStart;
        while (columns.length > 0 && columns[columns.length - 1]! >= column) columns.pop();
        columns.push(column);
        if (columns.length > maxDepth) throw tooDeep();
      }
      atLineStart = false;
    }
    if (type === 'flow-map-start' || type === 'flow-seq-start') {
      if (++depth + columns.length > maxDepth) throw tooDeep();
    } else if (type === 'flow-map-end' || type === 'flow-seq-end') depth = Math.max(0, depth - 1);
    else if (type === 'anchor' || type === 'alias' || type === 'tag') {
      const max = DOCUMENT_LIMITS[limit[type]];
      if (++counts[type] > max) throw tooComplex(`has more than ${max} ${shown[type]}; the one at ${placeIn(text, offset)} is one too many`);
    }
    offset += token.length;
  }
}

/** "line L, column C" of an offset into the text, before it is parsed (once, for an error). */
function placeIn(text: string, offset: number): string {
  let line = 1;
  for (let at = text.indexOf('\n'); at !== -1 && at < offset; at = text.indexOf('\n', at + 1)) line++;
  return `line ${line}, column ${offset - (text.lastIndexOf('\n', offset - 1) + 1) + 1}`;
}

/** "line L, column C" of an offset into the document, from the lines its parse counted. */
function place(lines: LineCounter, offset: number): string {
  const { line, col } = lines.linePos(offset);
  return `line ${line}, column ${col}`;
}

/**
 * One walk over the parsed document: nesting depth, keys per mapping and keys given twice, and the
 * values, counting again those an alias repeats (checking the data visits them again). Linear:
 * keys are compared through a set, and an alias adds what its anchor held, counted once.
 */
function checkShape(doc: Document, lines: LineCounter, duplicate: (at: string) => ApiError): void {
  const { depth: maxDepth, values: maxValues, keysPerMapping } = DOCUMENT_LIMITS;
  const anchored = new Map<string, number>();
  let values = 0;
  const count = (added: number, node: { range?: readonly number[] | null }) => {
    values += added;
    if (values > maxValues)
      throw tooComplex(
        `has more than ${maxValues} values (keys, scalars, lists and mappings, and again each one an alias repeats) at ${place(lines, node.range?.[0] ?? 0)}`,
      );
  };
  const walk = (node: unknown, depth: number): void => {
    if (isAlias(node)) {
      count(anchored.get(node.source) ?? 1, node);
      return;
    }
    if (!isScalar(node) && !isMap(node) && !isSeq(node)) return;
    const before = values;
    count(1, node);
    if (isMap(node) || isSeq(node)) {
      if (depth > maxDepth) throw tooComplex(`nests lists and mappings more than ${maxDepth} levels deep at ${place(lines, node.range?.[0] ?? 0)}`);
      if (isMap(node)) {
        if (node.items.length > keysPerMapping)
          throw tooComplex(`has a mapping of ${node.items.length} keys at ${place(lines, node.range?.[0] ?? 0)}; at most ${keysPerMapping} are allowed in one`);
        const keys = new Set<string>();
        for (const pair of node.items) {
          // Keys that are equal once they are the data's (1 and "1" alike) are one key given twice.
          if (isScalar(pair.key)) {
            const key = String(pair.key.value);
            if (keys.has(key)) throw duplicate(place(lines, pair.key.range?.[0] ?? 0));
            keys.add(key);
          }
          walk(pair.key, depth + 1);
          walk(pair.value, depth + 1);
        }
      } else for (const item of node.items) walk(item, depth + 1);
    }
    if (node.anchor) anchored.set(node.anchor, values - before);
  };
  walk(doc.contents, 1);
}

/** The document as data: JSON when it starts with `{`, YAML otherwise. Throws 2212 or 1970. */
function parsePolicyDocument(value: unknown): unknown {
  if (typeof value !== 'string')
    throw trafficPolicyErrors.invalidPolicyDocument({ problem: `must be a string holding a JSON or YAML document; got ${jsonType(value)}` });
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_DOCUMENT_BYTES)
    throw trafficPolicyErrors.invalidPolicyDocument({ problem: `is ${bytes} bytes long; at most ${MAX_DOCUMENT_BYTES} are allowed` });
  const text = value.replace(/^\uFEFF/, '');
  const lines = new LineCounter();
  // Bounded first, whatever the form: even JSON.parse takes tens of milliseconds on the largest.
  checkTokens(text);
  if (/^\s*\{/.test(text)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text) as unknown;
    } catch (error) {
      throw trafficPolicyErrors.invalidPolicyDocument({ problem: `is not valid JSON: ${clip(String((error as Error).message).split('\n')[0]!, 160)}` });
    }
    // JSON.parse keeps the last of two equal keys, so what is checked would not be all that is
    // stored (and echoed): a key given twice is refused, as YAML refuses it. JSON is YAML, whose
    // parse gives each key its place; the same limits hold.
    const doc = parseDocument(text, { uniqueKeys: false, lineCounter: lines });
    checkShape(doc, lines, (at) => trafficPolicyErrors.invalidPolicyDocument({ problem: `has a key given twice at ${at}; give each key once` }));
    return parsed;
  }
  let doc: ReturnType<typeof parseDocument>;
  try {
    // Keys given twice are found by checkShape: the parser's own check compares each key with
    // every other of its mapping, seconds for a mapping of thousands.
    doc = parseDocument(text, { prettyErrors: false, uniqueKeys: false, strict: true, lineCounter: lines });
  } catch (error) {
    throw trafficPolicyErrors.invalidPolicyDocument({ problem: `is not valid YAML: ${clip(String((error as Error).message).split('\n')[0]!, 160)}` });
  }
  const [first] = doc.errors;
  if (first)
    throw trafficPolicyErrors.invalidPolicyDocument({
      problem: `is not valid YAML at ${place(lines, first.pos[0])}: ${clip(first.message.split('\n')[0]!, 160)}`,
    });
  checkShape(doc, lines, (at) => trafficPolicyErrors.invalidPolicyDocument({ problem: `is not valid YAML at ${at}: Map keys must be unique` }));
  try {
    return doc.toJS({ maxAliasCount: 100 }) as unknown;
  } catch (error) {
    throw trafficPolicyErrors.invalidPolicyDocument({
      problem: `is not a usable YAML document: ${clip(String((error as Error).message).split('\n')[0]!, 160)}`,
    });
  }
}

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
