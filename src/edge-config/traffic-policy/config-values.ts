// The kinds of values action configs are made of, as TypeBox schemas (checked by Ajv, see
// config-check.ts) and the refinements run once a config fits them: header names and values,
// regular expressions, durations, CEL value expressions, CIDRs, IP policy ids. The refinements are
// functions here rather than Ajv keywords in src/core/validation.ts: their words name the value
// and what is wrong with it (the CIDR meant, RE2's reason, the CEL error at its column), which an
// Ajv error does not carry; and CEL is checked in the rule's environment and against the policy's
// budget, by cel.ts in this folder, which src/core may not import. They run once the schema
// passed, in the order of the config, so a problem of shape is named before a problem of content.
import { Type, type ArrayOptions, type ObjectOptions, type TProperties, type TSchema } from '@sinclair/typebox';
import { hasPrefix } from '../../core/ids.js';
import { isFieldValue, isToken } from '../../lib/http/syntax.js';
import { parseCidr } from '../../lib/ip/cidr.js';
import { re2Problem } from '../../lib/regex/re2.js';
import { checkValueExpression } from './cel.js';
import { BARE_PATH, MUST_BE, NOT_BLANK, Refined, RefinedKeys } from './config-check.js';
import { LIMITS } from './limits.js';
import { clip } from './values.js';

/** A config, or an object inside one: these keys and no other. */
export const Config = <P extends TProperties>(properties: P, options: ObjectOptions = {}) =>
  Type.Object(properties, { additionalProperties: false, ...options });

/** A string with more in it than spaces. */
export const NonBlank = (options: Record<string, unknown> = {}) => Type.String({ pattern: NOT_BLANK, ...options });

/** An integer from `minimum` to `maximum`, both included. */
export const IntegerFrom = (minimum: number, maximum: number) => Type.Integer({ minimum, maximum, [MUST_BE]: `an integer from ${minimum} to ${maximum}` });

/** A list of `what` (as messages name its items), each one `item`. */
export const List = <T extends TSchema>(what: string, item: T, options: ArrayOptions = {}) => Type.Array(item, { ...options, [MUST_BE]: `a list of ${what}` });

/** One of a few values (strings or numbers), whatever their type. */
export const OneOf = <T extends string | number>(values: readonly T[]) => Type.Unsafe<T>({ enum: values });

/** An object of any keys and values (log metadata). */
export const AnyObject = Type.Record(Type.String(), Type.Unknown());

// RFC 9110 §5.1: a field name is a token.
const NOT_A_HEADER_NAME = "which is not a header name (letters, digits and !#$%&'*+-.^_`|~ only)";

export const HeaderName = Refined(Type.String(), (name, at) => (isToken(name) ? undefined : `has '${at}' '${clip(name, 40)}', ${NOT_A_HEADER_NAME}`));

// A CR or LF would end the header and start another (or the body): header injection. HTTP/2 and HTTP/3 refuse NUL.
const HeaderValue = Refined(Type.String(), (value, at) =>
  isFieldValue(value) ? undefined : `has '${at}' with a control character (such as CR, LF or NUL), which a header value cannot hold`,
);

// A map as an object whose every value is a header value: Type.Record's `^(.*)$` would pass over
// the values of keys with a line break in them.
export const HeaderMap = (options: ObjectOptions = {}) =>
  RefinedKeys(Type.Object({}, { additionalProperties: HeaderValue, [MUST_BE]: 'an object mapping header names to values', ...options }), (key, at) =>
    isToken(key) ? undefined : `has '${at}' key '${clip(key, 40)}', ${NOT_A_HEADER_NAME}`,
  );

/** A regular expression the edge (RE2, Go's syntax) can compile. */
export const Regex = Refined(NonBlank(), (source, at) => {
  const problem = re2Problem(source);
  return problem && `has '${at}' '${clip(source, 64)}', which ${clip(problem, 120)}`;
});

export const StatusCode = IntegerFrom(100, 999);

/** A Go-style duration of hours, minutes and seconds (`90s`, `1m30s`, `1.5h`), in milliseconds. */
function durationMs(value: string): number | undefined {
  if (!/^(\d+(\.\d+)?[hms])+$/.test(value)) return undefined;
  const unit = { h: 3_600_000, m: 60_000, s: 1_000 } as const;
  let total = 0;
  for (const [, amount, u] of value.matchAll(/(\d+(?:\.\d+)?)([hms])/g)) total += Number(amount) * unit[u as keyof typeof unit];
  return Math.round(total);
}

/** The rate limit's window: 60s to 24h, in steps of 10s (the granularity the edge counts in). */
export const RateWindow = Refined(Type.String(), (value, at) => {
  const ms = durationMs(value);
  const shown = clip(value, 40);
  if (ms === undefined) return `has '${at}' '${shown}', which is not a duration such as 60s, 90s, 5m or 1h`;
  if (ms < 60_000 || ms > 86_400_000) return `has '${at}' '${shown}', which is not from 60s to 24h`;
  if (ms % 10_000 !== 0) return `has '${at}' '${shown}', which is not a multiple of 10s`;
  return undefined;
});

/** A CEL expression giving a value (a bucket key), checked in the rule's environment. */
export const ValueExpression = Refined(NonBlank({ maxLength: LIMITS.expressionLength }), (value, at, cel) => {
  cel.spend(value);
  const checked = checkValueExpression(value, cel.env);
  return checked.ok ? undefined : `has '${at}' '${clip(value, 64)}', which is not a valid expression here: ${checked.reason} (${checked.position})`;
});

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

export const Cidr = Refined(Type.String({ [BARE_PATH]: true }), (text, at) => cidrProblem(at, text));

export const IpPolicyId = Refined(Type.String({ [BARE_PATH]: true }), (id, at) =>
  hasPrefix(id, 'ipp') ? undefined : `has ${at} '${clip(id, 64)}', which is not an IP policy id (ipp_…)`,
);

/**
 * The problem with a forward-internal URL, or nothing: an http or https URL whose host is a name
 * under `.internal` (an agent's internal endpoint), with no path, query or credentials.
 */
export function internalUrlProblem(value: string, at: string): string | undefined {
  const shown = clip(value, 80);
  const not = `has '${at}' '${shown}', which is not an internal URL such as https://service.internal`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return not;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `${not}: only http and https internal endpoints can be forwarded to here`;
  const host = url.hostname.toLowerCase();
  if (!host.endsWith('.internal') || host.startsWith('*') || host === '.internal') return `${not}: its host must be a name ending in .internal`;
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || (url.pathname !== '/' && url.pathname !== ''))
    return `${not}: it takes no path, query or credentials`;
  return undefined;
}

/** A forward-internal target: an internal endpoint's URL. */
export const InternalUrl = Refined(NonBlank(), (value, at) => internalUrlProblem(value, at));

/**
 * The problem with a forward-internal URL of a TCP connection, or nothing: `tcp://name.internal:port`
 * (an agent's internal TCP endpoint; its port is part of its name, so it is required).
 */
export function tcpInternalUrlProblem(value: string, at: string): string | undefined {
  const match = /^tcp:\/\/([^/:?#@]+):(\d{1,5})$/i.exec(value.trim());
  const host = match?.[1]!.toLowerCase();
  if (!match || Number(match[2]) < 1 || Number(match[2]) > 65535 || !host!.endsWith('.internal') || host!.startsWith('*') || host === '.internal')
    return `has '${at}' '${clip(value, 80)}', which is not an internal TCP URL such as tcp://service.internal:5432`;
  return undefined;
}

/** A forward-internal target of a TCP connection: an internal TCP endpoint's URL. */
export const TcpInternalUrl = Refined(NonBlank(), (value, at) => tcpInternalUrlProblem(value, at));
