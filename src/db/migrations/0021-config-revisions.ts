// Frozen: each account's configuration revision, bumped in the transaction of every change made
// through the API, so that what serves traffic (on any instance) can tell that an account's
// edges, routes, backends or modules changed, and which revision it has applied.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';
import { idType } from './types.js';

export function configRevisions(dialect: Dialect) {
  const id = idType(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('config_revisions')
        .addColumn('account_id', id, (c) => c.primaryKey().references('accounts.id').onDelete('cascade'))
        .addColumn('revision', 'integer', (c) => c.notNull())
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('config_revisions').execute();
    },
  };
}
