// The errors of IP restrictions. The 403 of a caller the account's api restriction keeps out
// (ipRestricted) is in the authorization errors of src/core/errors.ts, as src/http/ screens
// requests without importing this kind.
import { entry, throwersOf } from '../../core/errors.js';

export const ipRestrictionCatalogue = {
  restrictionTypeTaken: entry<{ type: string; id?: string }>(
    1802,
    409,
    'The account already has an IP restriction of that type.',
    (a) => `The account already has an IP restriction of type '${a.type}'${a.id ? ` (${a.id})` : ''}; update that one instead.`,
  ),
} as const;

/** Error factories: `throw ipRestrictionErrors.restrictionTypeTaken(…)`. */
export const ipRestrictionErrors = throwersOf(ipRestrictionCatalogue);
