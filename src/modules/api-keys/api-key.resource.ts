// API keys: the token is made once, shown once, and stored only as a hash of its secret.
import { errors } from '../../core/errors.js';
import { newId, randomBase62 } from '../../core/ids.js';
import type { RequestContext } from '../../core/context.js';
import { describedColumns } from '../../core/schema.js';
import { defineResource } from '../../crud/resource.js';
import { exists } from '../../crud/store.js';
import type { ApiKeysTable } from '../../db/schema.js';
import type { Executor, Scope, Store } from '../../db/store.js';
import { hashSecret, type Authenticator } from '../../http/auth.js';
import { ApiKey, ApiKeyCreate, ApiKeyUpdate } from './api-key.schema.js';

const SECRET_LENGTH = 40;

/** A new key id, its token (shown once) and the hash that is stored instead. */
export function newKeyMaterial(): { id: string; token: string; secret_hash: string } {
  const id = newId('ak');
  const secret = randomBase62(SECRET_LENGTH);
  return { id, token: `${id.slice('ak_'.length)}_${secret}`, secret_hash: hashSecret(secret) };
}

/** True when `ownerId` is a user or bot user of the account. */
export async function ownerExists(executor: Executor, scope: Scope, ownerId: string): Promise<boolean> {
  if (ownerId.startsWith('usr_')) return exists(executor, scope, 'users', ownerId);
  if (ownerId.startsWith('bot_')) return exists(executor, scope, 'bot_users', ownerId);
  return false;
}

export function apiKeysResource(store: Store, auth: Authenticator) {
  return defineResource(store, {
    kind: 'api_key',
    title: 'API key',
    prefix: 'ak',
    path: '/api_keys',
    listKey: 'keys',
    table: 'api_keys',
    schemas: { resource: ApiKey, create: ApiKeyCreate, update: ApiKeyUpdate },
    immutable: ['owner_id'],

    prepare(ctx: RequestContext, body) {
      const ownerId = body.owner_id ?? ctx.principal.id;
      if (ownerId !== ctx.principal.id && ctx.principal.role !== 'admin') throw errors.ownerNotAllowed();
      const { id, token, secret_hash } = newKeyMaterial();
      return {
        id,
        row: { owner_id: ownerId, ...describedColumns(body), secret_hash },
        reveal: { token },
      };
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
      async beforeCreate(trx, ctx, row) {
        if (row.owner_id !== ctx.principal.id && !(await ownerExists(trx, ctx.scope, row.owner_id))) {
          throw errors.ownerNotInAccount({ ownerId: row.owner_id });
        }
      },
      authorize(ctx, _operation, row) {
        if (ctx.principal.role !== 'admin' && row.owner_id !== ctx.principal.id) throw errors.notKeyOwner({ id: row.id });
      },
      afterCommit(_ctx, operation, row) {
        if (operation === 'delete') auth.invalidate(row.id);
      },
    },
  });
}
