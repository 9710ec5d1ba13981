// CEL at the edge: the environments of cel.ts built with the functions that run here
// (inCidrRange and inCidrRanges on ipaddr.js, matches on RE2), expressions compiled once into
// programs, and the values a program sees (the activation) made from the connection, request and
// response. Programs throw on a failed evaluation (a missing map key, an RE2 pattern refused at
// run time, …); the policy turns that into an error decision.
import ipaddr from 'ipaddr.js';
import { CelCookie, CelUrl, celEnvironment, type CelEnvName, type CelRuntime } from '../../edge-config/traffic-policy/cel.js';
import { parseClientIp } from '../../lib/ip/cidr.js';
import { compileRe2 } from '../../lib/regex/re2-runtime.js';
import type { HeaderField, PolicyConnection, PolicyRequest, PolicyResponse } from './types.js';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

// CIDRs of expressions are mostly literals: parsed once each (a bounded cache).
const ranges = new Map<string, Range>();
const MAX_RANGES = 10_000;

/** A CIDR as Go's netip.ParsePrefix takes it (host bits allowed, `10.1.2.3/8` is 10.0.0.0/8); throws when it is not one. */
function rangeOf(cidr: string): Range {
  let range = ranges.get(cidr);
  if (range) return range;
  try {
    range = ipaddr.parseCIDR(cidr);
  } catch {
    throw new Error(`'${cidr.length > 60 ? `${cidr.slice(0, 57)}...` : cidr}' is not a CIDR`);
  }
  if (ranges.size >= MAX_RANGES) ranges.clear();
  ranges.set(cidr, range);
  return range;
}

/** Whether `ip` is in `cidr`: an address that does not parse is in no range; a CIDR that does not parse is an error. */
function inCidrRange(ip: string, cidr: string): boolean {
  const [network, bits] = rangeOf(cidr);
  const address = parseClientIp(ip);
  if (!address || address.kind() !== network.kind()) return false;
  return (address as ipaddr.IPv4).match(network as ipaddr.IPv4, bits);
}

export const RUNTIME: CelRuntime = {
  inCidrRange,
  inCidrRanges: (ip, cidrs) => cidrs.some((cidr) => inCidrRange(ip, cidr)),
  matches: (text, pattern) => compileRe2(pattern).test(text),
};

type Environment = ReturnType<typeof celEnvironment>;
const environments = new Map<CelEnvName, Environment>();

/** The environment `name` built to evaluate; built once, on first use. */
export function runtimeEnvironment(name: CelEnvName): Environment {
  let env = environments.get(name);
  if (!env) {
    env = celEnvironment(name, RUNTIME);
    environments.set(name, env);
  }
  return env;
}

export type Activation = Record<string, unknown>;
export type Program = (activation: Activation) => unknown;

/** `expression` parsed and type-checked once in `env`; throws with the reason when it does not check. */
export function compileProgram(expression: string, env: CelEnvName): Program {
  const parsed = runtimeEnvironment(env).parse(expression);
  const checked = parsed.check();
  if (!checked.valid) throw new Error(String(checked.error?.message ?? 'invalid expression').split('\n')[0]);
  return (activation) => parsed(activation) as unknown;
}

/** The reason an evaluation failed, in one line. */
export function reasonOf(error: unknown): string {
  const summary = (error as { summary?: unknown }).summary;
  const text = typeof summary === 'string' ? summary : error instanceof Error ? error.message : String(error);
  return text.split('\n')[0]!;
}

/** A CEL value as text, for templates and rate-limit bucket keys. */
export function celText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (typeof value === 'bigint' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value instanceof Date) return value.toISOString();
  if (value instanceof CelUrl) return value.toString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  return JSON.stringify(plain(value));
}

/** A CEL value as JSON can hold it (for log lines and texts). */
export function plain(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (value instanceof CelUrl) return value.toString();
  if (value instanceof CelCookie) return { name: value.name, value: value.value };
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(plain);
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [String(k), plain(v)]));
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}

// ---------------------------------------------------------------------------------------------
// The activation: every variable the phase declares.

/** Header fields as CEL sees them: lower-case names to their values, one per field line. */
export function headerMap(headers: readonly HeaderField[]): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const [name, value] of headers) {
    const key = name.toLowerCase();
    const values = map.get(key);
    if (values) values.push(value);
    else map.set(key, [value]);
  }
  return map;
}

/** Go's canonical header key (`user-agent` → `User-Agent`), as the policy module's `req.Headers` used. */
function canonicalKey(name: string): string {
  return name.toLowerCase().replace(/(^|-)([a-z])/g, (_all, dash: string, letter: string) => dash + letter.toUpperCase());
}

function canonicalMap(headers: Map<string, string[]>): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const [name, values] of headers) map.set(canonicalKey(name), values);
  return map;
}

export const firstHeader = (headers: Map<string, string[]>, name: string) => headers.get(name)?.[0] ?? '';

function contentLength(headers: Map<string, string[]>): bigint {
  const value = firstHeader(headers, 'content-length').trim();
  return /^\d{1,18}$/.test(value) ? BigInt(value) : -1n;
}

const listOf = (header: string) =>
  header
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .filter((part) => part !== '');

/** Cookie header fields parsed as Go's net/http reads them: `name=value` pairs split on `;`, quotes around a value dropped. */
function cookiesOf(headers: Map<string, string[]>): Map<string, CelCookie[]> {
  const cookies = new Map<string, CelCookie[]>();
  for (const line of headers.get('cookie') ?? []) {
    for (const part of line.split(';')) {
      const eq = part.indexOf('=');
      if (eq <= 0) continue;
      const name = part.slice(0, eq).trim();
      let value = part.slice(eq + 1).trim();
      if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
      if (name === '') continue;
      const list = cookies.get(name);
      if (list) list.push(new CelCookie(name, value));
      else cookies.set(name, [new CelCookie(name, value)]);
    }
  }
  return cookies;
}

/** The request's target split into path and query (without its `?`). */
export function splitTarget(target: string): { path: string; query: string } {
  const q = target.indexOf('?');
  return q === -1 ? { path: target, query: '' } : { path: target.slice(0, q), query: target.slice(q + 1) };
}

function queryParams(query: string): Map<string, string[]> {
  const params = new Map<string, string[]>();
  for (const [name, value] of new URLSearchParams(query)) {
    const list = params.get(name);
    if (list) list.push(value);
    else params.set(name, [value]);
  }
  return params;
}

/** `scheme://host/path?query`: what redirect's and url-rewrite's `from` run on, and `req.url` as a string. */
export function fullUrl(req: PolicyRequest): CelUrl {
  const { path, query } = splitTarget(req.url);
  return new CelUrl(req.scheme, req.host, path, query);
}

/** There is no geolocation database at the edge: every `conn.geo` field is empty (strings) or 0 (numbers). */
const NO_GEO = { city: '', country: '', country_code: '', subdivision: '', latitude: 0, longitude: 0, radius: 0 };

export interface Scope {
  conn: PolicyConnection;
  req?: PolicyRequest;
  res?: PolicyResponse;
  now: Date;
  /** The policy module's HTTP environments: the old spellings too. */
  aliases: boolean;
}

export function activationOf({ conn, req, res, now, aliases }: Scope): Activation {
  const e = conn.endpoint;
  const activation: Activation = {
    conn: {
      client_ip: conn.clientIp,
      client_port: BigInt(conn.clientPort),
      server_ip: conn.serverIp,
      server_port: BigInt(conn.serverPort),
      ts: { start: conn.startedAt },
      geo: NO_GEO,
      ...(aliases ? { Geo: { CountryCode: '' } } : {}),
    },
    endpoint: { addr: e.addr, host: e.host, id: e.id, protocol: e.protocol, url: e.url, port: BigInt(e.port) },
    time: { now },
  };
  if (req) {
    const headers = headerMap(req.headers);
    const url = fullUrl(req);
    const length = contentLength(headers);
    activation.req = {
      method: req.method,
      url,
      host: req.host,
      path: url.path,
      query: url.query,
      query_params: queryParams(url.query),
      headers,
      trailers: new Map(),
      content_length: length,
      content_type: firstHeader(headers, 'content-type'),
      content_encoding: listOf((headers.get('content-encoding') ?? []).join(',')),
      user_agent: firstHeader(headers, 'user-agent'),
      version: req.version,
      cookies: cookiesOf(headers),
      // The body streams upstream after the request phase: it has not been received then.
      ts: { header_received: req.receivedAt, body_received: req.receivedAt },
      ...(aliases ? { Method: req.method, URL: url.toString(), ContentLength: length, Headers: canonicalMap(headers) } : {}),
    };
  }
  if (res) {
    const headers = headerMap(res.headers);
    const length = contentLength(headers);
    activation.res = {
      status_code: BigInt(res.status),
      headers,
      trailers: new Map(),
      content_length: length,
      content_type: firstHeader(headers, 'content-type'),
      content_encoding: listOf((headers.get('content-encoding') ?? []).join(',')),
      location: firstHeader(headers, 'location'),
      ...(aliases ? { StatusCode: BigInt(res.status), ContentLength: length, Headers: canonicalMap(headers) } : {}),
    };
  }
  return activation;
}
