// Frozen: cloud endpoints (`POST /endpoints`), and the view `endpoints` the API lists: the
// account's cloud endpoints beside the endpoints its live agents bound (`live_endpoints`), under
// the same columns, so that one page, ordered by id, holds both.
//
// A cloud endpoint's URL is unique across accounts (its host is a reserved domain, or its address a
// reserved address, which are); the reserved domain or address it serves cannot be deleted while
// it serves it (the API's in-use rule, and the references here). An HTTP(S) endpoint has a domain
// and no address, a TCP one an address and no domain.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';
import { idType } from './types.js';

export function cloudEndpoints(dialect: Dialect) {
  const id = idType(dialect);
  return {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the view selects from tables this and earlier migrations make
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('cloud_endpoints')
        .addColumn('id', id, (c) => c.primaryKey())
        .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        // `https://name`, as the API shows it: scheme and lower-case host, no port.
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('proto', 'text', (c) => c.notNull())
        .addColumn('hostport', 'text', (c) => c.notNull())
        .addColumn('domain_id', id, (c) => c.references('reserved_domains.id'))
        .addColumn('tcp_addr_id', id, (c) => c.references('reserved_addrs.id'))
        // The document as sent (YAML or JSON), checked when it was set.
        .addColumn('traffic_policy', 'text', (c) => c.notNull())
        // A JSON list of strings: ["public"].
        .addColumn('bindings', 'text', (c) => c.notNull())
        .addColumn('pooling_enabled', 'integer', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('cloud_endpoints_account_id_id_idx').on('cloud_endpoints').columns(['account_id', 'id']).execute();
      await db.schema.createIndex('cloud_endpoints_url_key').on('cloud_endpoints').column('url').unique().execute();
      await db.schema.createIndex('cloud_endpoints_domain_id_idx').on('cloud_endpoints').column('domain_id').execute();
      await db.schema.createIndex('cloud_endpoints_tcp_addr_id_idx').on('cloud_endpoints').column('tcp_addr_id').execute();

      // The agents' endpoints have no description, policy or bindings of their own: '' and null,
      // which the API shows as the published API does (`bindings` from the name).
      await sql`
        create view endpoints as
          select id, account_id, 'cloud' as type, url, proto, hostport, domain_id, tcp_addr_id, null as tunnel_id,
                 'global' as region, description, metadata, traffic_policy, bindings, pooling_enabled, created_at, updated_at
            from cloud_endpoints
          union all
          select id, account_id, 'ephemeral' as type, public_url as url, proto, hostport, domain_id, tcp_addr_id, tunnel_id,
                 region, '' as description, metadata, '' as traffic_policy, null as bindings, 0 as pooling_enabled, created_at, created_at as updated_at
            from live_endpoints`.execute(db);
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropView('endpoints').execute();
      await db.schema.dropTable('cloud_endpoints').execute();
    },
  };
}
