// The errors of bot users.
import { entry, throwersOf } from '../../core/errors.js';

export const botUserCatalogue = {
  botNameTaken: entry<{ name: string }>(
    4112,
    409,
    'Another bot user of the account already has that name.',
    (a) => `A bot user named '${a.name}' already exists in this account; choose another name.`,
  ),
} as const;

/** Error factories: `throw botUserErrors.botNameTaken(…)`. */
export const botUserErrors = throwersOf(botUserCatalogue);
