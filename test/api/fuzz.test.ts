// A seeded fuzz of every operation of the OpenAPI document: hostile bodies (wrong types,
// missing and extra fields, huge and negative numbers, long strings, deep nesting, lone
// surrogates, impossible dates, prototype keys), odd ids in the path and odd query values,
// against a real server on a real store. No answer may be a 5xx, and every error has the
// catalogue's body. Operations come from the document, so a new resource joins by itself.
//
// Deterministic for a seed: EDGEPLANE_FUZZ_SEED=<n> replays a run (the seed is printed on
// failure); EDGEPLANE_FUZZ_CASES=<n> sets the number of requests per operation.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { it } from 'node:test';
import { describeEachStore, rawRequest, type Api, type Response } from '../helpers/harness.js';

const SEED = Number(process.env.EDGEPLANE_FUZZ_SEED ?? 0x5eed2026);
const CASES = Number(process.env.EDGEPLANE_FUZZ_CASES ?? 24);
const DEPTH_LIMIT = 64;

// ---------------------------------------------------------------------------------------------
// The document

interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  items?: Schema;
  required?: string[];
  enum?: unknown[];
  anyOf?: Schema[];
  minItems?: number;
  minimum?: number;
}
interface Parameter {
  name: string;
  in: string;
  schema?: Schema;
  $ref?: string;
}
interface Operation {
  method: string;
  /** The path template, e.g. /ip_policies/{id}. */
  path: string;
  id: string;
  pathParams: string[];
  query: Parameter[];
  body?: Schema;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

function operationsOf(doc: { paths: Record<string, Record<string, { operationId: string; parameters?: Parameter[]; requestBody?: unknown }>> }): Operation[] {
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (!METHODS.includes(method)) continue;
      const parameters = (op.parameters ?? []).filter((p) => !p.$ref);
      const body = (op.requestBody as { content?: Record<string, { schema?: Schema }> } | undefined)?.content?.['application/json']?.schema;
      ops.push({
        method: method.toUpperCase(),
        path,
        id: op.operationId,
        pathParams: [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!),
        query: parameters.filter((p) => p.in === 'query'),
        body,
      });
    }
  }
  // Deletes last, so that the resources the other operations address still exist.
  return ops.sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
}

/** The collection a path parameter's value comes from: the path before `/{param}`. */
const collectionOf = (path: string, param: string) => path.slice(0, path.indexOf(`/{${param}}`));

/** The object branch of a nullable field. */
function concrete(schema: Schema | undefined): Schema {
  if (!schema) return {};
  if (schema.anyOf) return concrete(schema.anyOf.find((s) => s.type !== 'null') ?? schema.anyOf[0]);
  return schema;
}
const typeOf = (schema: Schema) => (Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type);

// ---------------------------------------------------------------------------------------------
// Randomness: mulberry32, one stream per operation so a new operation leaves the others' cases as they were.

class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(values: readonly T[]): T {
    return values[this.int(values.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

// ---------------------------------------------------------------------------------------------
// Values. `Raw` is JSON text written as is: what JSON.stringify cannot write (1e400, -0, deep nesting).

class Raw {
  constructor(readonly text: string) {}
}

/** An object whose keys may include __proto__ as an own key. */
function obj(entries: [string, unknown][]): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const [k, v] of entries) Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  return o;
}

function toJson(v: unknown): string {
  if (v instanceof Raw) return v.text;
  if (Array.isArray(v)) return `[${v.map(toJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v)
      .map((k) => `${JSON.stringify(k)}:${toJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

const deepArray = (depth: number) => new Raw('['.repeat(depth) + ']'.repeat(depth));
const deepObject = (depth: number) => new Raw('{"a":'.repeat(depth) + '{}' + '}'.repeat(depth));
const DEPTHS = [DEPTH_LIMIT - 2, DEPTH_LIMIT - 1, DEPTH_LIMIT, DEPTH_LIMIT + 1, 1000, 100_000];

const IMPOSSIBLE_DATES = [
  '2026-02-30T00:00:00Z',
  '2025-02-29T00:00:00Z',
  '2026-13-01T00:00:00Z',
  '2026-00-01T00:00:00Z',
  '2026-01-00T00:00:00Z',
  '2026-04-31T00:00:00Z',
  '2026-01-01T24:00:00Z',
  '2026-01-01T23:60:00Z',
  '2026-12-31T23:59:60Z',
  '1969-12-31T23:59:59Z',
  '1970-01-01T00:00:00+00:01',
  '0000-01-01T00:00:00Z',
  '9999-12-31T23:59:59-23:59',
  '+275760-09-13T00:00:00Z',
  '-000001-01-01T00:00:00Z',
  '2026-01-01T00:00:00+24:00',
  '2026-01-01T00:00:00.999999999999Z',
  '2026-1-1T0:0:0Z',
  '2026-01-01',
  '2026-01-01T00:00:00',
];
const LONE_SURROGATES = ['\ud800', '\udfff', 'a\udc00b', '\ude00\ud83d', `${'x'.repeat(50)}\udbff`];
const FORBIDDEN_KEYS = ['__proto__', 'constructor', 'prototype'];
const NUMBERS: unknown[] = [
  0,
  -1,
  1.5,
  -0.5,
  2 ** 31,
  2 ** 32,
  2 ** 53,
  -(2 ** 53),
  2 ** 63,
  1e308,
  -1e308,
  5e-324,
  65536,
  10001,
  new Raw('1e400'),
  new Raw('-1e400'),
  new Raw('-0'),
  new Raw('9007199254740993'),
  new Raw('123456789012345678901234567890'),
];
const STRINGS: string[] = [
  '',
  ' ',
  '\t\r\n',
  'x'.repeat(256),
  'x'.repeat(4097),
  'é'.repeat(200),
  '😀'.repeat(100),
  '\u0000',
  'a\u0000b',
  '\ufeff',
  '\u202e',
  'null',
  'true',
  '0',
  '-1',
  '0x10',
  '1e999',
  "' or 1=1 --",
  '"; drop table accounts; --',
  '../../../etc/passwd',
  '%00',
  '${7*7}',
  '<script>',
  'ssh-ed25519 AAAA',
  '10.0.0.0/8',
  '10.0.0.1/8',
  '::/0',
  '256.0.0.0/8',
  '10.0.0.0/33',
  'host:99999',
  '[::1]:0',
  'a=b',
  '*',
];

/** Ids of every kind made in setup, to be put where another kind belongs. */
let knownIds: string[] = [];

function oddIds(): string[] {
  const prefixes = [...new Set(knownIds.map((id) => id.split('_')[0]!))];
  const rest = knownIds[0]?.split('_')[1] ?? '3MWIizJjQdfyJtVl8fS1AbHGB6Y';
  return [
    ...knownIds,
    ...prefixes.map((p) => `${p}_${'A'.repeat(rest.length)}`),
    ...prefixes.map((p) => `${p}_${rest}`),
    ...knownIds.map((id) => id.toUpperCase()),
    ...knownIds.map((id) => `${id}x`),
    `xyz_${rest}`,
    'x'.repeat(64),
    'x'.repeat(65),
    'x'.repeat(201),
    'x'.repeat(300),
    '😀',
    'ünïcødé_ïd',
    '\u0000',
    '\ud800',
    '',
    '_',
    'null',
  ];
}

/** A hostile string; `big` allows the ones of tens of kilobytes (once per body, to stay under the body limit). */
function hostileString(rng: Rng, big: boolean): string {
  switch (rng.int(6)) {
    case 0:
      return rng.pick(IMPOSSIBLE_DATES);
    case 1:
      return rng.pick(LONE_SURROGATES);
    case 2:
      return rng.pick(oddIds());
    case 3:
      return big ? rng.pick(['x'.repeat(70_000), 'é'.repeat(40_000), '\u0000'.repeat(1000), '['.repeat(5000)]) : rng.pick(STRINGS);
    default:
      return rng.pick(STRINGS);
  }
}

function hostileKey(rng: Rng): string {
  return rng.pick([...FORBIDDEN_KEYS, ...LONE_SURROGATES, '', '=', 'x'.repeat(2000), '\u0000', 'a.b', '0', rng.pick(oddIds())]);
}

/** Anything at all, whatever the schema says; nested values (depth > 0) stay small. */
function hostileValue(rng: Rng, depth = 0): unknown {
  const big = depth === 0;
  switch (rng.int(depth > 1 ? 5 : 9)) {
    case 0:
      return rng.pick(NUMBERS);
    case 1:
    case 2:
      return hostileString(rng, big);
    case 3:
      return rng.pick([null, true, false, 'true', 1, 0, '1']);
    case 4:
      return rng.pick([{}, [], [null], [[]], { a: 1 }]);
    case 5:
      return rng.pick([deepArray, deepObject])(rng.pick(big ? DEPTHS : DEPTHS.slice(0, 5)));
    case 6:
      return rng.pick([
        () => Array.from({ length: rng.pick([2, 33, 51, 257]) }, () => hostileValue(rng, depth + 2)),
        () => Array.from({ length: big ? 2000 : 60 }, () => rng.pick(oddIds())),
        () => [hostileString(rng, false), hostileString(rng, false)],
      ])();
    case 7:
      return obj(Array.from({ length: rng.pick(big ? [2, 33, 1000] : [2, 33]) }, (_, i) => [i % 2 ? hostileKey(rng) : `k${i}`, hostileValue(rng, depth + 2)]));
    default:
      return obj([[hostileKey(rng), hostileValue(rng, depth + 1)]]);
  }
}

/** A hostile value for a field of this schema: mostly of its own type, so that it gets past the type check. */
function hostileFor(rng: Rng, schema: Schema): unknown {
  if (rng.chance(0.4)) return hostileValue(rng);
  const type = typeOf(schema);
  if (type === 'string') {
    return isTime(schema) && rng.chance(0.8) ? rng.pick(IMPOSSIBLE_DATES) : hostileString(rng, true);
  }
  if (type === 'integer' || type === 'number') return rng.pick(NUMBERS);
  return hostileValue(rng);
}

/** A plausible value for the schema: where a mutation starts from. */
function sample(schema: Schema | undefined, rng: Rng): unknown {
  const s = concrete(schema);
  if (s.enum) return s.enum[0];
  switch (typeOf(s)) {
    case 'string':
      return 'fuzz';
    case 'integer':
    case 'number':
      return s.minimum ?? 1;
    case 'boolean':
      return false;
    case 'array':
      return Array.from({ length: s.minItems ?? 0 }, () => sample(s.items, rng));
    case 'object': {
      const required = new Set(s.required ?? []);
      return obj(
        Object.entries(s.properties ?? {})
          .filter(([name]) => required.has(name) || rng.chance(0.3))
          .map(([name, child]) => [name, sample(child, rng)]),
      );
    }
    default:
      return null;
  }
}

type Leaf = (rng: Rng, schema: Schema) => unknown;

/**
 * `value` with one place changed to something hostile, found by walking the schema down; with
 * `leaf`, that place is always a field (never a dropped or an unknown one) and gets `leaf`'s value.
 */
function mutate(rng: Rng, schema: Schema | undefined, value: unknown, leaf?: Leaf, depth = 0): unknown {
  const s = concrete(schema);
  if (depth < 4 && rng.chance(0.75)) {
    if (typeOf(s) === 'object' || s.properties || s.additionalProperties) {
      const current = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
      const entries = Object.entries(current);
      const names = [...new Set([...Object.keys(s.properties ?? {}), ...Object.keys(current)])];
      const record = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
      switch (leaf ? (record && rng.chance(0.5) ? 4 : 2) : rng.int(record ? 5 : 4)) {
        case 0: // drop a field
          return obj(entries.filter(([k]) => k !== rng.pick(names)));
        case 1: // an unknown or forbidden field
          return obj([...entries, [hostileKey(rng), hostileValue(rng)]]);
        case 4: // a record: a hostile key with a plausible value, or a hostile value
          return obj([
            ...entries,
            [!leaf && rng.chance(0.5) ? hostileKey(rng) : `k${rng.int(100)}`, mutate(rng, record, sample(record, rng), leaf, depth + 1)],
          ]);
        default: {
          if (names.length === 0) return obj([[leaf ? 'field' : hostileKey(rng), leaf ? leaf(rng, {}) : hostileValue(rng)]]);
          const name = rng.pick(names);
          const child = s.properties?.[name] ?? record;
          const next = mutate(rng, child, Object.hasOwn(current, name) ? current[name] : sample(child, rng), leaf, depth + 1);
          return obj([...entries.filter(([k]) => k !== name), [name, next]]);
        }
      }
    }
    if (typeOf(s) === 'array' && s.items) {
      const current = Array.isArray(value) ? [...value] : [];
      const at = rng.int(current.length + 1);
      current[at] = mutate(rng, s.items, current[at] ?? sample(s.items, rng), leaf, depth + 1);
      return current;
    }
  }
  return (leaf ?? hostileFor)(rng, s);
}

const isTime = (schema: Schema) =>
  typeOf(schema) === 'string' &&
  ((schema as { format?: string }).format === 'date-time' || /RFC 3339/.test((schema as { description?: string }).description ?? ''));

/** The paths of the time fields of a body schema. */
function timeFields(schema: Schema | undefined, at: string[] = []): string[][] {
  const s = concrete(schema);
  if (isTime(s)) return [at];
  if (at.length > 3) return [];
  return Object.entries(s.properties ?? {}).flatMap(([name, child]) => timeFields(child, [...at, name]));
}

function setAt(value: unknown, path: string[], leaf: unknown): unknown {
  if (path.length === 0) return leaf;
  const current = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  const [name, ...rest] = path as [string, ...string[]];
  return obj([...Object.entries(current).filter(([k]) => k !== name), [name, setAt(current[name], rest, leaf)]]);
}

// ---------------------------------------------------------------------------------------------
// Requests

interface Case {
  method: string;
  path: string;
  body?: string | Buffer;
  headers?: Record<string, string | undefined>;
  /** Sent through node:http (fetch sends no body with GET). */
  raw?: boolean;
}

const ODD_QUERY_VALUES = [
  '0x10',
  '1e1',
  '+5',
  '%205',
  '5.0',
  '-1',
  '0',
  '101',
  '99999999999999999999',
  '',
  'abc',
  '%00',
  '%ff',
  '%ED%A0%80',
  encodeURIComponent('é😀'),
  'x'.repeat(70),
  'Infinity',
  'NaN',
  'null',
  '[]',
];
const ODD_QUERY_NAMES = ['limits', '__proto__', 'constructor', 'a[b]', '%ff', '%00', 'x'.repeat(300), 'LIMIT'];

function queryFor(rng: Rng, op: Operation): string {
  const names = op.query.map((p) => p.name);
  switch (rng.int(6)) {
    case 0:
      return `?${rng.pick(ODD_QUERY_NAMES)}=1`;
    case 1:
      return names.length ? `?${names[0]}=1&${names[0]}=2` : '?x=1&x=2';
    case 2:
      return rng.pick(['?', '?&&&', '?=1', '?limit', '?%', '?a=%', '?a=%zz']);
    default: {
      if (!names.length) return `?${rng.pick(ODD_QUERY_NAMES)}=${rng.pick(ODD_QUERY_VALUES)}`;
      const value = rng.chance(0.5) ? rng.pick(ODD_QUERY_VALUES) : encodePathSegment(rng.pick(oddIds()));
      return `?${rng.pick(names)}=${value}`;
    }
  }
}

const LONE_SURROGATE = /([\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff])/;

/** encodeURIComponent, but a lone surrogate (which it refuses) becomes the three bytes UTF-8 would give it, invalid as they are. */
function encodePathSegment(text: string): string {
  const cesu = (unit: number) =>
    [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
  return text
    .split(LONE_SURROGATE)
    .map((part) => (LONE_SURROGATE.test(part) && part.length === 1 ? cesu(part.charCodeAt(0)) : encodeURIComponent(part)))
    .join('');
}

const ODD_PATH_IDS = ['%00', '%ff', '%2F', '%2e%2e', '..', '.', '%20', '%ED%A0%80', '%25', encodeURIComponent('😀'), '*', 'a,b', ';', '~'];

function pathFor(rng: Rng, op: Operation, ids: Map<string, string>, odd: boolean): string {
  const target = odd && op.pathParams.length ? rng.pick(op.pathParams) : undefined;
  return op.path.replace(/\{(\w+)\}/g, (_, param: string) => {
    if (param === target) return rng.chance(0.3) ? rng.pick(ODD_PATH_IDS) : encodePathSegment(rng.pick(oddIds()));
    return ids.get(collectionOf(op.path, param)) ?? `${param}_made_up`;
  });
}

function makeCase(rng: Rng, op: Operation, ids: Map<string, string>, base: unknown): Case {
  const hasBody = op.body !== undefined;
  const roll = rng.int(hasBody ? 12 : 8);
  const path = pathFor(rng, op, ids, hasBody ? roll === 0 || (roll < 4 && rng.chance(0.3)) : roll < 4);
  const json = (value: unknown): Case => ({ method: op.method, path, body: toJson(value) });
  if (!hasBody) {
    if (roll === 6 && op.method === 'GET')
      return { method: op.method, path, body: toJson(hostileValue(rng)), headers: { 'Content-Type': 'application/json' }, raw: true };
    if (roll === 6) return { ...json(hostileValue(rng)), headers: { 'Content-Type': 'application/json' } };
    return { method: op.method, path: path + (roll === 4 || roll === 5 || rng.chance(0.3) ? queryFor(rng, op) : '') };
  }
  switch (roll) {
    case 1:
      return { ...json(base), path: path + queryFor(rng, op) };
    case 2: // not an object at all, or not JSON
      return {
        method: op.method,
        path,
        body: rng.pick([
          '[]',
          '"x"',
          '1',
          'null',
          'true',
          '{',
          '{"a":1,}',
          "{'a':1}",
          '{"a":1}{"b":2}',
          '\ufeff{}',
          '{"a":"\\x"}',
          '{"a":"\\u12"}',
          deepArray(rng.pick(DEPTHS)).text,
          deepObject(rng.pick(DEPTHS)).text,
        ]),
      };
    case 3: // bytes that are not UTF-8 JSON, or the wrong content type
      return rng.chance(0.5)
        ? {
            method: op.method,
            path,
            body: rng.pick([Buffer.from([0xff, 0xfe, 0x7b, 0x7d]), Buffer.from('{"a":"\xed\xa0\x80"}', 'latin1'), Buffer.from('{}', 'utf16le')]),
          }
        : {
            ...json(base),
            headers: {
              'Content-Type': rng.pick(['text/plain', 'application/json; charset=utf-16', 'application/JSON', 'application/json-patch+json', undefined]),
            },
          };
    case 4: // a forbidden key or a lone surrogate somewhere in a valid body
      return json(
        obj([
          ...Object.entries((base ?? {}) as Record<string, unknown>),
          [rng.pick([...FORBIDDEN_KEYS, ...LONE_SURROGATES]), rng.chance(0.5) ? rng.pick(LONE_SURROGATES) : {}],
        ]),
      );
    default: {
      let value = mutate(rng, op.body, base);
      if (rng.chance(0.3)) value = mutate(rng, op.body, value);
      return json(value);
    }
  }
}

/**
 * What every operation with a body gets whatever the seed: each time field with each impossible
 * date, nesting past the limit in a field, lone surrogates in a value and a key, prototype keys
 * at the top and inside.
 */
function systematicCases(rng: Rng, op: Operation, ids: Map<string, string>, base: unknown): Case[] {
  if (!op.body) return [];
  const path = pathFor(rng, op, ids, false);
  const json = (value: unknown): Case => ({ method: op.method, path, body: toJson(value) });
  const entries = Object.entries((base ?? {}) as Record<string, unknown>);
  const inField = (leaf: Leaf) => json(mutate(rng, op.body, base, leaf));
  return [
    ...timeFields(op.body).flatMap((field) => IMPOSSIBLE_DATES.map((date) => json(setAt(base, field, date)))),
    inField(() => deepArray(100_000)),
    inField(() => deepObject(100_000)),
    inField(() => deepArray(DEPTH_LIMIT - 1)),
    inField(() => deepArray(DEPTH_LIMIT)),
    inField(() => rng.pick(LONE_SURROGATES)),
    inField(() => obj([[rng.pick(LONE_SURROGATES), 'x']])),
    inField(() => obj([[rng.pick(FORBIDDEN_KEYS), 'x']])),
    ...[...FORBIDDEN_KEYS, '\ud800'].map((key) => json(obj([...entries, [key, {}]]))),
  ];
}

async function send(api: Api, c: Case): Promise<Response> {
  const headers: Record<string, string | undefined> = { ...(c.body !== undefined && { 'Content-Type': 'application/json' }), ...c.headers };
  if (c.raw) {
    const sent: Record<string, string> = { 'Service-Version': '2', Authorization: `Bearer ${api.token}` };
    for (const [k, v] of Object.entries(headers)) if (v !== undefined) sent[k] = v;
    return rawRequest(api.baseUrl, c.method, c.path, sent, typeof c.body === 'string' ? c.body : c.body?.toString('latin1'));
  }
  return api.request(c.method, c.path, { raw: c.body, headers });
}

function problemWith(res: Response): string | undefined {
  if (res.status >= 500) return `answered ${res.status}`;
  if (res.status < 400) return undefined;
  const body = res.json as Record<string, unknown> | undefined;
  if (!body || typeof body !== 'object') return 'the error body is not JSON';
  if (Object.keys(body).sort().join() !== 'details,error_code,msg,status_code') return `the error body has the keys ${Object.keys(body).join(', ')}`;
  if (typeof body.error_code !== 'string' || !/^ERR_EP_\d+$/.test(body.error_code)) return `error_code is ${JSON.stringify(body.error_code)}`;
  if (body.status_code !== res.status) return `status_code ${String(body.status_code)} is not the status ${res.status}`;
  if (typeof body.msg !== 'string' || body.msg === '') return 'msg is not a message';
  const details = body.details as Record<string, unknown> | undefined;
  if (!details || typeof details.operation_id !== 'string' || !/^op_/.test(details.operation_id)) return 'details.operation_id is missing';
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Valid resources for the paths that need one: a known-good body where a kind needs more than
// its schema tells (references, keys, addresses), else a body made from the create schema.

function ed25519PublicKey(): string {
  const raw = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  const sshString = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, b.length]), b]);
  return `ssh-ed25519 ${Buffer.concat([sshString(Buffer.from('ssh-ed25519')), sshString(raw)]).toString('base64')} fuzz`;
}

const PUBLIC_KEY = ed25519PublicKey();
const GOOD_BODIES: Record<string, (ids: Map<string, string>) => unknown> = {
  '/bot_users': () => ({ name: 'fuzz-bot' }),
  '/ip_policy_rules': (ids) => ids.has('/ip_policies') && { ip_policy_id: ids.get('/ip_policies'), cidr: '127.0.0.0/8', action: 'allow' },
  // A dashboard restriction: an `api` one could lock the fuzzing account out.
  '/ip_restrictions': (ids) => ids.has('/ip_policies') && { type: 'dashboard', ip_policy_ids: [ids.get('/ip_policies')] },
  '/backends/static': () => ({ address: 'app.internal:8080' }),
  '/backends/failover': (ids) => ids.has('/backends/static') && { backends: [ids.get('/backends/static')] },
  '/backends/weighted': (ids) => ids.has('/backends/static') && { backends: { [ids.get('/backends/static')!]: 1 } },
  '/ssh_user_certificates': (ids) =>
    ids.has('/ssh_certificate_authorities') && { ssh_certificate_authority_id: ids.get('/ssh_certificate_authorities'), public_key: PUBLIC_KEY },
  '/ssh_host_certificates': (ids) =>
    ids.has('/ssh_certificate_authorities') && {
      ssh_certificate_authority_id: ids.get('/ssh_certificate_authorities'),
      public_key: PUBLIC_KEY,
      principals: ['host.example'],
    },
};

/** Creates one resource in every collection it can, through the API; returns collection → id. */
async function makeResources(api: Api, ops: Operation[], rng: Rng): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  const creates = ops.filter((op) => op.method === 'POST' && op.body);
  for (let pass = 0; pass < 4; pass++) {
    for (const op of creates) {
      if (ids.has(op.path) || !op.pathParams.every((p) => ids.has(collectionOf(op.path, p)))) continue;
      const good = GOOD_BODIES[op.path]?.(ids);
      if (good === false) continue;
      const body = good ?? sample(op.body, rng);
      const res = await api.post(pathFor(rng, op, ids, false), body);
      if (res.status < 300 && typeof res.json?.id === 'string') ids.set(op.path, res.json.id);
    }
  }
  return ids;
}

describeEachStore(
  'fuzz of every operation',
  (h) => {
    it(`answers no 5xx and only catalogue error bodies (seed ${SEED}, ${CASES} requests per operation)`, { timeout: 240_000 }, async () => {
      const api = await h().newAccount();
      const doc = h().app.swagger() as unknown as Parameters<typeof operationsOf>[0];
      const ops = operationsOf(doc);
      assert.ok(ops.length >= 40, `the document lists the operations (${ops.length})`);
      const ids = await makeResources(api, ops, new Rng(SEED));
      knownIds = [...ids.values()];
      assert.ok(ids.size >= 8, `resources to address: ${[...ids.keys()].join(', ')}`);

      const failures: string[] = [];
      let sent = 0;
      for (const op of ops) {
        const rng = new Rng(SEED ^ hash(`${op.method} ${op.path}`));
        const base = op.method === 'POST' ? (GOOD_BODIES[op.path]?.(ids) ?? sample(op.body, rng)) : sample(op.body, rng);
        const cases = [...systematicCases(rng, op, ids, base), ...Array.from({ length: CASES }, () => makeCase(rng, op, ids, base))];
        for (const [i, c] of cases.entries()) {
          let res: Response;
          try {
            res = await send(api, c);
          } catch (error) {
            failures.push(`${op.id} #${i}: ${c.method} ${c.path.slice(0, 200)}: the request failed: ${(error as Error).message}`);
            continue;
          }
          sent++;
          const problem = problemWith(res);
          if (problem) {
            const body = c.body === undefined ? '' : ` body ${(typeof c.body === 'string' ? c.body : c.body.toString('hex')).slice(0, 300)}`;
            failures.push(`${op.id} #${i}: ${c.method} ${c.path.slice(0, 200)}${body} → ${problem}: ${res.text.slice(0, 300)}`);
          }
        }
      }
      assert.equal((await api.get('/ip_policies')).status, 200, 'still serving');
      assert.deepEqual(
        failures,
        [],
        `${failures.length} of ${sent} requests went wrong; replay with EDGEPLANE_FUZZ_SEED=${SEED}:\n${failures.slice(0, 40).join('\n')}`,
      );
    });
  },
  // Thousands of requests from one account: the rate limit (tested on its own) would refuse most.
  { rateLimit: { perMinute: 0 } },
);
