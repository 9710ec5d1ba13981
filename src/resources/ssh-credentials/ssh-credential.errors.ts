// The errors of SSH credentials that are theirs alone: a public key that is not one supported
// OpenSSH key (ssh-credential-key.ts), and a key the account has already registered. Their ACL
// and ownership errors are the credentials' (credential.errors.ts), as their rules are.
import { entry, throwersOf } from '../../core/errors.js';

export const sshCredentialCatalogue = {
  invalidSshCredentialKey: entry<{ reason: string }>(
    610,
    400,
    'public_key is not one OpenSSH public key of a supported type in authorized_keys form.',
    (a) => `public_key ${a.reason}.`,
  ),
  sshCredentialKeyTaken: entry<{ id?: string }>(
    611,
    409,
    'Another SSH credential of the account already has this public key.',
    (a) =>
      `${a.id ? `SSH credential ${a.id} of this account` : 'Another SSH credential of this account, made at the same moment,'} already has this public key; a key is registered once per account (change that credential's ACL instead).`,
  ),
} as const;

/** Error factories: `throw sshCredentialErrors.invalidSshCredentialKey(…)`. */
export const sshCredentialErrors = throwersOf(sshCredentialCatalogue);
