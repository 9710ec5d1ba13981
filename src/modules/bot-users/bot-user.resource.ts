// Bot users own API keys for automation that must outlive staff changes. They act as
// developers; only admins manage them. Deleting a bot deletes its keys in the same transaction.
import { errors } from '../../core/errors.js';
import { defineResource } from '../../crud/resource.js';
import { toBool, type BotUsersTable } from '../../db/schema.js';
import type { Authenticator } from '../../http/auth.js';
import type { Store } from '../../db/store.js';
import { BotUser, BotUserCreate, BotUserUpdate } from './bot-user.schema.js';

export function botUsersResource(store: Store, auth: Authenticator) {
  return defineResource(store, {
    kind: 'bot_user',
    title: 'bot user',
    prefix: 'bot',
    path: '/bot_users',
    listKey: 'bot_users',
    table: 'bot_users',
    schemas: { resource: BotUser, create: BotUserCreate, update: BotUserUpdate },
    adminOnlyWrites: 'create, update or delete bot users',

    prepare: (_ctx, body) => ({ row: { name: body.name, active: body.active ?? true } }),

    toApi: (row: BotUsersTable) => ({
      id: row.id,
      name: row.name,
      active: toBool(row.active),
      created_at: row.created_at,
    }),

    hooks: {
      async beforeDelete(trx, ctx, row) {
        await trx.deleteFrom('api_keys').where('account_id', '=', ctx.scope.accountId).where('owner_id', '=', row.id).execute();
      },
      afterCommit(_ctx, operation) {
        if (operation !== 'create') auth.invalidate();
      },
      onUniqueViolation(target, row) {
        return target === 'bot_users_account_id_name_key' ? errors.botNameTaken({ name: String(row.name) }) : undefined;
      },
    },
  });
}
