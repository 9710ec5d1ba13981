// Frozen: account names are unique, as user names are within an account, so that running
// `accounts create --name NAME` twice (a retried script) does not make two accounts no one can
// tell apart. Accounts made before this with a name already taken keep it with their id
// appended, the oldest keeping the bare name, so that the index can be built and none is lost.
import { sql, type Kysely } from 'kysely';

export function uniqueAccountNames() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await sql`update accounts set name = name || ' (' || id || ')'
        where exists (select 1 from accounts older where older.name = accounts.name
          and (older.created_at < accounts.created_at or (older.created_at = accounts.created_at and older.id < accounts.id)))`.execute(db);
      await db.schema.createIndex('accounts_name_key').on('accounts').column('name').unique().execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('accounts_name_key').execute();
    },
  };
}
