// PostgreSQL through node-postgres. `schema` (used by the tests) puts every table of this
// store in its own schema, so that concurrent runs against one database never meet.
import {
  DEFAULT_MIGRATION_LOCK_TABLE,
  DEFAULT_MIGRATION_TABLE,
  Kysely,
  PostgresDialect,
  PostgresIntrospector,
  sql,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DatabaseMetadataOptions,
  type SchemaMetadata,
  type TableMetadata,
} from 'kysely';
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
  const db = new Kysely<Database>({ dialect: new SearchPathDialect({ pool }) });
  // Named statements are parsed and planned once per connection instead of on every request.
  const names = new Map<string, string>();
  const readRows = async <R>(sql: string, parameters: readonly unknown[]): Promise<R[]> => {
    let name = names.get(sql);
    if (!name) names.set(sql, (name = `ep_${createHash('sha1').update(sql).digest('hex').slice(0, 16)}`));
    return (await pool.query({ name, text: sql, values: parameters as unknown[] })).rows as R[];
  };
  return { db, pool, readRows, close: () => db.destroy() };
}

/**
 * Kysely's PostgreSQL introspector lists the tables of every schema of the database, through
 * functions (has_schema_privilege, pg_get_serial_sequence) that fail when another party drops a
 * schema or table meanwhile (3F000, 42P01, 42703): with instances or test runs in other schemas of
 * one database, migrating, whose migrator asks it whether its own tables exist, failed at random.
 * This one answers for the schemas on the search path only, from the catalogs alone, so a drop
 * elsewhere cannot touch it. Kysely has no option for either, hence this small replacement.
 */
class SearchPathIntrospector implements DatabaseIntrospector {
  readonly #db: Kysely<unknown>;
  readonly #schemas: PostgresIntrospector;

  constructor(db: Kysely<unknown>) {
    this.#db = db;
    this.#schemas = new PostgresIntrospector(db);
  }

  getSchemas(): Promise<SchemaMetadata[]> {
    // A plain listing of pg_namespace: nothing in it fails on a concurrent drop.
    return this.#schemas.getSchemas();
  }

  async getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }): Promise<TableMetadata[]> {
    const { rows } = await sql<{
      schema: string;
      table: string;
      kind: string;
      column: string;
      type: string;
      type_schema: string;
      not_null: boolean;
      has_default: boolean;
      auto: boolean;
      comment: string | null;
    }>`
      select ns.nspname as schema, c.relname as table, c.relkind as kind, a.attname as column,
        typ.typname as type, tns.nspname as type_schema, a.attnotnull as not_null, a.atthasdef as has_default,
        -- an identity column, or one that owns a sequence (a serial): what pg_get_serial_sequence finds
        (a.attidentity <> '' or exists (
          select 1 from pg_catalog.pg_depend d join pg_catalog.pg_class s on s.oid = d.objid and s.relkind = 'S'
          where d.refobjid = c.oid and d.refobjsubid = a.attnum and d.deptype in ('a', 'i'))) as auto,
        dsc.description as comment
      from pg_catalog.pg_attribute a
      join pg_catalog.pg_class c on c.oid = a.attrelid
      join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
      join pg_catalog.pg_type typ on typ.oid = a.atttypid
      join pg_catalog.pg_namespace tns on tns.oid = typ.typnamespace
      left join pg_catalog.pg_description dsc on dsc.objoid = c.oid and dsc.classoid = 'pg_catalog.pg_class'::regclass and dsc.objsubid = a.attnum
      where ns.nspname = any (current_schemas(false)) and c.relkind in ('r', 'v', 'p') and a.attnum > 0 and not a.attisdropped
      order by ns.nspname, c.relname, a.attnum
    `.execute(this.#db);
    const tables = new Map<string, TableMetadata & { columns: TableMetadata['columns'][number][] }>();
    for (const row of rows) {
      if (!options.withInternalKyselyTables && (row.table === DEFAULT_MIGRATION_TABLE || row.table === DEFAULT_MIGRATION_LOCK_TABLE)) continue;
      const key = `${row.schema}.${row.table}`;
      let table = tables.get(key);
      if (!table) tables.set(key, (table = { name: row.table, schema: row.schema, isView: row.kind === 'v', columns: [] }));
      table.columns.push({
        name: row.column,
        dataType: row.type,
        dataTypeSchema: row.type_schema,
        isNullable: !row.not_null,
        hasDefaultValue: row.has_default,
        isAutoIncrementing: row.auto,
        comment: row.comment ?? undefined,
      });
    }
    return [...tables.values()];
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}

class SearchPathDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new SearchPathIntrospector(db);
  }
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

/** What a listener is told: each notification's payload, and that a lost connection was made again. */
export interface ListenHandlers {
  message(payload: string): void;
  /** The connection was lost and made again: notifications sent meanwhile are gone. */
  resumed(): void;
  error(error: unknown): void;
}

/**
 * LISTEN on a connection of its own (a pooled one would be handed to queries), on `channel`
 * named for the session's schema, so that stores sharing a database in different schemas do not
 * hear each other. A lost connection is made again after a pause that grows to 10 s, and
 * `resumed` is told once it listens again.
 */
export async function listenOn(url: string, schema: string | undefined, channel: string, handlers: ListenHandlers): Promise<{ close(): Promise<void> }> {
  let client: pg.Client | undefined;
  let closed = false;
  let pauseMs = 250;
  let retry: NodeJS.Timeout | undefined;

  const connect = async (): Promise<pg.Client> => {
    const c = new pg.Client({ connectionString: url, ...(schema ? { options: `-c search_path=${schema}` } : {}) });
    // Without a listener an 'error' on an idle connection would crash the process.
    c.on('error', (error) => lost(c, error));
    c.on('end', () => lost(c, new Error('the listening connection ended')));
    c.on('notification', (n) => {
      if (n.payload !== undefined) handlers.message(n.payload);
    });
    await c.connect();
    const [{ name }] = (await c.query<{ name: string }>('select current_schema() as name')).rows as [{ name: string }];
    await c.query(`listen ${c.escapeIdentifier(`${channel}:${name}`)}`);
    return c;
  };

  const lost = (c: pg.Client, error: unknown) => {
    if (closed || c !== client) return;
    client = undefined;
    handlers.error(error);
    c.end().catch(() => {});
    schedule();
  };

  const schedule = () => {
    retry = setTimeout(() => {
      connect().then(
        (c) => {
          if (closed) return void c.end().catch(() => {});
          client = c;
          pauseMs = 250;
          handlers.resumed();
        },
        (error: unknown) => {
          handlers.error(error);
          pauseMs = Math.min(pauseMs * 2, 10_000);
          if (!closed) schedule();
        },
      );
    }, pauseMs);
    retry.unref();
  };

  client = await connect();
  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      const c = client;
      client = undefined;
      await c?.end().catch(() => {});
    },
  };
}
