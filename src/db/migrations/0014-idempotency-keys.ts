// Frozen: the responses of POSTs sent with an Idempotency-Key (src/http/idempotency.ts), kept 24 h.
// The key is the account's: (account_id, key) is the primary key, so two requests with one key,
// on any instances, cannot both claim it.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';
import { idType } from './types.js';

export function idempotencyKeys(dialect: Dialect) {
  const id = idType(dialect);
  // Instants as fixed-width text, compared as text, as the jobs table's are.
  const instant = id;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('idempotency_keys')
        .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('request_hash', 'text', (c) => c.notNull())
        // null while the first request is still being answered.
        .addColumn('status', 'integer')
        .addColumn('body', 'text')
        .addColumn('created_at', instant, (c) => c.notNull())
        // A claim not answered by then was abandoned (its instance died): another request may take it.
        .addColumn('lease_until', instant, (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_key', ['account_id', 'key'])
        .execute();
      await db.schema.createIndex('idempotency_keys_created_at_idx').on('idempotency_keys').column('created_at').execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('idempotency_keys').execute();
    },
  };
}
