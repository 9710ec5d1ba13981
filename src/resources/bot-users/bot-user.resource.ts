// Bot users own API keys for automation that must outlive staff changes. They act as
// developers; only admins manage them. Deleting a bot deletes its keys in the same transaction
// (the keys' owner_id reference cascades).
import { defineResource } from '../../crud/definition.js';
import { adminWrites } from '../../crud/authorization.js';
import { toBool } from '../../db/schema.js';
import type { BotUsersTable } from './bot-user.table.js';
import type { KeyAuthenticator } from '../api-keys/api-key.auth.js';
import { botUserCatalogue, botUserErrors } from './bot-user.errors.js';
import { BotUser, BotUserCreate, BotUserUpdate } from './bot-user.schema.js';

export function botUserDefinition(auth: KeyAuthenticator) {
  return defineResource({
    kind: 'bot_user',
    title: 'bot user',
    errors: botUserCatalogue,
    prefix: 'bot',
    path: '/bot_users',
    listKey: 'bot_users',
    table: 'bot_users',
    schemas: { resource: BotUser, create: BotUserCreate, update: BotUserUpdate },
    authorize: adminWrites('create, update or delete bot users'),

    prepare: (_ctx, body) => ({ row: { name: body.name, active: body.active ?? true } }),

    toApi: (row: BotUsersTable) => ({
      id: row.id,
      name: row.name,
      active: toBool(row.active),
      created_at: row.created_at,
    }),

    hooks: {
      afterCommit(_ctx, operation) {
        if (operation !== 'create') auth.invalidate();
      },
      onUniqueViolation(target, row) {
        return target === 'bot_users_account_id_name_key' ? botUserErrors.botNameTaken({ name: String(row.name) }) : undefined;
      },
    },
  });
}
