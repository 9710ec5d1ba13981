// SQLite through better-sqlite3. Two differences from PostgreSQL are absorbed here, so that the
// queries elsewhere are one set: better-sqlite3 refuses JS booleans as parameters (we bind 1/0),
// and it re-parses SQL on every prepare (we keep a bounded cache of prepared statements).
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database } from '../schema.js';

const STATEMENT_CACHE_SIZE = 500;

function bindable(parameters: readonly unknown[]): unknown[] {
  return parameters.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p));
}

function wrap(db: BetterSqlite3.Database) {
  const cache = new Map<string, BetterSqlite3.Statement>();
  const prepare = (sql: string) => {
    let statement = cache.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      cache.set(sql, statement);
    }
    return statement;
  };
  return {
    close: () => db.close(),
    prepare(sql: string) {
      const statement = prepare(sql);
      return {
        reader: statement.reader,
        all: (parameters: readonly unknown[]) => statement.all(...bindable(parameters)),
        run: (parameters: readonly unknown[]) => statement.run(...bindable(parameters)),
        iterate: (parameters: readonly unknown[]) => statement.iterate(...bindable(parameters)),
      };
    },
  };
}

export function openSqlite(file: string): { db: Kysely<Database>; close: () => Promise<void> } {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const raw = new BetterSqlite3(file);
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = NORMAL');
  raw.pragma('foreign_keys = ON');
  raw.pragma('busy_timeout = 5000');
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: wrap(raw) as any }) });
  return { db, close: () => db.destroy() };
}

/** `UNIQUE constraint failed: bot_users.account_id, bot_users.name` → `bot_users_account_id_name_key`. */
export function sqliteUniqueTarget(error: unknown): string | undefined {
  const e = error as { code?: string; message?: string };
  if (e?.code !== 'SQLITE_CONSTRAINT_UNIQUE' && e?.code !== 'SQLITE_CONSTRAINT_PRIMARYKEY') return undefined;
  const m = /constraint failed: (.+)$/.exec(e.message ?? '');
  if (!m) return 'unknown';
  const columns = m[1]!.split(',').map((c) => c.trim());
  const table = columns[0]!.split('.')[0];
  return `${table}_${columns.map((c) => c.split('.')[1]).join('_')}_key`;
}
