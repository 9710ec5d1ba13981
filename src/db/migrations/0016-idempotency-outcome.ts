// Frozen: an Idempotency-Key's claim remembers, in the transaction of the change its request
// made, the resource that change acted on (src/crud/audit.ts). A request whose change committed
// but whose answer was lost (the database's connection broke as it committed) is then known as
// carried out, and a retry with the key is told so instead of making the change again.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';
import { idType } from './types.js';

export function idempotencyOutcome(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      // null until the request's change commits.
      await db.schema.alterTable('idempotency_keys').addColumn('resource_id', idType(dialect)).execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('idempotency_keys').dropColumn('resource_id').execute();
    },
  };
}
