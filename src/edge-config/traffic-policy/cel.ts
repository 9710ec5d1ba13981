// CEL expressions of traffic policy rules: the environment of each phase (its variables,
// functions, types, methods and operators), declared once and built twice: for checking here, with
// handlers that refuse to run (the control plane never evaluates), and for the edge's evaluator
// (src/edges/traffic-policy/), with the handlers it gives (celEnvironment).
//
// The library is @marcbachmann/cel-js. Weighed against it:
// - @bufbuild/cel 0.6: a fine parser and evaluator, but its type checker (`check`) is not part
//   of the package's public exports (only `.` and `./ext` are exported, and `.` has no checker),
//   so an unknown variable or `conn.client_port == "x"` only fails at evaluation time;
// - cel-js (chromeGG): parses and evaluates, no type checking against declared variables.
// @marcbachmann/cel-js checks against declared variables (nested objects as schemas), custom
// function signatures and the standard overloads, reports the checked result type, gives each
// error a source range, has no dependencies, and bounds the parser (depth, AST size).
// Its engines field says node >=20.19.0; edgeplane's engines start at 20.19 for it.
//
// Two quirks of its 8.0 release shape the declarations below: a field typed `timestamp` inside a
// schema crashes the registration and is not the built-in timestamp type, so timestamp fields
// are declared as `google.protobuf.Timestamp` (which is); and its `matches` runs JavaScript's
// RegExp, which backtracks, so an environment built to evaluate has it replaced by the runtime's
// (RE2) in the library's table of overloads (replaceMatches).
import { Environment, type ASTNode, type ObjectSchema } from '@marcbachmann/cel-js';
import { re2Problem } from '../../lib/regex/re2.js';

/** A method of a named type (`req.url.startsWith('https://')`): its name, argument types and result. */
interface MethodSpec {
  receiver: string;
  name: string;
  params: readonly string[];
  returns: string;
}

/**
 * A phase's variables (top-level names → nested fields → CEL type names), function signatures,
 * named object types, and the methods and operators of those types.
 */
interface EnvironmentSpec {
  variables: Record<string, ObjectSchema>;
  functions: readonly string[];
  types?: Record<string, ObjectSchema>;
  methods?: readonly MethodSpec[];
  /** Operator signatures (`ngrok.URL == string`; an equality declares its inequality too). */
  operators?: readonly string[];
}

const TIMESTAMP = 'google.protobuf.Timestamp';

/** The variables every phase has: the connection, the endpoint it reached, the time. */
const CONNECTION_VARIABLES = {
  conn: {
    client_ip: 'string',
    client_port: 'int',
    server_ip: 'string',
    server_port: 'int',
    ts: { start: TIMESTAMP },
    geo: {
      city: 'string',
      country: 'string',
      country_code: 'string',
      subdivision: 'string',
      latitude: 'double',
      longitude: 'double',
      radius: 'double',
    },
  },
  endpoint: {
    addr: 'string',
    host: 'string',
    id: 'string',
    protocol: 'string',
    url: 'string',
    port: 'int',
  },
  time: { now: TIMESTAMP },
} satisfies Record<string, ObjectSchema>;

const CIDR_FUNCTIONS = ['inCidrRange(string, string): bool', 'inCidrRanges(string, list<string>): bool'] as const;

/** Names to their values, for what may repeat: headers, trailers, query parameters. */
const MULTI_MAP = 'map<string, list<string>>';

/**
 * A cookie of `req.cookies` (several cookies may share a name, hence lists of them), and the
 * request's URL: the published docs use `req.url` both as a string (`req.url.startsWith(…)`,
 * `req.url == …`) and with fields (`req.url.path.startsWith('/admin')`), so it is a type of its own
 * with the fields, and the string methods, operators and conversions the docs' examples use.
 */
const HTTP_TYPES = {
  'ngrok.Cookie': { name: 'string', value: 'string' },
  'ngrok.URL': { scheme: 'string', host: 'string', path: 'string', query: 'string' },
} satisfies Record<string, ObjectSchema>;

const URL_METHODS: readonly MethodSpec[] = [
  ...['startsWith', 'endsWith', 'contains', 'matches'].map((name) => ({ receiver: 'ngrok.URL', name, params: ['string'], returns: 'bool' })),
  { receiver: 'ngrok.URL', name: 'size', params: [], returns: 'int' },
];
const URL_FUNCTIONS = ['string(ngrok.URL): string', 'size(ngrok.URL): int'] as const;
const URL_OPERATORS = ['ngrok.URL == string', 'ngrok.URL + string', 'string + ngrok.URL'] as const;

// HTTP requests and responses, in the snake_case names of ngrok's current docs; `req.path`,
// `req.query` and `req.query_params`, the names the docs used before, stay as well.
const REQUEST_FIELDS = {
  method: 'string',
  url: 'ngrok.URL',
  host: 'string',
  path: 'string',
  query: 'string',
  query_params: MULTI_MAP,
  headers: MULTI_MAP,
  trailers: MULTI_MAP,
  content_length: 'int',
  content_type: 'string',
  content_encoding: 'list<string>',
  user_agent: 'string',
  version: 'string',
  cookies: 'map<string, list<ngrok.Cookie>>',
  ts: { header_received: TIMESTAMP, body_received: TIMESTAMP },
} satisfies ObjectSchema;

const RESPONSE_FIELDS = {
  status_code: 'int',
  headers: MULTI_MAP,
  trailers: MULTI_MAP,
  content_length: 'int',
  content_type: 'string',
  content_encoding: 'list<string>',
  location: 'string',
} satisfies ObjectSchema;

// The spellings of the policy module's HTTP examples of early 2024 (`req.Method == 'POST' &&
// req.ContentLength > 10000`, `conn.Geo.CountryCode in [...]`, `res.StatusCode`): policies written
// then are still accepted by that module. Same types as the snake_case names.
const POLICY_REQUEST_ALIASES = { Method: 'string', URL: 'string', ContentLength: 'int', Headers: MULTI_MAP } satisfies ObjectSchema;
const POLICY_RESPONSE_ALIASES = { StatusCode: 'int', ContentLength: 'int', Headers: MULTI_MAP } satisfies ObjectSchema;
const POLICY_CONNECTION_ALIASES = { Geo: { CountryCode: 'string' } } satisfies ObjectSchema;

/** An HTTP phase: the connection variables, `req`, and `res` when there is a response. */
function httpSpec(options: { response: boolean; aliases: boolean }): EnvironmentSpec {
  const { conn, ...rest } = CONNECTION_VARIABLES;
  const variables: Record<string, ObjectSchema> = options.aliases
    ? { conn: { ...conn, ...POLICY_CONNECTION_ALIASES }, ...rest, req: { ...REQUEST_FIELDS, ...POLICY_REQUEST_ALIASES } }
    : { conn, ...rest, req: REQUEST_FIELDS };
  if (options.response) variables.res = options.aliases ? { ...RESPONSE_FIELDS, ...POLICY_RESPONSE_ALIASES } : RESPONSE_FIELDS;
  return { variables, functions: [...CIDR_FUNCTIONS, ...URL_FUNCTIONS], types: HTTP_TYPES, methods: URL_METHODS, operators: URL_OPERATORS };
}

/**
 * Every environment an expression can be checked in: TCP connections; HTTP requests and
 * responses (the traffic_policy document's on_http_request and on_http_response); the same for
 * the policy module's inbound and outbound, with the old spellings as well.
 */
const SPECS = {
  tcp: { variables: CONNECTION_VARIABLES, functions: CIDR_FUNCTIONS },
  http_request: httpSpec({ response: false, aliases: false }),
  http_response: httpSpec({ response: true, aliases: false }),
  policy_http_request: httpSpec({ response: false, aliases: true }),
  policy_http_response: httpSpec({ response: true, aliases: true }),
} satisfies Record<string, EnvironmentSpec>;

export type CelEnvName = keyof typeof SPECS;

function notEvaluatedHere(): never {
  throw new Error('traffic policy expressions are evaluated by the edge, not by the control plane');
}

/** A value of `req.url` (ngrok.URL): its fields, and the full URL as a string. */
export class CelUrl {
  constructor(
    readonly scheme: string,
    readonly host: string,
    /** With its leading `/`. */
    readonly path: string,
    /** Without its `?`. */
    readonly query: string,
  ) {}

  toString(): string {
    return `${this.scheme}://${this.host}${this.path}${this.query === '' ? '' : `?${this.query}`}`;
  }
}

/** A value of `req.cookies` (ngrok.Cookie). */
export class CelCookie {
  constructor(
    readonly name: string,
    readonly value: string,
  ) {}
}

/** The class of each named type's values, at run time. */
const TYPE_CLASSES: Record<string, new (...args: never[]) => object> = { 'ngrok.URL': CelUrl, 'ngrok.Cookie': CelCookie };

/** What an environment built to evaluate runs: the functions that need more than a string's own methods. */
export interface CelRuntime {
  inCidrRange(ip: string, cidr: string): boolean;
  inCidrRanges(ip: string, cidrs: readonly string[]): boolean;
  /** Whether `pattern` (RE2 syntax) matches somewhere in `text`: CEL's `matches`, on strings and on ngrok.URL. Throws on a bad pattern. */
  matches(text: string, pattern: string): boolean;
}

/** CEL's size of a string: its code points. */
const celSize = (text: string) => BigInt(Array.from(text).length);

type Handler = (...args: never[]) => unknown;

/** The handlers of the declared functions, methods and operators, by their names or signatures. */
function handlersOf(runtime: CelRuntime): { functions: Record<string, Handler>; methods: Record<string, Handler>; operators: Record<string, Handler> } {
  return {
    functions: {
      inCidrRange: (ip: string, cidr: string) => runtime.inCidrRange(ip, cidr),
      inCidrRanges: (ip: string, cidrs: readonly string[]) => runtime.inCidrRanges(ip, cidrs),
      string: (url: CelUrl) => url.toString(),
      size: (url: CelUrl) => celSize(url.toString()),
    },
    methods: {
      startsWith: (url: CelUrl, prefix: string) => url.toString().startsWith(prefix),
      endsWith: (url: CelUrl, suffix: string) => url.toString().endsWith(suffix),
      contains: (url: CelUrl, part: string) => url.toString().includes(part),
      matches: (url: CelUrl, pattern: string) => runtime.matches(url.toString(), pattern),
      size: (url: CelUrl) => celSize(url.toString()),
    },
    operators: {
      'ngrok.URL == string': (url: CelUrl, text: string) => url.toString() === text,
      'ngrok.URL + string': (url: CelUrl, text: string) => url.toString() + text,
      'string + ngrok.URL': (text: string, url: CelUrl) => text + url.toString(),
    },
  };
}

/** The library's declaration of an overload, as far as replaceMatches reads it. */
interface Overload {
  signature: string;
}

/**
 * The library's `string.matches(string)` (JavaScript's RegExp, which backtracks: `(a+)+$` on a
 * long input takes exponential time) replaced in `env` by one calling `matches`. The library has
 * no way to replace a built-in overload (registering another overlaps), so its table of the
 * environment's `matches` methods, which a checked call carries, is edited: the built-in
 * declaration is replaced by one inheriting from it with another handler. An environment that
 * registered functions of its own has its own table; the global one is untouched. Throws when
 * the library no longer has the table where it was, so an upgrade cannot silently bring RegExp back.
 */
function replaceMatches(env: Environment, matches: (text: string, pattern: string) => boolean): void {
  const probe = env.parse('"".matches("")');
  if (!probe.check().valid) throw new Error('cel: cannot replace matches: the probe does not check');
  const table = (probe.ast as unknown as { candidates?: { declarations?: Overload[] } }).candidates?.declarations;
  const index = table?.findIndex((decl) => decl.signature === 'string.matches(string): bool') ?? -1;
  if (!table || index < 0) throw new Error('cel: cannot replace matches: the library keeps its overloads elsewhere');
  const handler = (text: string, pattern: string) => matches(text, pattern);
  table[index] = Object.create(table[index]!, { handler: { value: handler, enumerable: true } }) as Overload;
}

function build(spec: EnvironmentSpec, runtime?: CelRuntime): Environment {
  const env = new Environment();
  const handlers = runtime && handlersOf(runtime);
  const handler = (table: Record<string, Handler> | undefined, key: string) => table?.[key] ?? notEvaluatedHere;
  for (const [name, fields] of Object.entries(spec.types ?? {})) env.registerType(name, { ctor: TYPE_CLASSES[name], fields });
  for (const [name, schema] of Object.entries(spec.variables)) env.registerVariable({ name, schema });
  for (const signature of spec.functions) env.registerFunction(signature, handler(handlers?.functions, signature.slice(0, signature.indexOf('('))));
  for (const m of spec.methods ?? [])
    env.registerFunction({
      name: m.name,
      receiverType: m.receiver,
      returnType: m.returns,
      handler: handler(handlers?.methods, m.name),
      params: m.params.map((type, i) => ({ name: `arg${i}`, type })),
    });
  for (const signature of spec.operators ?? [])
    env.registerOperator(signature, handler(handlers?.operators, signature) as (left: unknown, right: unknown) => unknown);
  if (runtime) replaceMatches(env, runtime.matches);
  return env;
}

// Built once: an Environment is costly to make and cheap to reuse.
const ENVIRONMENTS: Record<CelEnvName, Environment> = Object.fromEntries(Object.entries(SPECS).map(([name, spec]) => [name, build(spec)])) as Record<
  CelEnvName,
  Environment
>;

/**
 * The environment `name` built to evaluate, with `runtime`'s functions (the edge builds each once
 * and compiles every expression of a policy in it: `env.parse(expression)`, then `check()`).
 */
export function celEnvironment(name: CelEnvName, runtime: CelRuntime): Environment {
  return build(SPECS[name], runtime);
}

/** The top-level variables of the environment `name` (`conn`, `endpoint`, `time`, `req`, `res`). */
export function celVariables(name: CelEnvName): string[] {
  return Object.keys(SPECS[name].variables);
}

export type CheckResult = { ok: true } | { ok: false; position: string; reason: string };

/** "line L, column C" (both from 1, columns in characters) of a UTF-16 offset into `text`. */
export function positionOf(text: string, offset: number): string {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const lineStart = before.lastIndexOf('\n') + 1;
  const line = before.split('\n').length;
  const column = Array.from(before.slice(lineStart)).length + 1;
  return `line ${line}, column ${column}`;
}

const clip = (text: string, max = 80) => (text.length > max ? `${text.slice(0, max - 3)}...` : text);

/** The fields of a declared variable path (`conn.geo` → city, country, ...), if it is one. */
function fieldsAt(spec: EnvironmentSpec, path: string): string[] | undefined {
  const types: Record<string, ObjectSchema> = spec.types ?? {};
  const resolve = (node: string | ObjectSchema | undefined) => (typeof node === 'string' && Object.hasOwn(types, node) ? types[node] : node);
  let node: string | ObjectSchema | undefined = { ...spec.variables };
  for (const part of path.split('.')) {
    if (typeof node !== 'object' || !Object.hasOwn(node, part)) return undefined;
    node = resolve(node[part]);
  }
  return typeof node === 'object' ? Object.keys(node) : undefined;
}

interface LibraryError {
  code?: unknown;
  summary?: unknown;
  message?: unknown;
  range?: { start: number; end: number };
  node?: { pos?: number; start?: number };
}

/** The library's error as a reason a user can act on: unknown names list what there is. */
function reasonOf(spec: EnvironmentSpec, expression: string, error: LibraryError, offset: number): string {
  const summary = String(error.summary ?? error.message ?? 'invalid expression').split('\n')[0]!;
  if (error.code === 'unknown_variable') {
    const name = summary.replace(/^Unknown variable: /, '');
    return `unknown variable '${clip(name, 40)}'; the variables here are ${Object.keys(spec.variables).join(', ')}`;
  }
  if (error.code === 'no_such_key') {
    const key = summary.replace(/^No such key: /, '');
    const before = expression.slice(error.node?.start ?? offset, offset);
    if (before.endsWith('.')) {
      const path = before.slice(0, -1).replace(/\s+/g, '');
      const fields = fieldsAt(spec, path);
      if (fields) return `'${clip(path, 40)}' has no field '${clip(key, 40)}'; its fields are ${fields.join(', ')}`;
    }
    return `no such field '${clip(key, 40)}'`;
  }
  const operator = /^no such overload: (.+) (==|!=|<=?|>=?|\+|-|\*|\/|%|in) (.+)$/.exec(summary);
  if (operator) return `operator '${operator[2]}' does not apply to ${clip(operator[1]!, 40)} and ${clip(operator[3]!, 40)}`;
  // The parser recurses once per unary operator (`!!!…x`, `---…1`), which its depth limit does not count.
  if (error instanceof RangeError || /call stack size/i.test(summary)) return 'it nests operators too deeply to be parsed; use fewer operators in a row';
  const call = /^found no matching overload for '(.*)'$/.exec(summary);
  if (call) {
    const name = /^(?:.*\.)?([A-Za-z_]\w*)\(/.exec(call[1]!)?.[1];
    const declared = spec.functions.filter((signature) => signature.startsWith(`${name}(`)).map((signature) => signature.replace(/: \w+$/, ''));
    if (declared.length > 0) return `no declaration of ${name} takes ${clip(call[1]!.slice(name!.length), 60)}; it is ${declared.join(' or ')}`;
    return `no function or method matches ${clip(call[1]!, 60)}`;
  }
  const text = summary.replace(/\.$/, '');
  return clip(text.charAt(0).toLowerCase() + text.slice(1), 200);
}

/**
 * The first `x.matches('literal')` whose pattern the edge's RE2 would refuse, with why. Only a
 * literal pattern can be checked here; one built at run time (`x.matches(y)`) is the edge's to
 * refuse. The library has no function form `matches(x, p)`: type checking refuses it.
 */
function badPattern(ast: ASTNode): { offset: number; reason: string } | undefined {
  const pending: unknown[] = [ast];
  while (pending.length > 0) {
    const node = pending.pop();
    if (Array.isArray(node)) pending.push(...(node as unknown[]));
    if (typeof node !== 'object' || node === null || !('op' in node)) continue;
    const { op, args } = node as ASTNode;
    if (op === 'rcall' && args[0] === 'matches') {
      const pattern = args[2][0];
      if (pattern?.op === 'value' && typeof pattern.args === 'string') {
        const problem = re2Problem(pattern.args);
        if (problem) return { offset: pattern.start, reason: `the pattern '${clip(pattern.args, 40)}' of matches ${clip(problem, 160)}` };
      }
    }
    if (typeof args === 'object') pending.push(args);
  }
  return undefined;
}

/** Parses and type-checks `expression` in the environment `env`; gives its CEL type when it is valid. */
function check(expression: string, env: CelEnvName): { ok: true; type: string } | Extract<CheckResult, { ok: false }> {
  const spec: EnvironmentSpec = SPECS[env];
  const result = ENVIRONMENTS[env].check(expression);
  if (!result.valid) {
    const error = (result.error ?? {}) as LibraryError;
    const offset = error.range?.start ?? error.node?.pos ?? 0;
    return { ok: false, position: positionOf(expression, offset), reason: reasonOf(spec, expression, error, offset) };
  }
  // The edge compiles a matches pattern with RE2; one it would refuse must not be stored.
  const bad = expression.includes('matches') ? badPattern(ENVIRONMENTS[env].parse(expression).ast) : undefined;
  if (bad) return { ok: false, position: positionOf(expression, bad.offset), reason: bad.reason };
  return { ok: true, type: String(result.type) };
}

/** Parses and type-checks `expression` in the environment `env`; a rule's expression must give bool. */
export function checkExpression(expression: string, env: CelEnvName): CheckResult {
  const result = check(expression, env);
  if (!result.ok) return result;
  if (result.type !== 'bool') {
    const start = expression.length - expression.trimStart().length;
    return {
      ok: false,
      position: positionOf(expression, start),
      reason: `it gives a value of type ${clip(result.type, 40)}, and a rule's expression must give a bool (true or false)`,
    };
  }
  return { ok: true };
}

/** The same for an expression that gives a value of any type, such as a rate limit's bucket key. */
export function checkValueExpression(expression: string, env: CelEnvName): CheckResult {
  const result = check(expression, env);
  return result.ok ? { ok: true } : result;
}
