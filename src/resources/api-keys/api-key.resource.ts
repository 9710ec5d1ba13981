// API keys: the token is made once, shown once, and stored only as a hash of its secret.
// Developers and bots manage their own keys; admins manage every key of the account.
import { errors } from '../../core/errors.js';
import { describedColumns } from '../../core/schema.js';
import { defineResource } from '../../crud/definition.js';
import { ownerManaged } from '../../crud/authorization.js';
import type { ApiKeysTable } from './api-key.table.js';
import type { KeyAuthenticator } from './api-key.auth.js';
import { ApiKey, ApiKeyCreate, ApiKeyUpdate } from './api-key.schema.js';
import { newKeyMaterial } from './api-key.token.js';

export function apiKeyDefinition(auth: KeyAuthenticator) {
  return defineResource({
    kind: 'api_key',
    title: 'API key',
    prefix: 'ak',
    path: '/api_keys',
    listKey: 'keys',
    table: 'api_keys',
    schemas: { resource: ApiKey, create: ApiKeyCreate, update: ApiKeyUpdate },
    immutable: ['owner_id'],
    shownOnce: ['token'],
    references: [
      { in: 'column', column: 'owner_id', kinds: ['user', 'bot_user'], notFound: (id) => errors.ownerNotInAccount({ ownerId: id }), onDelete: 'cascade' },
    ],

    authorize: ownerManaged({ otherOwner: () => errors.ownerNotAllowed(), notOwner: (id) => errors.notKeyOwner({ id }) }),

    prepare(ctx, body) {
      const { id, token, secret_hash } = newKeyMaterial();
      return { id, row: { owner_id: body.owner_id ?? ctx.principal.id, ...describedColumns(body), secret_hash }, reveal: { token } };
    },

    toApi: (row: ApiKeysTable) => ({
      id: row.id,
      description: row.description,
      metadata: row.metadata,
      created_at: row.created_at,
      token: null,
      owner_id: row.owner_id,
    }),

    hooks: {
      afterCommit(_ctx, operation, row) {
        if (operation === 'delete') auth.invalidate(row.id);
      },
    },
  });
}
