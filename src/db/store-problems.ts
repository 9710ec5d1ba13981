// Why the store could not be opened or migrated at start, said in one line an operator can act
// on: which store (a PostgreSQL URL never with its password), what went wrong, what to check.
import type { Config } from '../config.js';

/** The store could not be opened or migrated for a reason outside edgeplane; `message` says which and what to check. */
export class StoreStartError extends Error {
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
    this.name = 'StoreStartError';
  }
}

/** A PostgreSQL URL fit to be shown or logged: no password, in the authority or in the query. */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    u.password = '';
    u.searchParams.delete('password');
    return u.toString();
  } catch {
    return '(an EDGEPLANE_DATABASE_URL that is not a URL)';
  }
}

type DriverError = { code?: string; message?: string; errors?: { code?: string }[] };

function postgresProblem(error: DriverError, url: string, timeouts: Config['databaseTimeouts']): string | undefined {
  const where = redactedUrl(url);
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  const host = parsed?.hostname || 'localhost';
  const port = parsed?.port || '5432';
  const user = decodeURIComponent(parsed?.username ?? '') || process.env.USER || 'the current user';
  const database = decodeURIComponent(parsed?.pathname.slice(1) ?? '') || user;
  // Node reports a refused connection to each address of a name together, as an AggregateError.
  const code = error.code ?? error.errors?.[0]?.code ?? '';
  const message = error.message ?? '';
  switch (code) {
    case 'ECONNREFUSED':
      return `cannot connect to PostgreSQL at ${where}: connection refused. Is PostgreSQL running and listening on ${host}:${port}?`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `cannot connect to PostgreSQL at ${where}: the host name '${host}' does not resolve. Check the host in EDGEPLANE_DATABASE_URL.`;
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `cannot connect to PostgreSQL at ${where}: ${host}:${port} cannot be reached (${code}). Check the address and any firewall on the way.`;
    case '3D000':
      return `the database '${database}' does not exist on the PostgreSQL server at ${where}. Create it (createdb -h ${host} -p ${port} -U ${user} ${database}) or name another one in EDGEPLANE_DATABASE_URL.`;
    case '28P01':
      return `PostgreSQL at ${where} refused the password of user '${user}'. Check the user and password in EDGEPLANE_DATABASE_URL.`;
    case '28000':
      return `PostgreSQL at ${where} refused user '${user}': ${message}. Check the user name and the server's pg_hba.conf.`;
    case '42501':
      return `user '${user}' may not create or change edgeplane's tables in the database at ${where}: ${message}. Grant it CREATE on the schema, or run 'edgeplane migrate' as the database owner.`;
    case '53300':
      return `PostgreSQL at ${where} has no free connection slots (too many connections). Raise max_connections or close other clients, then retry.`;
    case '57P03':
      return `PostgreSQL at ${where} is starting up or shutting down; retry in a moment.`;
  }
  if (/client password must be a string|SASL/.test(message)) {
    return `PostgreSQL at ${where} asks user '${user}' for a password and EDGEPLANE_DATABASE_URL gives none. Add it: postgres://${user}:PASSWORD@${host}:${port}/${database}.`;
  }
  if (/timeout exceeded when trying to connect|connection timeout/i.test(message)) {
    return `PostgreSQL at ${where} did not accept a connection within ${timeouts.poolMs / 1000} s (EDGEPLANE_DATABASE_POOL_TIMEOUT). Check the address and that the server is up.`;
  }
  if (/Connection terminated|ECONNRESET/.test(message) || code === 'ECONNRESET') {
    return `PostgreSQL at ${where} closed the connection while edgeplane was starting (${message}). Check the server's log; is it a PostgreSQL server at all?`;
  }
  // Another error the server reported (a five-character SQLSTATE): say it as it is, still in one line.
  if (/^[0-9A-Z]{5}$/.test(code)) return `PostgreSQL at ${where} refused to start edgeplane's store: ${message} (SQLSTATE ${code}).`;
  return undefined;
}

function sqliteProblem(error: DriverError, file: string): string | undefined {
  const code = error.code ?? '';
  const message = (error.message ?? '').split('\n')[0];
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
    return `the SQLite store ${file} is not a usable SQLite database (${message}). Point EDGEPLANE_DATA_DIR or EDGEPLANE_DATABASE_URL at the right file, or restore it from a backup.`;
  }
  if (code.startsWith('SQLITE_') || ['EACCES', 'EPERM', 'EROFS', 'ENOENT', 'ENOTDIR', 'EISDIR', 'ENOSPC'].includes(code)) {
    return `cannot open the SQLite store ${file}: ${message} (${code}). Check the path, and that this user may create and write files there.`;
  }
  return undefined;
}

/** One line for an operator when `error` is a reason outside edgeplane that the store could not be opened or migrated; undefined otherwise. */
export function explainStoreProblem(error: unknown, database: Config['database'], timeouts: Config['databaseTimeouts']): string | undefined {
  const e = (error ?? {}) as DriverError;
  return database.kind === 'postgres' ? postgresProblem(e, database.url, timeouts) : sqliteProblem(e, database.file);
}
