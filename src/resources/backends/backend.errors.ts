// The errors of backends: their values (backend-values.ts: addresses, labels, weights, HTTP
// responses) and their links (backend-links.ts: cycles, deletes). A backend that is not in the
// account and bad header maps are refused with the errors edge configuration shares
// (src/edge-config/values/shared-value.errors.ts).
import { entry, shortList, throwersOf } from '../../core/errors.js';

export const backendCatalogue = {
  backendInUse: entry<{ id: string; referrers: readonly string[] }>(
    6502,
    409,
    'The backend is still used by another backend or an edge and cannot be deleted.',
    (a) => `Backend ${a.id} is still used by ${shortList(a.referrers)}; remove it from there first.`,
  ),
  invalidAddress: entry<{ address: string; reason: string }>(
    6505,
    400,
    'address is not host:port with a port from 1 to 65535.',
    (a) => `address '${a.address}' ${a.reason}; give it as host:port, e.g. 'app.internal:8080' or '[2001:db8::1]:443'.`,
  ),
  tooManyLabels: entry<{ count: number; max: number }>(
    6508,
    400,
    'A tunnel-group backend has more labels than allowed.',
    (a) => `labels has ${a.count} entries; at most ${a.max} are allowed.`,
  ),
  invalidLabelKey: entry<{ key: string; max: number }>(
    6509,
    400,
    'A label key is empty or longer than allowed.',
    (a) => `label key '${a.key}' must be 1 to ${a.max} bytes long.`,
  ),
  labelValueTooLong: entry<{ key: string; max: number }>(
    6510,
    400,
    'A label value is longer than allowed.',
    (a) => `the value of label '${a.key}' is longer than ${a.max} bytes.`,
  ),
  labelKeyEquals: entry<{ key: string }>(6531, 400, 'A label key contains "=".', (a) => `label key '${a.key}' must not contain '='.`),
  tooManyChildren: entry<{ count: number; max: number }>(
    6511,
    400,
    'A failover or weighted backend names more child backends than allowed.',
    (a) => `backends names ${a.count} backends; at most ${a.max} are allowed.`,
  ),
  weightOutOfRange: entry<{ backendId: string; weight: number; min: number; max: number }>(
    6512,
    400,
    'A weight of a weighted backend is outside 0 to 10000.',
    (a) => `weight ${a.weight} for ${a.backendId} is out of range; must be ${a.min} to ${a.max}.`,
  ),
  duplicateChild: entry<{ id: string }>(
    6515,
    400,
    'A failover backend names the same child twice.',
    (a) => `backends names ${a.id} more than once; name each backend once.`,
  ),
  responseBodyTooLarge: entry<{ bytes: number; max: number }>(
    6516,
    400,
    'The body of an HTTP-response backend is larger than allowed.',
    (a) => `body is ${a.bytes} bytes; at most ${a.max} are allowed.`,
  ),
  invalidStatusCode: entry<{ value: number }>(
    6517,
    400,
    'status_code is not an HTTP status from 100 to 599.',
    (a) => `status_code ${a.value} is not a valid HTTP status; must be 100 to 599.`,
  ),
  backendCycle: entry<{ cycle: readonly string[] }>(
    6530,
    400,
    'The child backends would form a cycle.',
    (a) => `backends would form a cycle: ${a.cycle.join(' → ')}; a backend cannot contain itself, directly or through other backends.`,
  ),
} as const;

/** Error factories: `throw backendErrors.backendCycle(…)`. */
export const backendErrors = throwersOf(backendCatalogue);
