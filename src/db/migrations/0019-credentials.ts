// Frozen: credentials, the authtokens agents present when they dial in. As with API keys, only a
// SHA-256 hash of the token's secret is kept; the ACL is a JSON array of rules in their stored form.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';
import { idType } from './types.js';

export function credentials(dialect: Dialect) {
  const id = idType(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('credentials')
        .addColumn('id', id, (c) => c.primaryKey())
        .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('owner_id', id, (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('metadata', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('acl', 'text', (c) => c.notNull())
        .addColumn('secret_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('credentials_account_id_id_idx').on('credentials').columns(['account_id', 'id']).execute();
      await db.schema.createIndex('credentials_owner_id_idx').on('credentials').column('owner_id').execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('credentials').execute();
    },
  };
}
