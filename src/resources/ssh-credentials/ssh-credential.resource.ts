// SSH credentials: public keys an account registers so that `ssh -R` may open tunnels, with the
// ACL, ownership and roles of credentials (agent authtokens), whose rules they reuse rather than
// copy. The key is checked and kept in one form (ssh-credential-key.ts); it is fixed once made,
// and registered once per account: the pre-check names the credential that has it, and the unique
// index on (account_id, key_fingerprint) refuses the same key made at the same moment. Another
// account may register the same key: telling it otherwise would say that someone else holds it.
import { errors } from '../../core/errors.js';
import { describedChanges, describedColumns } from '../../core/schema.js';
import { ownerManaged } from '../../crud/authorization.js';
import { defineResource } from '../../crud/definition.js';
import { readAcl } from '../credentials/credential-acl.js';
import { credentialErrors } from '../credentials/credential.errors.js';
import { sshKeyFingerprint } from './ssh-credential.auth.js';
import { sshCredentialCatalogue, sshCredentialErrors } from './ssh-credential.errors.js';
import { readSshCredentialKey } from './ssh-credential-key.js';
import { SshCredential, SshCredentialCreate, SshCredentialUpdate } from './ssh-credential.schema.js';
import type { SshCredentialsTable } from './ssh-credential.table.js';

/**
 * The names a violation of the index `ssh_credentials_account_fingerprint_key` is reported under:
 * PostgreSQL gives the index's name; SQLite names the columns, which the store turns into
 * `<table>_<columns>_key` (the migration, frozen, did not name the index that way).
 */
const KEY_TAKEN_TARGETS = new Set(['ssh_credentials_account_fingerprint_key', 'ssh_credentials_account_id_key_fingerprint_key']);

/** `credentialDeleted`: told the id of each SSH credential deleted, once committed (main.ts ends its sessions), as credentials tell it. */
export const sshCredentialDefinition = (credentialDeleted?: (credentialId: string) => void) =>
  defineResource({
    kind: 'ssh_credential',
    title: 'SSH credential',
    errors: sshCredentialCatalogue,
    prefix: 'sshcr',
    path: '/ssh_credentials',
    listKey: 'ssh_credentials',
    table: 'ssh_credentials',
    schemas: { resource: SshCredential, create: SshCredentialCreate, update: SshCredentialUpdate },
    immutable: ['owner_id', 'public_key'],
    references: [
      { in: 'column', column: 'owner_id', kinds: ['user', 'bot_user'], notFound: (id) => errors.ownerNotInAccount({ ownerId: id }), onDelete: 'cascade' },
    ],

    authorize: ownerManaged({ otherOwner: () => credentialErrors.credentialOwnerNotAllowed(), notOwner: (id) => credentialErrors.notCredentialOwner({ id }) }),

    prepare(ctx, body) {
      const acl = JSON.stringify(readAcl(body.acl ?? []));
      const key = readSshCredentialKey(body.public_key);
      return {
        row: {
          owner_id: body.owner_id ?? ctx.principal.id,
          ...describedColumns(body),
          acl,
          public_key: key.publicKey,
          key_fingerprint: sshKeyFingerprint(key.blob),
        },
      };
    },

    patch: (_ctx, body): Partial<SshCredentialsTable> => ({
      ...describedChanges(body),
      ...(body.acl != null && { acl: JSON.stringify(readAcl(body.acl)) }),
    }),

    toApi: (row: SshCredentialsTable) => ({
      id: row.id,
      created_at: row.created_at,
      description: row.description,
      metadata: row.metadata,
      public_key: row.public_key,
      acl: JSON.parse(row.acl) as string[],
      owner_id: row.owner_id,
    }),

    hooks: {
      async beforeCreate(db, _ctx, row) {
        const [existing] = await db.select('ssh_credentials', { key_fingerprint: row.key_fingerprint });
        if (existing) throw sshCredentialErrors.sshCredentialKeyTaken({ id: existing.id });
      },
      afterCommit(_ctx, operation, row) {
        if (operation === 'delete') credentialDeleted?.(row.id);
      },
      // Two creates of one key at once (PostgreSQL): both pass the check above, the index refuses the second.
      onUniqueViolation: (target) => (KEY_TAKEN_TARGETS.has(target) ? sshCredentialErrors.sshCredentialKeyTaken({}) : undefined),
    },
  });
