// Validation of the values inside backends that a schema cannot explain well: labels, HTTP
// headers, addresses, status codes, child lists and weights. Each failure has its own error.
import net from 'node:net';
import type { LinkItem } from '../../crud/references.js';
import { MAX_CHILDREN } from './backend-links.js';
import { backendErrors } from './backend.errors.js';
import { MAX_LABEL_KEY_BYTES, MAX_LABEL_VALUE_BYTES, MAX_LABELS, MAX_RESPONSE_BODY_BYTES } from './backend.schema.js';

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');
const HOST_NAME = /^(?=.{1,253}$)([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

export function checkLabels(labels: Record<string, string>): Record<string, string> {
  const entries = Object.entries(labels);
  if (entries.length > MAX_LABELS) throw backendErrors.tooManyLabels({ count: entries.length, max: MAX_LABELS });
  for (const [key, value] of entries) {
    if (key === '' || bytes(key) > MAX_LABEL_KEY_BYTES) throw backendErrors.invalidLabelKey({ key: key.slice(0, 80), max: MAX_LABEL_KEY_BYTES });
    if (key.includes('=')) throw backendErrors.labelKeyEquals({ key });
    if (bytes(value) > MAX_LABEL_VALUE_BYTES) throw backendErrors.labelValueTooLong({ key, max: MAX_LABEL_VALUE_BYTES });
  }
  return labels;
}

export function checkResponseBody(body: string): string {
  if (bytes(body) > MAX_RESPONSE_BODY_BYTES) throw backendErrors.responseBodyTooLarge({ bytes: bytes(body), max: MAX_RESPONSE_BODY_BYTES });
  return body;
}

export function checkStatusCode(code: number): number {
  if (code < 100 || code > 599) throw backendErrors.invalidStatusCode({ value: code });
  return code;
}

/** `host:port` with a DNS name, an IPv4 address or a bracketed IPv6 address, port 1–65535. */
export function checkAddress(address: string): string {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(address);
  if (!m) throw backendErrors.invalidAddress({ address, reason: 'is not of the form host:port' });
  const port = Number(m[3]);
  if (port < 1 || port > 65535) throw backendErrors.invalidAddress({ address, reason: `has port ${m[3]}, outside 1 to 65535` });
  if (m[1] !== undefined) {
    if (net.isIPv6(m[1])) return address;
    throw backendErrors.invalidAddress({ address, reason: `has '${m[1]}' in brackets, which is not an IPv6 address` });
  }
  const host = m[2]!;
  if (net.isIPv4(host) || (HOST_NAME.test(host) && !/^[\d.]+$/.test(host))) return address;
  throw backendErrors.invalidAddress({ address, reason: `has '${host}', which is neither a host name nor an IPv4 address` });
}

export function checkFailoverChildren(ids: readonly string[]): LinkItem[] {
  if (ids.length > MAX_CHILDREN) throw backendErrors.tooManyChildren({ count: ids.length, max: MAX_CHILDREN });
  const seen = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) throw backendErrors.duplicateChild({ id });
    seen.add(id);
  }
  return ids.map((id) => ({ id, weight: null }));
}

export function checkWeightedChildren(weights: Record<string, number>): LinkItem[] {
  const entries = Object.entries(weights);
  if (entries.length > MAX_CHILDREN) throw backendErrors.tooManyChildren({ count: entries.length, max: MAX_CHILDREN });
  for (const [backendId, weight] of entries) {
    if (weight < 0 || weight > 10000) throw backendErrors.weightOutOfRange({ backendId, weight, min: 0, max: 10000 });
  }
  return entries.map(([id, weight]) => ({ id, weight }));
}
