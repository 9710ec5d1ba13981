// Frozen: agent ingresses get `domain_reversed` (labels in reverse order, as reserved domains
// have it), so that the names another account holds under an ingress domain are found with an
// index range: an agent ingress domain and every name under it belong to one account.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';
import { idType } from './types.js';

const reversed = (name: string) => name.split('.').reverse().join('.');

export function agentIngressReversed(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      // '' only until the rows below are filled in; SQLite adds a NOT NULL column only with a default.
      await db.schema
        .alterTable('agent_ingresses')
        .addColumn('domain_reversed', idType(dialect), (c) => c.notNull().defaultTo(''))
        .execute();
      // Reversing labels in SQL differs per store; ingresses are few (one per delegated domain).
      const rows = await sql<{ id: string; domain: string }>`select id, domain from agent_ingresses`.execute(db);
      for (const row of rows.rows) await sql`update agent_ingresses set domain_reversed = ${reversed(row.domain)} where id = ${row.id}`.execute(db);
      // Every insert names the column: on PostgreSQL, one that did not would fail rather than store ''.
      if (dialect === 'postgres') await sql`alter table agent_ingresses alter column domain_reversed drop default`.execute(db);
      await db.schema.createIndex('agent_ingresses_domain_reversed_idx').on('agent_ingresses').column('domain_reversed').execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('agent_ingresses_domain_reversed_idx').execute();
      await db.schema.alterTable('agent_ingresses').dropColumn('domain_reversed').execute();
    },
  };
}
