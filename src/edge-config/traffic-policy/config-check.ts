// How an action's config is checked: against its TypeBox schema, by Ajv through the project's
// validation module, then by the refinements the schema carries (what a schema cannot say: a CIDR
// parses, a regular expression compiles, a CEL expression type-checks). Ajv's first error is put
// in the words the checks have always used ("has 'status_code' of type a string; it must be an
// integer from 100 to 999"), completing "the config of action 'x' …"; places in a config are
// named by their path (`status_code`, `http.tokens[0].name`).
import type { Static, TSchema } from '@sinclair/typebox';
import type { ErrorObject } from 'ajv';
import { schemaCheck, type SchemaFailure } from '../../core/validation.js';
import type { CelEnvName } from './cel.js';
import { clip, isObject, jsonType, unknownKey, type JsonObject } from './values.js';

/**
 * Where the CEL of a config is checked: the environment of its rule, and the policy's budget of
 * expression characters, which `spend` takes from (throwing 1971 when it is spent).
 */
export interface CelScope {
  env: CelEnvName;
  spend(expression: string): void;
}

/** The problem with a config (completing "the config of action 'x' …"), or nothing. */
export type ConfigCheck = (config: JsonObject | null, cel: CelScope) => string | undefined;

// Words a schema's keywords do not hold, kept on the schema they describe as annotations (Ajv,
// not strict, passes over them).
/** What a value of the wrong type must be, where it is more than its type: "a list of CIDRs". */
export const MUST_BE = 'x-must-be';
/** The problem with a config given as null (by default, the required keys are named). */
export const IF_NULL = 'x-if-null';
/** A config that must be empty on this kind of edge: any key is refused in these words. */
export const EMPTY_ON = 'x-empty-on';
/** A value named without quotes (the items of restrict-ips, in the words of the IP policy rules). */
export const BARE_PATH = 'x-bare-path';
/** The pattern of a string that must not be empty or only spaces (`trim()` takes what `\s` matches). */
export const NOT_BLANK = '\\S';

const TYPE_MUST_BE: Record<string, string> = { object: 'an object', string: 'a string', boolean: 'true or false' };

// Refinements are functions, which a JSON schema cannot hold; they are kept under symbols, which
// Ajv and the OpenAPI document do not see.
const REFINE = Symbol('refine');
const REFINE_KEYS = Symbol('refine keys');

/** The problem with a value that fits its schema, at `at`; or nothing. */
type Refinement<T> = (value: T, at: string, cel: CelScope) => string | undefined;

/** A schema as the checks read it: its annotations, the schemas inside it, its refinements. */
interface Shape {
  type?: string;
  enum?: unknown[];
  pattern?: string;
  required?: string[];
  properties?: Record<string, Shape>;
  additionalProperties?: Shape | boolean;
  items?: Shape;
  [key: string]: unknown;
  [REFINE]?: Refinement<unknown>;
  [REFINE_KEYS]?: (key: string, at: string) => string | undefined;
}

/** `schema` (a fresh one: it is marked, not copied), whose values `refinement` also checks once the whole config fits. */
export function Refined<T extends TSchema>(schema: T, refinement: Refinement<Static<T>>): T {
  return Object.assign(schema, { [REFINE]: refinement });
}

/** An object schema used as a map (a fresh one), whose keys `keyProblem` checks, each before its value. */
export function RefinedKeys<T extends TSchema>(schema: T, keyProblem: (key: string, at: string) => string | undefined): T {
  return Object.assign(schema, { [REFINE_KEYS]: keyProblem });
}

/** The path of a key or index inside the value at `at`; keys beyond what a config declares are cut. */
function step(at: string, key: string | number): string {
  if (typeof key === 'number') return `${at}[${key}]`;
  return at === '' ? clip(key, 40) : `${at}.${clip(key, 40)}`;
}

/** The check of configs of `schema`, compiled once. */
export function configCheck(schema: TSchema): ConfigCheck {
  const shape = schema as Shape;
  const check = schemaCheck(schema);
  return (config, cel) => {
    if (config === null) return nullProblem(shape);
    const failure = check(config);
    if (failure) return problemOf(failure);
    return refine(shape, config, '', cel);
  };
}

function nullProblem(shape: Shape): string | undefined {
  if (typeof shape[IF_NULL] === 'string') return shape[IF_NULL];
  const needed = shape.required ?? [];
  return needed.length === 0 ? undefined : `is required: give ${needed.join(', ')}`;
}

/**
 * The refinements of `shape` and the schemas inside it, in the order of the value: inner values
 * before the value that holds them, a map's key before its value.
 */
function refine(shape: Shape, value: unknown, at: string, cel: CelScope): string | undefined {
  let problem: string | undefined;
  if (Array.isArray(value) && shape.items) {
    for (const [i, item] of value.entries()) if ((problem = refine(shape.items, item, step(at, i), cel))) return problem;
  } else if (isObject(value)) {
    for (const [key, inner] of Object.entries(shape.properties ?? {}))
      if (value[key] !== undefined && (problem = refine(inner, value[key], step(at, key), cel))) return problem;
    const entries = shape.additionalProperties;
    if (typeof entries === 'object')
      for (const [key, item] of Object.entries(value))
        if ((problem = shape[REFINE_KEYS]?.(key, at) ?? refine(entries, item, step(at, key), cel))) return problem;
  }
  return shape[REFINE]?.(value, at, cel);
}

/** An unknown key of the object at `at` (empty for the config itself), with the keys it may have. */
function unknownKeyProblem(at: string, key: string, shape: Shape): string {
  const known = Object.keys(shape.properties ?? {}).join(', ');
  if (typeof shape[EMPTY_ON] === 'string') return `must be empty on ${shape[EMPTY_ON]}; got key '${clip(key, 40)}'`;
  return at === '' ? `has unknown key '${clip(key, 40)}'; the keys are ${known}` : `has unknown key '${step(at, key)}'; the keys of '${at}' are ${known}`;
}

/** Ajv's first error in the words of the config checks. */
function problemOf({ error, path }: SchemaFailure): string {
  const at = path.reduce<string>(step, '');
  const shape = (error.parentSchema ?? {}) as Shape;
  const data: unknown = error.data;
  const limit = (error.params as { limit?: number }).limit;
  const mustBe = String(shape[MUST_BE] ?? TYPE_MUST_BE[String(shape.type)]);
  switch (error.keyword) {
    case 'type':
      // An integer schema says what a number that is not one is, as it does one out of range.
      if (shape.type === 'integer' && typeof data === 'number') return `has '${at}' ${data}, which is not ${mustBe}`;
      return `has ${shape[BARE_PATH] ? at : `'${at}'`} of type ${jsonType(data)}; it must be ${mustBe}`;
    case 'minimum':
    case 'maximum':
      return `has '${at}' ${data}, which is not ${mustBe}`;
    case 'required':
      return missingProblem(error, at, shape);
    case 'additionalProperties':
      return unknownKeyProblem(at, (error.params as { additionalProperty: string }).additionalProperty, shape);
    case 'minItems':
      return `has '${at}' with ${(data as unknown[]).length} items; give at least ${limit}`;
    case 'maxItems':
      return `has '${at}' with ${(data as unknown[]).length} items; at most ${limit} are allowed`;
    case 'minProperties':
      return `has '${at}' empty; give at least one entry`;
    case 'maxLength':
      // Ajv checks a length before a pattern: a long string of only spaces is named empty, as before.
      if (shape.pattern === NOT_BLANK && !/\S/u.test(data as string)) return `has '${at}' empty; give a value`;
      return `has '${at}' of ${Array.from(data as string).length} characters; at most ${limit} are allowed`;
    case 'x-max-bytes':
      return `has '${at}' of ${Buffer.byteLength(data as string, 'utf8')} bytes; at most ${String(shape['x-max-bytes'])} are allowed`;
    case 'enum':
      return `has '${at}' ${clip(JSON.stringify(data) ?? String(data), 40)}, which is not one of ${(shape.enum ?? []).join(', ')}`;
    case 'pattern':
      if ((error.params as { pattern: string }).pattern === NOT_BLANK) return `has '${at}' empty; give a value`;
      break;
  }
  // No schema of a config fails otherwise; should one, Ajv's words are better than none.
  return `has '${at}' ${clip(JSON.stringify(data) ?? String(data), 40)}, which ${error.message ?? 'is invalid'}`;
}

/**
 * A required key missing. Ajv looks for required keys before unknown ones, but a key spelt wrong
 * is better named as unknown, with the keys listed, than as the right one missing: so an unknown
 * key of the same object is named first, as the checks always have.
 */
function missingProblem(error: ErrorObject, at: string, shape: Shape): string {
  const extra = shape.additionalProperties === false && isObject(error.data) ? unknownKey(error.data, Object.keys(shape.properties ?? {})) : undefined;
  if (extra !== undefined) return unknownKeyProblem(at, extra, shape);
  return `is missing '${step(at, (error.params as { missingProperty: string }).missingProperty)}', which is required`;
}
