// Schema validation: two Ajv instances (bodies are never coerced, so "5" is not a number; query
// strings are, so limit=10 is), the `x-max-bytes` keyword for UTF-8 byte limits, and the
// translation of Ajv's errors into the catalogue with the offending field and value named; and
// for values that are only part of a body and worded by their caller, the first failure with its path.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ApiError, errors } from './errors.js';
import { withArticle } from './english.js';

// ajv-formats is CommonJS with its plugin on `default`.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerceTypes: boolean) {
  const ajv = new Ajv({ coerceTypes, allErrors: false, verbose: true, strict: false, removeAdditional: false, useDefaults: false });
  addFormats(ajv);
  ajv.addKeyword({
    keyword: 'x-max-bytes',
    type: 'string',
    schemaType: 'number',
    validate: (max: number, data: string) => Buffer.byteLength(data, 'utf8') <= max,
    errors: false,
  });
  return ajv;
}

const bodyAjv = makeAjv(false);
const queryAjv = makeAjv(true);

/** A validator for one part of a request: bodies are never coerced, query strings and paths are. */
export function compileValidator(schema: object, part: 'body' | 'querystring' | 'params' | 'headers'): ValidateFunction {
  if (part === 'body') return bodyAjv.compile(schema);
  return decimalNumbersOnly(schema, queryAjv.compile(schema));
}

type PropertySchema = { type?: string | string[] };
const DECIMAL = { integer: /^[0-9]+$/, number: /^[0-9]+(\.[0-9]+)?$/ };

/**
 * Ajv coerces a query string to a number as Number() does, which takes "0x10", "1e1", "+5",
 * " 5" and "5.0"; a query number must be written in decimal digits. The raw strings of the
 * numeric properties are checked before `validate` coerces them.
 */
function decimalNumbersOnly(schema: object, validate: ValidateFunction): ValidateFunction {
  const properties = (schema as { properties?: Record<string, PropertySchema> }).properties ?? {};
  const numeric: [string, RegExp][] = [];
  for (const [name, property] of Object.entries(properties)) {
    const types = ([] as string[]).concat(property.type ?? []);
    if (types.includes('integer')) numeric.push([name, DECIMAL.integer]);
    else if (types.includes('number')) numeric.push([name, DECIMAL.number]);
  }
  if (numeric.length === 0) return validate;
  const checked = ((data: Record<string, unknown> | null | undefined) => {
    for (const [name, pattern] of numeric) {
      const value = data?.[name];
      if (typeof value === 'string' && !pattern.test(value)) {
        checked.errors = [
          {
            keyword: 'pattern',
            instancePath: `/${name}`,
            schemaPath: `#/properties/${name}`,
            params: { pattern: pattern.source },
            message: 'must be decimal digits',
            data: value,
          },
        ];
        return false;
      }
    }
    const valid = validate(data);
    checked.errors = validate.errors;
    return valid;
  }) as ValidateFunction;
  return checked;
}

function render(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text === undefined ? 'nothing' : text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** `string` → "a string"; `["string", "null"]` or `string,null` → "a string or null". */
function expectedTypes(type: string | string[]): string {
  const types = Array.isArray(type) ? type : type.split(',');
  return types.map((t) => (t === 'null' ? 'null' : withArticle(t))).join(' or ');
}

/** What was sent, in words: null, true, the number 3, the string 'x', an array, an object. */
function described(value: unknown): string {
  if (value === null || typeof value === 'boolean') return String(value);
  if (typeof value === 'number') return `the number ${render(value)}`;
  if (typeof value === 'string') return `the string '${render(value)}'`;
  return withArticle(jsonType(value));
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** `/backend/enabled` → `backend.enabled`; `/hostports/0` → `hostports[0]`. */
function fieldName(instancePath: string, extra?: string): string {
  const parts = instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) parts.push(extra);
  return parts.reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), '');
}

function bodyError(e: ErrorObject, at = ''): ApiError {
  const field = at + fieldName(e.instancePath);
  const schema = e.parentSchema as
    { type?: string; enum?: string[]; maxLength?: number; 'x-max-bytes'?: number; properties?: Record<string, unknown> } | undefined;
  switch (e.keyword) {
    case 'additionalProperties': {
      const name = (e.params as { additionalProperty: string }).additionalProperty;
      return errors.unknownField({ field: at + fieldName(e.instancePath, name), supported: Object.keys(schema?.properties ?? {}) });
    }
    case 'required':
      return errors.invalidField({ field: at + fieldName(e.instancePath, (e.params as { missingProperty: string }).missingProperty), problem: 'is required' });
    case 'maxLength':
    case 'x-max-bytes': {
      const max = schema?.['x-max-bytes'] ?? schema?.maxLength ?? 0;
      const bytes = Buffer.byteLength(String(e.data), 'utf8');
      if (field === 'description') return errors.descriptionTooLong({ max, bytes });
      if (field === 'metadata') return errors.metadataTooLong({ max, bytes });
      return errors.invalidField({ field, problem: `is limited to ${max} bytes; you sent ${bytes}` });
    }
    case 'type':
      if (!field) return errors.invalidField({ field: 'request body', problem: `must be a JSON object; got ${jsonType(e.data)}` });
      if (field === at) return errors.invalidField({ field: at.replace(/\.$/, ''), problem: `must be a JSON object; got ${jsonType(e.data)}` });
      return errors.invalidField({ field, problem: `must be ${expectedTypes((e.params as { type: string | string[] }).type)}; got ${described(e.data)}` });
    case 'enum':
      return errors.invalidField({ field, problem: `must be one of ${(schema?.enum ?? []).join(', ')}; got '${render(e.data)}'` });
    case 'minLength':
      return errors.invalidField({
        field,
        problem: (e.params as { limit: number }).limit === 1 ? 'must not be empty' : `must be at least ${(e.params as { limit: number }).limit} characters`,
      });
    default:
      return errors.invalidField({ field: field || 'request body', problem: `${e.message ?? 'is invalid'}; got ${render(e.data)}` });
  }
}

function queryError(e: ErrorObject): ApiError {
  if (e.keyword === 'additionalProperties') {
    const schema = e.parentSchema as { properties?: Record<string, unknown> } | undefined;
    return errors.unknownQueryParameter({
      name: (e.params as { additionalProperty: string }).additionalProperty,
      supported: Object.keys(schema?.properties ?? {}),
    });
  }
  const name = fieldName(e.instancePath);
  if (name === 'limit') return errors.invalidLimit({ value: render(e.data) });
  return errors.invalidField({ field: name, problem: `${e.message ?? 'is invalid'}; got ${render(e.data)}` });
}

/**
 * A body already parsed as JSON, checked against `schema` (compiled once): the first failure as
 * the catalogue entry that names it, with field names prefixed by `at` (e.g. "module.").
 */
export function bodyValidator<T>(schema: object): (value: unknown, at?: string) => T {
  const validate = bodyAjv.compile(schema);
  return (value, at = '') => {
    if (!validate(value)) throw bodyError(validate.errors![0]!, at);
    return value as T;
  };
}

/** Where a value failed its schema: Ajv's first error, and the way down the value to it. */
export interface SchemaFailure {
  error: ErrorObject;
  /** The keys and indices of `error.instancePath`, an index where the value holds an array there. */
  path: (string | number)[];
}

/**
 * A value that is not a whole request body (a part the caller words its own way, such as an
 * action's config in a traffic policy), checked against `schema` (compiled once, by the bodies'
 * Ajv): the first failure with its path, or nothing when the value fits.
 */
export function schemaCheck(schema: object): (value: unknown) => SchemaFailure | undefined {
  const validate = bodyAjv.compile(schema);
  return (value) => {
    if (validate(value)) return undefined;
    const error = validate.errors![0]!;
    return { error, path: pathIn(value, error.instancePath) };
  };
}

/** A JSON pointer into `value` as its steps; a step into an array is a number, as "0" may also be a key. */
function pathIn(value: unknown, pointer: string): (string | number)[] {
  const path: (string | number)[] = [];
  let at = value;
  for (const escaped of pointer.split('/').slice(1)) {
    const key = escaped.replace(/~1/g, '/').replace(/~0/g, '~');
    const step = Array.isArray(at) ? Number(key) : key;
    path.push(step);
    at = (at as Record<string | number, unknown> | undefined)?.[step];
  }
  return path;
}

/** Fastify's validation failure → the catalogue entry that names what was wrong. */
export function validationToApiError(validation: ErrorObject[], context: string): ApiError {
  // With nullable fields Ajv reports every branch of the anyOf; the first error is the real one.
  const first = validation[0]!;
  if (context === 'querystring') return queryError(first);
  // The only path parameter is an id; one too long to be any id is simply not found.
  if (context === 'params') return errors.notFound({ title: 'resource', id: render(first.data) });
  return bodyError(first);
}
