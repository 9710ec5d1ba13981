// The bot users' table, added to the store's `Database` (see src/db/schema.ts for why by augmentation).
import type { SqlBool } from 'kysely';

export interface BotUsersTable {
  id: string;
  account_id: string;
  name: string;
  active: SqlBool;
  created_at: string;
}

declare module '../../db/schema.js' {
  interface Database {
    bot_users: BotUsersTable;
  }
}
