// PostgreSQL through node-postgres. `schema` (used by the tests) puts every table of this
// store in its own schema, so that concurrent runs against one database never meet.
import { Kysely, PostgresDialect } from 'kysely';
import { createHash } from 'node:crypto';
import pg from 'pg';
import type { Database } from '../schema.js';

export function openPostgres(
  url: string,
  options: { schema?: string; max?: number; statementTimeoutMs: number; poolTimeoutMs: number },
): { db: Kysely<Database>; pool: pg.Pool; readRows: <R>(sql: string, parameters: readonly unknown[]) => Promise<R[]>; close: () => Promise<void> } {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    // How long a query waits for a pooled connection (or for a new one to connect).
    connectionTimeoutMillis: options.poolTimeoutMs,
    // Set for the session at connect: the server cancels a statement past it (57014), lock waits included.
    statement_timeout: options.statementTimeoutMs,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  // A client that loses its connection emits 'error'; without a listener that crashes the process.
  // The pool listens only while a client is idle, so every client gets a listener of its own for
  // the time it is checked out: the query that was running (or the next one) fails and is answered
  // as a 503, and on release the pool drops the client, which is no longer queryable, for a new one.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
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

/** Why the database failed a query, when it is an outage rather than the query's fault. */
export type PostgresOutage = 'unreachable' | 'lost' | 'timeout' | 'missing';

const OUTAGE_CODES: Record<string, PostgresOutage> = {
  // No connection can be opened.
  ECONNREFUSED: 'unreachable',
  ENOTFOUND: 'unreachable',
  EAI_AGAIN: 'unreachable',
  EHOSTUNREACH: 'unreachable',
  ENETUNREACH: 'unreachable',
  ETIMEDOUT: 'unreachable',
  '08001': 'unreachable',
  '08004': 'unreachable',
  '53300': 'unreachable', // too many connections
  '55000': 'unreachable', // the database does not accept connections now
  // The connection broke, or the server is shutting down or starting up.
  ECONNRESET: 'lost',
  EPIPE: 'lost',
  '57P01': 'lost', // terminated by an administrator, or a fast shutdown
  '57P02': 'lost', // crash shutdown
  '57P03': 'lost', // cannot connect now: starting up or shutting down
  '08000': 'lost',
  '08003': 'lost',
  '08006': 'lost',
  // Past a time limit.
  '57014': 'timeout', // statement_timeout (or a cancel)
  '55P03': 'timeout', // lock_not_available
  '25P03': 'timeout', // idle_in_transaction_session_timeout
  // Not created, or not migrated.
  '3D000': 'missing', // no such database
  '3F000': 'missing', // no such schema
  '42P01': 'missing', // no such table
  '57P04': 'missing', // the database was dropped
};

export function postgresOutage(error: unknown): PostgresOutage | undefined {
  const e = error as { code?: string; message?: string; errors?: { code?: string }[] };
  // Node reports a connection refused on every address of a name as an AggregateError.
  const code = e?.code ?? e?.errors?.[0]?.code;
  if (code && Object.hasOwn(OUTAGE_CODES, code)) return OUTAGE_CODES[code];
  const message = e?.message ?? '';
  // pg-pool's messages for the acquire timeout and the connect timeout.
  if (/timeout exceeded when trying to connect|Connection terminated due to connection timeout/.test(message)) return 'timeout';
  // pg's messages for a connection that ended under a query, or a client whose connection failed earlier.
  if (/Connection terminated|is not queryable/.test(message)) return 'lost';
  return undefined;
}
