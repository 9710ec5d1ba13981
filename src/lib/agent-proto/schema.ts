// A small description of the protocol's JSON objects, read and written from the same table so the
// two cannot drift. The rules are those of the decoders on each side of the wire:
// - reading what an agent sends follows Go's encoding/json (the real server's): a member matches
//   its field exactly or, failing that, ignoring ASCII case (the Go agent sends "Authtoken", the
//   Rust one "AuthToken"); unknown members are ignored; null leaves the field at its default; a
//   value of the wrong JSON type is refused (Go refuses it too; it does not coerce);
// - writing what the Node SDK (ngrok-rust, serde, case-sensitive) reads: exactly its names, every
//   field it requires, optional fields left out when unset (serde reads a missing Option as None),
//   and the defaults it skips (`skip_serializing_if = "is_default"`) left out too.
import { AgentProtoError } from './json.js';

export type Kind = 'string' | 'bool' | 'int' | 'float' | 'strings' | 'stringMap' | 'base64' | 'proxyProto' | { object: Schema } | { list: Schema };

export interface Field {
  /** The property in edgeplane's value. */
  name: string;
  /** The member on the wire, as the Rust agent spells it. */
  wire: string;
  kind: Kind;
  /** Refused when missing (or null). */
  required?: boolean;
  /** Left undefined when missing (a Go pointer, a Rust Option) instead of taking its default. */
  optional?: boolean;
  /** Not written when it holds its default (Rust's skip_serializing_if = "is_default"). */
  omitDefault?: boolean;
}

export interface Schema {
  what: string;
  fields: Field[];
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const describe = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`);

function defaultOf(kind: Kind): unknown {
  switch (kind) {
    case 'string':
      return '';
    case 'bool':
      return false;
    case 'int':
    case 'float':
    case 'proxyProto':
      return 0;
    case 'strings':
      return [];
    case 'stringMap':
      return Object.create(null);
    case 'base64':
      return Buffer.alloc(0);
    default:
      return 'object' in kind ? decodeObject({}, kind.object, '') : [];
  }
}

function isDefault(value: unknown): boolean {
  if (value === '' || value === false || value === 0) return true;
  if (Array.isArray(value) || Buffer.isBuffer(value)) return value.length === 0;
  if (typeof value === 'object' && value !== null) return Object.keys(value).length === 0;
  return false;
}

/** Reads `value` (parsed JSON) as `schema` says; throws AgentProtoError naming the member. */
export function decodeObject(value: unknown, schema: Schema, path: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AgentProtoError('wrong_type', `${schema.what}: '${path || '(message)'}' must be an object, not ${describe(value)}`);
  }
  const exact = new Map(schema.fields.map((field) => [field.wire, field]));
  const folded = new Map(schema.fields.map((field) => [field.wire.toLowerCase(), field]));
  const out: Record<string, unknown> = {};
  const seen = new Set<Field>();
  // In the members' order, so that of two spellings of one field the later wins, as in Go.
  for (const [key, member] of Object.entries(value)) {
    const field = exact.get(key) ?? folded.get(key.toLowerCase());
    if (field === undefined || member === null) continue;
    out[field.name] = decodeValue(member, field.kind, schema, path ? `${path}.${key}` : key);
    seen.add(field);
  }
  for (const field of schema.fields) {
    if (seen.has(field)) continue;
    if (field.required) {
      const at = path ? `${path}.${field.wire}` : field.wire;
      throw new AgentProtoError('missing_field', `${schema.what}: '${at}' is required`);
    }
    if (!field.optional) out[field.name] = defaultOf(field.kind);
  }
  return out;
}

function decodeValue(value: unknown, kind: Kind, schema: Schema, at: string): unknown {
  const wrong = (expected: string): never => {
    throw new AgentProtoError('wrong_type', `${schema.what}: '${at}' must be ${expected}, not ${describe(value)}`);
  };
  switch (kind) {
    case 'string':
      return typeof value === 'string' ? value : wrong('a string');
    case 'bool':
      return typeof value === 'boolean' ? value : wrong('a boolean');
    case 'int':
      // Go refuses a fraction for an integer field; beyond 2^53 a JS number would not be exact.
      return typeof value === 'number' && Number.isSafeInteger(value) ? value : wrong('an integer');
    case 'float':
      // JSON.parse reads 1e400 as Infinity; Go refuses it as out of range.
      return typeof value === 'number' && Number.isFinite(value) ? value : wrong('a finite number');
    case 'proxyProto':
      if (value === 0 || value === 1 || value === 2) return value;
      if (typeof value === 'number') {
        throw new AgentProtoError('bad_value', `${schema.what}: '${at}' must be 0 (none), 1 or 2 (PROXY protocol version), not ${value}`);
      }
      return wrong('0, 1 or 2');
    case 'strings':
      if (!Array.isArray(value)) return wrong('an array of strings');
      return value.map((item, i) => (typeof item === 'string' ? item : decodeValue(item, 'string', schema, `${at}[${i}]`)));
    case 'stringMap': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return wrong('an object of strings');
      // No prototype: a label named "__proto__" is a label.
      const map: Record<string, string> = Object.create(null);
      for (const [key, item] of Object.entries(value)) map[key] = decodeValue(item, 'string', schema, `${at}.${key}`) as string;
      return map;
    }
    case 'base64':
      if (typeof value !== 'string') return wrong('a base64 string');
      if (!BASE64.test(value)) throw new AgentProtoError('bad_value', `${schema.what}: '${at}' is not standard base64`);
      return Buffer.from(value, 'base64');
    default:
      if ('object' in kind) return decodeObject(value, kind.object, at);
      if (!Array.isArray(value)) return wrong('an array');
      return value.map((item, i) => decodeObject(item, kind.list, `${at}[${i}]`));
  }
}

/** Writes `value` as `schema` says: wire names, required fields always, unset optionals left out. */
export function encodeObject(value: object, schema: Schema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of schema.fields) {
    const member = (value as Record<string, unknown>)[field.name];
    if (member === undefined) {
      if (field.optional || field.omitDefault) continue;
      out[field.wire] = encodeValue(defaultOf(field.kind), field.kind);
      continue;
    }
    if (field.omitDefault && isDefault(member)) continue;
    out[field.wire] = encodeValue(member, field.kind);
  }
  return out;
}

function encodeValue(value: unknown, kind: Kind): unknown {
  if (kind === 'base64') return (value as Buffer).toString('base64');
  if (kind === 'stringMap') return { ...(value as Record<string, string>) };
  if (typeof kind === 'object') {
    if ('object' in kind) return encodeObject(value as object, kind.object);
    return (value as object[]).map((item) => encodeObject(item, kind.list));
  }
  return value;
}
