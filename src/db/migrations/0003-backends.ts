// Frozen: the five backend kinds, and the links from failover and weighted backends to their
// children. Maps and lists inside a row (labels, headers) are JSON text in both stores.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';
import { idType } from './types.js';

export const BACKEND_TABLES = ['backends_tunnel_group', 'backends_http_response', 'backends_static', 'backends_failover', 'backends_weighted'] as const;

export function backends(dialect: Dialect) {
  const id = idType(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const table = (name: (typeof BACKEND_TABLES)[number]) =>
        db.schema
          .createTable(name)
          .addColumn('id', id, (c) => c.primaryKey())
          .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
          .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
          .addColumn('metadata', 'text', (c) => c.notNull().defaultTo(''))
          .addColumn('created_at', 'text', (c) => c.notNull());

      await table('backends_tunnel_group')
        .addColumn('labels', 'text', (c) => c.notNull())
        .execute();
      await table('backends_http_response')
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('headers', 'text', (c) => c.notNull())
        .addColumn('status_code', 'integer', (c) => c.notNull())
        .execute();
      await table('backends_static')
        .addColumn('address', 'text', (c) => c.notNull())
        .addColumn('tls_enabled', 'boolean', (c) => c.notNull())
        .execute();
      await table('backends_failover').execute();
      await table('backends_weighted').execute();
      for (const name of BACKEND_TABLES) await db.schema.createIndex(`${name}_account_id_id_idx`).on(name).columns(['account_id', 'id']).execute();

      await db.schema
        .createTable('backend_links')
        .addColumn('parent_id', id, (c) => c.notNull())
        .addColumn('child_id', id, (c) => c.notNull())
        .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('weight', 'integer')
        .addPrimaryKeyConstraint('backend_links_pkey', ['parent_id', 'child_id'])
        .execute();
      await db.schema.createIndex('backend_links_child_id_idx').on('backend_links').column('child_id').execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('backend_links').execute();
      for (const name of BACKEND_TABLES) await db.schema.dropTable(name).execute();
    },
  };
}
