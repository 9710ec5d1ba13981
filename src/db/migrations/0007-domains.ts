// Frozen: TLS certificates (private key sealed), endpoint configurations, reserved domains and
// agent ingresses. A domain name is unique across all accounts; `domain_reversed` (labels in
// reverse order, `com.example.app`) finds the names under a base with an index range, for the
// wildcard checks. Domains and ingresses carry the same certificate management columns.
import type { CreateTableBuilder, Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';
import { idType } from './types.js';

export function domains(dialect: Dialect) {
  const id = idType(dialect);
  // Byte order for names too, so that the range of names under a base is the same in both stores.
  const name = id;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const owned = (t: CreateTableBuilder<any, any>) =>
    t
      .addColumn('id', id, (c) => c.primaryKey())
      .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('metadata', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('created_at', 'text', (c) => c.notNull());
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const certificateManagement = (t: CreateTableBuilder<any, any>) =>
    t
      .addColumn('cert_authority', 'text')
      .addColumn('cert_key_type', 'text')
      .addColumn('cert_renews_at', 'text')
      .addColumn('cert_job_started_at', 'text')
      .addColumn('cert_job_msg', 'text')
      .addColumn('cert_job_error_code', 'text')
      .addColumn('cert_job_retries_at', 'text');

  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await owned(db.schema.createTable('tls_certificates'))
        .addColumn('certificate_pem', 'text', (c) => c.notNull())
        .addColumn('private_key_sealed', 'text', (c) => c.notNull())
        .addColumn('private_key_type', 'text', (c) => c.notNull())
        .addColumn('dns_names', 'text', (c) => c.notNull())
        .addColumn('details', 'text', (c) => c.notNull())
        .addColumn('not_after', 'text', (c) => c.notNull())
        .addColumn('issued_at', 'text')
        .execute();

      await owned(db.schema.createTable('endpoint_configurations'))
        .addColumn('type', 'text', (c) => c.notNull())
        .execute();

      await certificateManagement(owned(db.schema.createTable('reserved_domains')))
        .addColumn('domain', name, (c) => c.notNull())
        .addColumn('domain_reversed', name, (c) => c.notNull())
        .addColumn('region', 'text')
        .addColumn('cname_target', 'text')
        .addColumn('acme_challenge_cname_target', 'text')
        .addColumn('certificate_id', id, (c) => c.references('tls_certificates.id'))
        .addColumn('http_endpoint_configuration_id', id, (c) => c.references('endpoint_configurations.id'))
        .addColumn('https_endpoint_configuration_id', id, (c) => c.references('endpoint_configurations.id'))
        .execute();

      await certificateManagement(owned(db.schema.createTable('agent_ingresses')))
        .addColumn('domain', name, (c) => c.notNull())
        .execute();

      for (const table of ['tls_certificates', 'endpoint_configurations', 'reserved_domains', 'agent_ingresses'])
        await db.schema.createIndex(`${table}_account_id_id_idx`).on(table).columns(['account_id', 'id']).execute();
      await db.schema.createIndex('reserved_domains_domain_key').on('reserved_domains').column('domain').unique().execute();
      await db.schema.createIndex('reserved_domains_domain_reversed_idx').on('reserved_domains').column('domain_reversed').execute();
      for (const column of ['certificate_id', 'http_endpoint_configuration_id', 'https_endpoint_configuration_id'])
        await db.schema.createIndex(`reserved_domains_${column}_idx`).on('reserved_domains').column(column).execute();
      await db.schema.createIndex('agent_ingresses_domain_key').on('agent_ingresses').column('domain').unique().execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      for (const table of ['agent_ingresses', 'reserved_domains', 'endpoint_configurations', 'tls_certificates']) await db.schema.dropTable(table).execute();
    },
  };
}
