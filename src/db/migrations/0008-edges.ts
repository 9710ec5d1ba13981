// Frozen: reserved TCP addresses, TCP edges with the addresses they serve, and the modules of
// edges (and, later, routes and endpoint configurations): one row per module of an owner, its
// value as JSON, and the ids it names in a table of their own, so that deleting a backend or an
// IP policy that a module names is refused like any other reference.
import type { CreateTableBuilder, Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';
import { idType } from './types.js';

export function edges(dialect: Dialect) {
  const id = idType(dialect);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const owned = (t: CreateTableBuilder<any, any>) =>
    t
      .addColumn('id', id, (c) => c.primaryKey())
      .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('metadata', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('created_at', 'text', (c) => c.notNull());

  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await owned(db.schema.createTable('reserved_addrs'))
        .addColumn('addr', id, (c) => c.notNull())
        .addColumn('host', id, (c) => c.notNull())
        .addColumn('port', 'integer', (c) => c.notNull())
        .addColumn('region', 'text', (c) => c.notNull())
        .addColumn('endpoint_configuration_id', id, (c) => c.references('endpoint_configurations.id'))
        .execute();
      await owned(db.schema.createTable('tcp_edges')).execute();
      await db.schema
        .createTable('tcp_edge_hostports')
        .addColumn('tcp_edge_id', id, (c) => c.notNull().references('tcp_edges.id'))
        .addColumn('reserved_addr_id', id, (c) => c.notNull().references('reserved_addrs.id'))
        .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('position', 'integer', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('modules')
        .addColumn('owner_id', id, (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('value', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('modules_pkey', ['owner_id', 'name'])
        .execute();
      await db.schema
        .createTable('module_refs')
        .addColumn('owner_id', id, (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('target_id', id, (c) => c.notNull())
        .addColumn('position', 'integer', (c) => c.notNull())
        .execute();

      for (const table of ['reserved_addrs', 'tcp_edges'])
        await db.schema.createIndex(`${table}_account_id_id_idx`).on(table).columns(['account_id', 'id']).execute();
      await db.schema.createIndex('reserved_addrs_addr_key').on('reserved_addrs').column('addr').unique().execute();
      await db.schema.createIndex('reserved_addrs_host_port_idx').on('reserved_addrs').columns(['host', 'port']).execute();
      await db.schema.createIndex('reserved_addrs_endpoint_configuration_id_idx').on('reserved_addrs').column('endpoint_configuration_id').execute();
      await db.schema.createIndex('tcp_edge_hostports_reserved_addr_id_key').on('tcp_edge_hostports').column('reserved_addr_id').unique().execute();
      await db.schema.createIndex('tcp_edge_hostports_tcp_edge_id_idx').on('tcp_edge_hostports').column('tcp_edge_id').execute();
      await db.schema.createIndex('modules_account_id_owner_id_idx').on('modules').columns(['account_id', 'owner_id']).execute();
      await db.schema.createIndex('module_refs_owner_id_idx').on('module_refs').columns(['owner_id', 'name']).execute();
      await db.schema.createIndex('module_refs_target_id_idx').on('module_refs').column('target_id').execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      for (const table of ['module_refs', 'modules', 'tcp_edge_hostports', 'tcp_edges', 'reserved_addrs']) await db.schema.dropTable(table).execute();
    },
  };
}
