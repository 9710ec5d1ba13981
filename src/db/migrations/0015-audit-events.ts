// Frozen: the audit log (src/crud/audit.ts). One row per mutation made over the API, written in
// the mutation's transaction: who (the API key and its owner), what (the operation id and the
// resource acted on) and when. No request body is kept, so no secret sent in one can be here.
// Rows go with their account; lists page on (account_id, id), newest first.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';
import { idType } from './types.js';

export function auditEvents(dialect: Dialect) {
  const id = idType(dialect);
  // Instants as fixed-width text, compared as text, as the jobs table's are.
  const instant = id;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('audit_events')
        .addColumn('id', id, (c) => c.primaryKey())
        .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('created_at', instant, (c) => c.notNull())
        // The operation id as the API names it: `ip_policy.create`, `tcp_edge.backend_module.replace`.
        .addColumn('operation', 'text', (c) => c.notNull())
        // Ids, not references: an event outlives what it names and never holds back its deletion.
        .addColumn('resource_id', id, (c) => c.notNull())
        .addColumn('parent_id', id)
        .addColumn('key_id', id, (c) => c.notNull())
        .addColumn('principal_id', id, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('audit_events_account_id_id_idx').on('audit_events').columns(['account_id', 'id']).execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('audit_events').execute();
    },
  };
}
