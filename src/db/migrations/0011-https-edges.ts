// Frozen: HTTPS edges and their routes. An edge's hostports are rows of `edge_domains` (shared
// with TLS edges); its modules and its routes' modules are rows of `modules`.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';
import { idType } from './types.js';

export function httpsEdges(dialect: Dialect) {
  const id = idType(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('https_edges')
        .addColumn('id', id, (c) => c.primaryKey())
        .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('metadata', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('https_edges_account_id_id_idx').on('https_edges').columns(['account_id', 'id']).execute();
      await db.schema
        .createTable('https_edge_routes')
        .addColumn('id', id, (c) => c.primaryKey())
        .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('edge_id', id, (c) => c.notNull().references('https_edges.id'))
        .addColumn('match_type', 'text', (c) => c.notNull())
        .addColumn('match', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('metadata', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('https_edge_routes_account_id_id_idx').on('https_edge_routes').columns(['account_id', 'id']).execute();
      // A path is matched by one route of an edge, whatever its match type.
      await db.schema.createIndex('https_edge_routes_edge_id_match_key').on('https_edge_routes').columns(['edge_id', 'match']).unique().execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      for (const table of ['https_edge_routes', 'https_edges']) await db.schema.dropTable(table).execute();
    },
  };
}
