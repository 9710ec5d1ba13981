// Frozen: certificate automation (src/certificates/). The ACME account of each
// directory (its key sealed), the challenge answers the built-in HTTP-01 responder and DNS server
// serve (read by every instance, so any of them may answer the CA), and the certificate an agent
// ingress was issued (a reserved domain's is its `certificate_id`).
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';
import { idType } from './types.js';

export function certificateAutomation(dialect: Dialect) {
  const id = idType(dialect);
  // Compared as text (expiry), as the jobs table's instants are.
  const instant = id;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('acme_accounts')
        .addColumn('directory_url', 'text', (c) => c.primaryKey())
        .addColumn('key_sealed', 'text', (c) => c.notNull())
        .addColumn('account_url', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('acme_challenges')
        .addColumn('id', id, (c) => c.primaryKey())
        .addColumn('type', 'text', (c) => c.notNull())
        // The HTTP-01 token, or the DNS name whose TXT record answers a DNS-01 challenge.
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('subject_id', id, (c) => c.notNull())
        .addColumn('expires_at', instant, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('acme_challenges_type_name_idx').on('acme_challenges').columns(['type', 'name']).execute();
      await db.schema
        .alterTable('agent_ingresses')
        .addColumn('certificate_id', id, (c) => c.references('tls_certificates.id'))
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('agent_ingresses').dropColumn('certificate_id').execute();
      await db.schema.dropTable('acme_challenges').execute();
      await db.schema.dropTable('acme_accounts').execute();
    },
  };
}
