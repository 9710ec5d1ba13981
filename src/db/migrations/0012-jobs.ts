// Frozen: background jobs (src/db/jobs.ts, src/jobs/). One row per kind and subject, written in
// the transaction of the change that needs it; runners on every instance claim due rows with a
// lease. Instants are `Date.toISOString()` text, fixed width, so that they compare as text.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';
import { idType } from './types.js';

export function jobs(dialect: Dialect) {
  const id = idType(dialect);
  // Byte order for instants too: PostgreSQL's default collation may weigh the punctuation of
  // `2026-01-02T03:04:05.678Z` apart from its digits; "C" compares them as SQLite does.
  const instant = id;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('jobs')
        .addColumn('id', id, (c) => c.primaryKey())
        .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('subject_id', id, (c) => c.notNull())
        .addColumn('run_at', instant, (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('lease_owner', 'text')
        .addColumn('lease_until', instant)
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      // One job per kind and subject: enqueueing again replaces it.
      await db.schema.createIndex('jobs_kind_subject_id_key').on('jobs').columns(['kind', 'subject_id']).unique().execute();
      // Claims read the due rows in run_at order.
      await db.schema.createIndex('jobs_run_at_idx').on('jobs').column('run_at').execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('jobs').execute();
    },
  };
}
