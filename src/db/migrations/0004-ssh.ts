// Frozen: SSH certificate authorities (private key sealed), and the user and host certificates
// they signed. Lists and maps inside a row are JSON text in both stores.
import type { CreateTableBuilder, Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';
import { idType } from './types.js';

export function ssh(dialect: Dialect) {
  const id = idType(dialect);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const certificateColumns = (t: CreateTableBuilder<any, any>) =>
    t
      .addColumn('id', id, (c) => c.primaryKey())
      .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('metadata', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('ssh_certificate_authority_id', id, (c) => c.notNull().references('ssh_certificate_authorities.id'))
      .addColumn('public_key', 'text', (c) => c.notNull())
      .addColumn('key_type', 'text', (c) => c.notNull())
      .addColumn('principals', 'text', (c) => c.notNull())
      .addColumn('valid_after', 'text', (c) => c.notNull())
      .addColumn('valid_until', 'text', (c) => c.notNull())
      .addColumn('serial', 'text', (c) => c.notNull())
      .addColumn('certificate', 'text', (c) => c.notNull());

  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('ssh_certificate_authorities')
        .addColumn('id', id, (c) => c.primaryKey())
        .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('metadata', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('key_type', 'text', (c) => c.notNull())
        .addColumn('public_key', 'text', (c) => c.notNull())
        .addColumn('private_key_sealed', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('ssh_certificate_authorities_account_id_id_idx').on('ssh_certificate_authorities').columns(['account_id', 'id']).execute();

      await certificateColumns(db.schema.createTable('ssh_user_certificates'))
        .addColumn('critical_options', 'text', (c) => c.notNull())
        .addColumn('extensions', 'text', (c) => c.notNull())
        .execute();
      await certificateColumns(db.schema.createTable('ssh_host_certificates')).execute();
      for (const table of ['ssh_user_certificates', 'ssh_host_certificates']) {
        await db.schema.createIndex(`${table}_account_id_id_idx`).on(table).columns(['account_id', 'id']).execute();
        await db.schema.createIndex(`${table}_ssh_certificate_authority_id_idx`).on(table).column('ssh_certificate_authority_id').execute();
      }
    },
    async down(db: Kysely<unknown>): Promise<void> {
      for (const table of ['ssh_host_certificates', 'ssh_user_certificates', 'ssh_certificate_authorities']) await db.schema.dropTable(table).execute();
    },
  };
}
