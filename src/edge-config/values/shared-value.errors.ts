// The errors of what edge configuration shares with the kinds it names: a backend or IP policy
// that is not in the account (named by edge modules, failover and weighted backends, IP policy
// rules and restrictions), and the header maps of HTTP-response backends and header modules.
import { entry, throwersOf } from '../../core/errors.js';

export const sharedValueCatalogue = {
  backendNotFound: entry<{ field: string; id: string }>(
    6501,
    400,
    'A referenced backend does not exist in this account.',
    (a) => `${a.field} names '${a.id}', which is not a backend (bkdtg_, bkdhr_, bkdsc_, bkdfo_ or bkdwd_) of this account.`,
  ),
  ipPolicyNotFound: entry<{ field: string; id: string }>(
    1402,
    400,
    'A referenced IP policy does not exist in this account.',
    (a) => `${a.field} '${a.id}' is not an IP policy (ipp_…) of this account.`,
  ),
  invalidHeaderName: entry<{ name: string }>(
    6518,
    400,
    'A header name is not a valid HTTP field name.',
    (a) => `header name '${a.name}' is not a valid HTTP header name (letters, digits and !#$%&'*+-.^_\`|~, no spaces).`,
  ),
  invalidHeaderValue: entry<{ name: string }>(
    6519,
    400,
    'A header value contains a line break or another control character.',
    (a) => `the value of header '${a.name}' must not contain line breaks or other control characters.`,
  ),
  duplicateHeader: entry<{ name: string }>(
    6520,
    400,
    'Two header names differ only in case.',
    (a) => `header '${a.name}' is given more than once (header names are case-insensitive).`,
  ),
  tooManyHeaders: entry<{ count: number; max: number }>(
    6521,
    400,
    'An HTTP-response backend has more headers than allowed.',
    (a) => `headers has ${a.count} entries; at most ${a.max} are allowed.`,
  ),
} as const;

/** Error factories: `throw sharedValueErrors.backendNotFound(…)`. */
export const sharedValueErrors = throwersOf(sharedValueCatalogue);
