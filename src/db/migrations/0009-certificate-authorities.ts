// Frozen: certificate authorities that mutual TLS modules trust (their certificate only; no key).
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';
import { idType } from './types.js';

export function certificateAuthorities(dialect: Dialect) {
  const id = idType(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('certificate_authorities')
        .addColumn('id', id, (c) => c.primaryKey())
        .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('metadata', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('ca_pem', 'text', (c) => c.notNull())
        .addColumn('details', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('certificate_authorities_account_id_id_idx').on('certificate_authorities').columns(['account_id', 'id']).execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('certificate_authorities').execute();
    },
  };
}
