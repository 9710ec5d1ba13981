// Credentials: the authtokens agents present when they dial in. Like API keys, the token is made
// once, shown once, and stored only as a hash of its secret; developers and bots manage their
// own, admins every credential of the account. The ACL is checked strictly (credential-acl.ts).
import { errors } from '../../core/errors.js';
import { describedChanges, describedColumns } from '../../core/schema.js';
import { defineResource } from '../../crud/definition.js';
import { ownerManaged } from '../../crud/authorization.js';
import type { CredentialsTable } from './credential.table.js';
import { readAcl } from './credential-acl.js';
import { credentialCatalogue, credentialErrors } from './credential.errors.js';
import { Credential, CredentialCreate, CredentialUpdate } from './credential.schema.js';
import { newCredentialMaterial } from './credential.token.js';

/** `credentialDeleted`: told the id of each credential deleted, once committed (main.ts ends its agent sessions). */
export const credentialDefinition = (credentialDeleted?: (credentialId: string) => void) =>
  defineResource({
    kind: 'credential',
    title: 'credential',
    errors: credentialCatalogue,
    prefix: 'cr',
    path: '/credentials',
    listKey: 'credentials',
    table: 'credentials',
    schemas: { resource: Credential, create: CredentialCreate, update: CredentialUpdate },
    immutable: ['owner_id'],
    shownOnce: ['token'],
    references: [
      { in: 'column', column: 'owner_id', kinds: ['user', 'bot_user'], notFound: (id) => errors.ownerNotInAccount({ ownerId: id }), onDelete: 'cascade' },
    ],

    authorize: ownerManaged({ otherOwner: () => credentialErrors.credentialOwnerNotAllowed(), notOwner: (id) => credentialErrors.notCredentialOwner({ id }) }),

    prepare(ctx, body) {
      const acl = JSON.stringify(readAcl(body.acl ?? []));
      const { id, token, secret_hash } = newCredentialMaterial();
      return { id, row: { owner_id: body.owner_id ?? ctx.principal.id, ...describedColumns(body), acl, secret_hash }, reveal: { token } };
    },

    patch: (_ctx, body): Partial<CredentialsTable> => ({
      ...describedChanges(body),
      ...(body.acl != null && { acl: JSON.stringify(readAcl(body.acl)) }),
    }),

    toApi: (row: CredentialsTable) => ({
      id: row.id,
      created_at: row.created_at,
      description: row.description,
      metadata: row.metadata,
      token: null,
      acl: JSON.parse(row.acl) as string[],
      owner_id: row.owner_id,
    }),

    hooks: {
      afterCommit(_ctx, operation, row) {
        if (operation === 'delete') credentialDeleted?.(row.id);
      },
    },
  });
