// PostgreSQL through node-postgres. `schema` (used by the tests) puts every table of this
// store in its own schema, so that concurrent runs against one database never meet.
import { Kysely, PostgresDialect } from 'kysely';
import { createHash } from 'node:crypto';
import pg from 'pg';
import type { Database } from '../schema.js';

export function openPostgres(
  url: string,
  options: { schema?: string; max?: number } = {},
): { db: Kysely<Database>; pool: pg.Pool; readRows: <R>(sql: string, parameters: readonly unknown[]) => Promise<R[]>; close: () => Promise<void> } {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    connectionTimeoutMillis: 5000,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  // An idle client that loses its connection emits 'error' on the pool; without a listener
  // that would crash the process. The next query reports the outage as a 503.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  // Named statements are parsed and planned once per connection instead of on every request.
  const names = new Map<string, string>();
  const readRows = async <R>(sql: string, parameters: readonly unknown[]): Promise<R[]> => {
    let name = names.get(sql);
    if (!name) names.set(sql, (name = `ep_${createHash('sha1').update(sql).digest('hex').slice(0, 16)}`));
    return (await pool.query({ name, text: sql, values: parameters as unknown[] })).rows as R[];
  };
  return { db, pool, readRows, close: () => db.destroy() };
}

export function postgresUniqueTarget(error: unknown): string | undefined {
  const e = error as { code?: string; constraint?: string };
  return e?.code === '23505' ? (e.constraint ?? 'unknown') : undefined;
}

export function isPostgresForeignKeyError(error: unknown): boolean {
  return (error as { code?: string })?.code === '23503';
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08000',
  '08003',
  '08006',
  '08001',
  '08004',
]);

export function isPostgresConnectionError(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  if (e?.code && CONNECTION_CODES.has(e.code)) return true;
  return /Connection terminated|timeout exceeded when trying to connect|connect ECONNREFUSED/i.test(e?.message ?? '');
}
