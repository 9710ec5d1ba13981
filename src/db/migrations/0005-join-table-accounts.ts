// Frozen: every account-owned table carries account_id, join tables included, so that the
// scoped executor can add it to every query. ip_restriction_policies was the one without.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';
import { idType } from './types.js';

export function joinTableAccounts(dialect: Dialect) {
  const id = idType(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect === 'postgres') {
        await sql`alter table ip_restriction_policies add column account_id text collate "C" references accounts (id) on delete cascade`.execute(db);
        await sql`update ip_restriction_policies p set account_id = r.account_id from ip_restrictions r where r.id = p.ip_restriction_id`.execute(db);
        await sql`alter table ip_restriction_policies alter column account_id set not null`.execute(db);
      } else {
        // SQLite cannot add a NOT NULL column with a reference: rebuild the table.
        await db.schema
          .createTable('ip_restriction_policies_next')
          .addColumn('ip_restriction_id', id, (c) => c.notNull().references('ip_restrictions.id').onDelete('cascade'))
          .addColumn('ip_policy_id', id, (c) => c.notNull().references('ip_policies.id'))
          .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
          .addColumn('position', 'integer', (c) => c.notNull())
          .addPrimaryKeyConstraint('ip_restriction_policies_pkey', ['ip_restriction_id', 'ip_policy_id'])
          .execute();
        await sql`insert into ip_restriction_policies_next (ip_restriction_id, ip_policy_id, account_id, position)
          select p.ip_restriction_id, p.ip_policy_id, r.account_id, p.position
          from ip_restriction_policies p join ip_restrictions r on r.id = p.ip_restriction_id`.execute(db);
        await db.schema.dropTable('ip_restriction_policies').execute();
        await sql`alter table ip_restriction_policies_next rename to ip_restriction_policies`.execute(db);
        await db.schema.createIndex('ip_restriction_policies_ip_policy_id_idx').on('ip_restriction_policies').column('ip_policy_id').execute();
      }
      await db.schema.createIndex('ip_restriction_policies_account_id_idx').on('ip_restriction_policies').column('account_id').execute();
    },
    async down(): Promise<void> {
      throw new Error('0005-join-table-accounts cannot be undone');
    },
  };
}
