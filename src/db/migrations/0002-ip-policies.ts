// Frozen: IP policies, their rules, IP restrictions, and the per-account revision that tells
// every instance when to recompile its IP matchers.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';
import { idType } from './types.js';

export function ipPolicies(dialect: Dialect) {
  const id = idType(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('ip_policies')
        .addColumn('id', id, (c) => c.primaryKey())
        .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('metadata', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('ip_policies_account_id_id_idx').on('ip_policies').columns(['account_id', 'id']).execute();

      await db.schema
        .createTable('ip_policy_rules')
        .addColumn('id', id, (c) => c.primaryKey())
        .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('ip_policy_id', id, (c) => c.notNull().references('ip_policies.id').onDelete('cascade'))
        .addColumn('cidr', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('metadata', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('ip_policy_rules_account_id_id_idx').on('ip_policy_rules').columns(['account_id', 'id']).execute();
      await db.schema.createIndex('ip_policy_rules_ip_policy_id_cidr_key').on('ip_policy_rules').columns(['ip_policy_id', 'cidr']).unique().execute();

      await db.schema
        .createTable('ip_restrictions')
        .addColumn('id', id, (c) => c.primaryKey())
        .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('enforced', 'boolean', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('metadata', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('ip_restrictions_account_id_id_idx').on('ip_restrictions').columns(['account_id', 'id']).execute();
      await db.schema.createIndex('ip_restrictions_account_id_type_key').on('ip_restrictions').columns(['account_id', 'type']).unique().execute();

      await db.schema
        .createTable('ip_restriction_policies')
        .addColumn('ip_restriction_id', id, (c) => c.notNull().references('ip_restrictions.id').onDelete('cascade'))
        .addColumn('ip_policy_id', id, (c) => c.notNull().references('ip_policies.id'))
        .addColumn('position', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('ip_restriction_policies_pkey', ['ip_restriction_id', 'ip_policy_id'])
        .execute();
      await db.schema.createIndex('ip_restriction_policies_ip_policy_id_idx').on('ip_restriction_policies').column('ip_policy_id').execute();

      await db.schema
        .createTable('ip_revisions')
        .addColumn('account_id', id, (c) => c.primaryKey().references('accounts.id').onDelete('cascade'))
        .addColumn('revision', 'integer', (c) => c.notNull())
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      for (const table of ['ip_revisions', 'ip_restriction_policies', 'ip_restrictions', 'ip_policy_rules', 'ip_policies'])
        await db.schema.dropTable(table).execute();
    },
  };
}
