// Frozen: TLS edges, and the reserved domains edges serve (TLS edges now, HTTPS edges later: a
// domain is served by one edge of either kind at most, so both share one table).
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';
import { idType } from './types.js';

export function tlsEdges(dialect: Dialect) {
  const id = idType(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('tls_edges')
        .addColumn('id', id, (c) => c.primaryKey())
        .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('metadata', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('tls_edges_account_id_id_idx').on('tls_edges').columns(['account_id', 'id']).execute();
      await db.schema
        .createTable('edge_domains')
        .addColumn('edge_id', id, (c) => c.notNull())
        .addColumn('reserved_domain_id', id, (c) => c.notNull().references('reserved_domains.id'))
        .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('position', 'integer', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('edge_domains_reserved_domain_id_key').on('edge_domains').column('reserved_domain_id').unique().execute();
      await db.schema.createIndex('edge_domains_edge_id_idx').on('edge_domains').column('edge_id').execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      for (const table of ['edge_domains', 'tls_edges']) await db.schema.dropTable(table).execute();
    },
  };
}
