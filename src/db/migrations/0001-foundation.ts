// Frozen: accounts, users, bot users and API keys. Never edit a migration that has shipped;
// add a new one.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';
import { idType } from './types.js';

export function foundation(dialect: Dialect) {
  const id = idType(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('accounts')
        .addColumn('id', id, (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('users')
        .addColumn('id', id, (c) => c.primaryKey())
        .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('users_account_id_id_idx').on('users').columns(['account_id', 'id']).execute();

      await db.schema
        .createTable('bot_users')
        .addColumn('id', id, (c) => c.primaryKey())
        .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('active', 'boolean', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('bot_users_account_id_id_idx').on('bot_users').columns(['account_id', 'id']).execute();
      await db.schema.createIndex('bot_users_account_id_name_key').on('bot_users').columns(['account_id', 'name']).unique().execute();

      await db.schema
        .createTable('api_keys')
        .addColumn('id', id, (c) => c.primaryKey())
        .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('owner_id', id, (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('metadata', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('secret_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('api_keys_account_id_id_idx').on('api_keys').columns(['account_id', 'id']).execute();
      await db.schema.createIndex('api_keys_owner_id_idx').on('api_keys').column('owner_id').execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      for (const table of ['api_keys', 'bot_users', 'users', 'accounts']) await db.schema.dropTable(table).execute();
    },
  };
}
