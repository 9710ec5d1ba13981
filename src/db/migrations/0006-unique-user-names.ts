// Frozen: user names are unique within an account, as bot user names are. Users made before
// this with a name already taken in their account keep it with their id appended, oldest first
// keeping the bare name, so that the index can be built and no user is lost.
import { sql, type Kysely } from 'kysely';

export function uniqueUserNames() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await sql`update users set name = name || ' (' || id || ')'
        where exists (select 1 from users older where older.account_id = users.account_id and older.name = users.name
          and (older.created_at < users.created_at or (older.created_at = users.created_at and older.id < users.id)))`.execute(db);
      await db.schema.createIndex('users_account_id_name_key').on('users').columns(['account_id', 'name']).unique().execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('users_account_id_name_key').execute();
    },
  };
}
