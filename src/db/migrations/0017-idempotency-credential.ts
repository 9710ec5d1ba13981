// Frozen: an Idempotency-Key belongs to the API key that sent it, not to the account, so another
// credential of the account (a lower role, say) can never be handed the answer of another's
// request. The table is made anew with the credential in its primary key. Rows kept until now
// are dropped: they were matched per account, and an API key's recorded answer held its token.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';
import { idType } from './types.js';

function createTable(db: Kysely<unknown>, dialect: Dialect, withCredential: boolean) {
  const id = idType(dialect);
  // Instants as fixed-width text, compared as text, as the jobs table's are.
  const instant = id;
  let table = db.schema.createTable('idempotency_keys').addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'));
  // No reference to api_keys: a key deleted while its request is answered must not fail the claim.
  if (withCredential) table = table.addColumn('api_key_id', id, (c) => c.notNull());
  return (
    table
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('request_hash', 'text', (c) => c.notNull())
      .addColumn('status', 'integer')
      .addColumn('body', 'text')
      .addColumn('created_at', instant, (c) => c.notNull())
      .addColumn('lease_until', instant, (c) => c.notNull())
      .addColumn('resource_id', id)
      // The builder's types do not follow the conditional column above: the names are checked by the tests' migrations.
      .addPrimaryKeyConstraint('idempotency_keys_key', (withCredential ? ['account_id', 'api_key_id', 'key'] : ['account_id', 'key']) as ['account_id', 'key'])
      .execute()
  );
}

async function recreate(db: Kysely<unknown>, dialect: Dialect, withCredential: boolean): Promise<void> {
  // On SQLite the dropped rows' pages are zeroed, not just freed: they held tokens.
  if (dialect === 'sqlite') await sql`pragma secure_delete = on`.execute(db);
  await db.schema.dropTable('idempotency_keys').execute();
  if (dialect === 'sqlite') await sql`pragma secure_delete = off`.execute(db);
  await createTable(db, dialect, withCredential);
  await db.schema.createIndex('idempotency_keys_created_at_idx').on('idempotency_keys').column('created_at').execute();
}

export function idempotencyCredential(dialect: Dialect) {
  return {
    up: (db: Kysely<unknown>) => recreate(db, dialect, true),
    down: (db: Kysely<unknown>) => recreate(db, dialect, false),
  };
}
