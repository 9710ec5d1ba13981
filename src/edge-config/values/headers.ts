// Header maps, as HTTP-response backends and the header modules of routes take them: the same
// limits and the same refusals for both.
import { lowerCasedHeaders } from '../../lib/http/syntax.js';
import { sharedValueErrors } from './shared-value.errors.js';

export const MAX_HEADERS = 50;
export const MAX_HEADER_VALUE_BYTES = 4096;

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

/**
 * Header names lower-cased (they are case-insensitive), values without line breaks, at most
 * MAX_HEADERS of at most MAX_HEADER_VALUE_BYTES each: a backend's headers and a header module's.
 */
export function checkHeaders(headers: Record<string, string>): Record<string, string> {
  const count = Object.keys(headers).length;
  if (count > MAX_HEADERS) throw sharedValueErrors.tooManyHeaders({ count, max: MAX_HEADERS });
  const checked = lowerCasedHeaders(headers, (value) => bytes(value) <= MAX_HEADER_VALUE_BYTES);
  if ('headers' in checked) return checked.headers;
  if (checked.problem === 'name') throw sharedValueErrors.invalidHeaderName({ name: checked.name.slice(0, 80) });
  if (checked.problem === 'value') throw sharedValueErrors.invalidHeaderValue({ name: checked.name });
  throw sharedValueErrors.duplicateHeader({ name: checked.name });
}
