// Frozen: TCP cloud endpoints (`tcp://host:port`). Such an endpoint serves a reserved address, not
// a reserved domain: cloud_endpoints gains tcp_addr_id (the reserved address, which cannot be
// deleted while an endpoint serves it), and domain_id may be null. The view `endpoints` shows the
// address of a cloud endpoint as it shows an agent's.
//
// SQLite cannot drop a NOT NULL: there the table is rebuilt (nothing refers to it by key).
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';
import { idType } from './types.js';

const ENDPOINTS_VIEW = sql`
  create view endpoints as
    select id, account_id, 'cloud' as type, url, proto, hostport, domain_id, tcp_addr_id, null as tunnel_id,
           'global' as region, description, metadata, traffic_policy, bindings, pooling_enabled, created_at, updated_at
      from cloud_endpoints
    union all
    select id, account_id, 'ephemeral' as type, public_url as url, proto, hostport, domain_id, tcp_addr_id, tunnel_id,
           region, '' as description, metadata, '' as traffic_policy, null as bindings, 0 as pooling_enabled, created_at, created_at as updated_at
      from live_endpoints`;

export function cloudTcpEndpoints(dialect: Dialect) {
  const id = idType(dialect);
  return {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the view selects from tables this and earlier migrations make
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.dropView('endpoints').execute();
      if (dialect === 'postgres') {
        await sql`alter table cloud_endpoints alter column domain_id drop not null`.execute(db);
        await sql`alter table cloud_endpoints add column tcp_addr_id text collate "C" references reserved_addrs (id)`.execute(db);
      } else {
        await db.schema
          .createTable('cloud_endpoints_next')
          .addColumn('id', id, (c) => c.primaryKey())
          .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
          .addColumn('description', 'text', (c) => c.notNull())
          .addColumn('metadata', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('updated_at', 'text', (c) => c.notNull())
          .addColumn('url', 'text', (c) => c.notNull())
          .addColumn('proto', 'text', (c) => c.notNull())
          .addColumn('hostport', 'text', (c) => c.notNull())
          .addColumn('domain_id', id, (c) => c.references('reserved_domains.id'))
          .addColumn('traffic_policy', 'text', (c) => c.notNull())
          .addColumn('bindings', 'text', (c) => c.notNull())
          .addColumn('pooling_enabled', 'integer', (c) => c.notNull())
          .addColumn('tcp_addr_id', id, (c) => c.references('reserved_addrs.id'))
          .execute();
        await sql`insert into cloud_endpoints_next
          (id, account_id, description, metadata, created_at, updated_at, url, proto, hostport, domain_id, traffic_policy, bindings, pooling_enabled)
          select id, account_id, description, metadata, created_at, updated_at, url, proto, hostport, domain_id, traffic_policy, bindings, pooling_enabled
          from cloud_endpoints`.execute(db);
        await db.schema.dropTable('cloud_endpoints').execute();
        await sql`alter table cloud_endpoints_next rename to cloud_endpoints`.execute(db);
        await db.schema.createIndex('cloud_endpoints_account_id_id_idx').on('cloud_endpoints').columns(['account_id', 'id']).execute();
        await db.schema.createIndex('cloud_endpoints_url_key').on('cloud_endpoints').column('url').unique().execute();
        await db.schema.createIndex('cloud_endpoints_domain_id_idx').on('cloud_endpoints').column('domain_id').execute();
      }
      await db.schema.createIndex('cloud_endpoints_tcp_addr_id_idx').on('cloud_endpoints').column('tcp_addr_id').execute();
      await ENDPOINTS_VIEW.execute(db);
    },
    async down(): Promise<void> {
      throw new Error('0023-cloud-tcp-endpoints cannot be undone');
    },
  };
}
