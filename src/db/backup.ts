// `edgeplane backup`: an online, consistent copy of the SQLite store, taken while a server keeps
// writing to it. SQLite's online backup API copies the pages on a read-only connection of our
// own; that connection holds one read transaction for the whole copy, so the copy is the store
// as it was at one moment (every transaction committed before it, none after) and, in WAL mode,
// the server's writers never wait for it. Without that transaction each step of the copy would
// start over whenever the server committed in between, and under steady writes it would never end.
//
// The copy is written to a temporary file beside the target, checked (integrity_check and
// quick_check), and only then linked under the target's name, which is never overwritten.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { Config } from '../config.js';
import { redactedUrl } from './store-problems.js';

/** Why a backup could not be made, in words for the operator (the CLI exits 2). */
export class BackupError extends Error {
  constructor(message: string, options?: { cause: unknown }) {
    super(message, options);
    this.name = 'BackupError';
  }
}

/** How far the copy is: SQLite pages in all, and those still to copy. */
export interface BackupProgress {
  totalPages: number;
  remainingPages: number;
}

/** What a finished backup holds. */
export interface BackupResult {
  /** The store that was copied. */
  source: string;
  /** The copy, under its final name. */
  target: string;
  pages: number;
  pageSize: number;
  /** The copy's size on disk. */
  bytes: number;
  /** The migrations recorded in the copy (Kysely's kysely_migration table), oldest first. */
  migrations: string[];
}

/** Pages copied per step: 4 MB with the default page size, then the event loop gets a turn. */
const PAGES_PER_STEP = 1024;

/** How long opening the store and starting its read transaction wait for another process's lock. */
const BUSY_TIMEOUT_MS = 5_000;

/**
 * better-sqlite3 12 aborts the process on Node 24 when the garbage collector destroys one of its
 * objects (see `retained` in dialects/sqlite.ts): every Database and Statement made here stays
 * reachable until the process exits.
 */
const retained: object[] = [];

function open(file: string, options: BetterSqlite3.Options): BetterSqlite3.Database {
  const db = new BetterSqlite3(file, options);
  retained.push(db);
  return db;
}

function all<R>(db: BetterSqlite3.Database, sql: string): R[] {
  const statement = db.prepare(sql);
  retained.push(statement);
  return statement.all() as R[];
}

/** The refusal for a PostgreSQL store: the database's own tools copy it, and how. */
export function postgresBackupAdvice(url: string, target: string): string {
  return (
    `the store is PostgreSQL (${redactedUrl(url)}): 'edgeplane backup' copies a SQLite store only. ` +
    `Use pg_dump, e.g.: pg_dump --format=custom --file=${target} '${redactedUrl(url)}' ` +
    `(the password from PGPASSWORD or ~/.pgpass); pg_restore restores it.`
  );
}

/**
 * Copies the configured store to `target`: SQLite through backupSqlite; PostgreSQL is refused
 * with a BackupError that says how to use pg_dump instead.
 */
export async function backupStore(database: Config['database'], target: string, onProgress?: (progress: BackupProgress) => void): Promise<BackupResult> {
  if (database.kind === 'postgres') throw new BackupError(postgresBackupAdvice(database.url, target));
  return backupSqlite(database.file, target, onProgress);
}

/**
 * An online, consistent copy of the SQLite database `file` at `target`, made while other
 * processes (a running server) read and write it. Refuses (BackupError) a missing `file`, an
 * in-memory store, a `target` that exists or whose directory does not; a copy that fails its
 * checks is deleted and refused too. Nothing is left under `target` unless the whole copy passed.
 */
export async function backupSqlite(file: string, target: string, onProgress?: (progress: BackupProgress) => void): Promise<BackupResult> {
  const source = path.resolve(file);
  const destination = path.resolve(target);
  checkPaths(file, source, destination);
  const temporary = temporaryBeside(destination);
  try {
    const { pages, pageSize } = await copyPages(source, temporary, onProgress);
    const migrations = checkCopy(temporary);
    syncFile(temporary);
    linkIntoPlace(temporary, destination);
    return { source, target: destination, pages, pageSize, bytes: fs.statSync(destination).size, migrations };
  } finally {
    removeTemporary(temporary);
  }
}

function checkPaths(file: string, source: string, destination: string): void {
  if (file === ':memory:') throw new BackupError('the store is in memory: there is nothing on disk to back up');
  if (!fs.existsSync(source)) {
    throw new BackupError(`there is no store at ${source}. Point --data-dir (EDGEPLANE_DATA_DIR) at the server's data directory.`);
  }
  if (fs.existsSync(destination)) {
    throw new BackupError(`${destination} exists already: a backup never overwrites a file. Name a new file, or move that one away first.`);
  }
  const directory = path.dirname(destination);
  if (!fs.statSync(directory, { throwIfNoEntry: false })?.isDirectory()) {
    throw new BackupError(`cannot write ${destination}: the directory ${directory} does not exist`);
  }
}

/** An empty, owner-only file in the target's directory (the store holds secrets), so that the final step is a link within one file system. */
function temporaryBeside(destination: string): string {
  const temporary = `${destination}.partial-${randomBytes(4).toString('hex')}`;
  try {
    fs.closeSync(fs.openSync(temporary, 'wx', 0o600));
  } catch (error) {
    throw new BackupError(`cannot write in ${path.dirname(destination)}: ${(error as Error).message}`, { cause: error });
  }
  return temporary;
}

/**
 * Copies every page of `source` into `temporary` under one read transaction: one snapshot of the
 * store, which the server's commits meanwhile neither change nor restart.
 */
async function copyPages(source: string, temporary: string, onProgress?: (progress: BackupProgress) => void): Promise<{ pages: number; pageSize: number }> {
  let db: BetterSqlite3.Database;
  try {
    db = open(source, { readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
  } catch (error) {
    throw new BackupError(`cannot open the store ${source}: ${(error as Error).message}`, { cause: error });
  }
  try {
    db.exec('begin');
    // A deferred transaction takes its snapshot at the first read.
    all(db, 'select count(*) from sqlite_master');
    const [{ page_size: pageSize } = { page_size: 0 }] = all<{ page_size: number }>(db, 'pragma page_size');
    const { totalPages } = await db.backup(temporary, {
      progress(progress) {
        onProgress?.(progress);
        return PAGES_PER_STEP;
      },
    });
    onProgress?.({ totalPages, remainingPages: 0 });
    return { pages: totalPages, pageSize };
  } catch (error) {
    throw explained(error, `copying ${source} failed`);
  } finally {
    if (db.inTransaction) db.exec('rollback');
    db.close();
  }
}

/** Checks the copy (integrity_check, then quick_check) and reads its migrations; a BackupError says what is wrong. */
function checkCopy(copy: string): string[] {
  let db: BetterSqlite3.Database | undefined;
  try {
    db = open(copy, { fileMustExist: true });
    for (const check of ['integrity_check', 'quick_check']) {
      const problems = all<Record<string, string>>(db, `pragma ${check}`).map((row) => row[check]);
      if (problems.length !== 1 || problems[0] !== 'ok') {
        throw new BackupError(`the copy failed SQLite's ${check}, so it was not kept: ${problems.slice(0, 5).join('; ')}`);
      }
    }
    const hasMigrations = all(db, "select 1 from sqlite_master where type = 'table' and name = 'kysely_migration'").length > 0;
    return hasMigrations ? all<{ name: string }>(db, 'select name from kysely_migration order by name').map((row) => row.name) : [];
  } catch (error) {
    throw explained(error, 'the copy could not be checked, so it was not kept');
  } finally {
    // Closing the last connection folds the copy's -wal file (SQLite made one: the store is in WAL mode) back into it.
    db?.close();
  }
}

/**
 * A failure of SQLite or of the file system (a corrupt store, a full disk: errors with a `code`)
 * becomes a BackupError that says what failed; anything else is a bug and passes unchanged.
 */
function explained(error: unknown, what: string): unknown {
  if (error instanceof BackupError || typeof (error as { code?: unknown })?.code !== 'string') return error;
  return new BackupError(`${what}: ${(error as Error).message}`, { cause: error });
}

function syncFile(file: string): void {
  const fd = fs.openSync(file, 'r+');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Gives the finished copy its final name without ever replacing a file: a hard link fails if
 * the name exists (a rename would overwrite it). Where the file system has no hard links, the
 * check and the rename are two steps.
 */
function linkIntoPlace(temporary: string, destination: string): void {
  try {
    fs.linkSync(temporary, destination);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'EEXIST') throw new BackupError(`${destination} appeared while the backup ran; it was left as it is. Name a new file.`);
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw error;
    if (fs.existsSync(destination)) throw new BackupError(`${destination} appeared while the backup ran; it was left as it is. Name a new file.`);
    fs.renameSync(temporary, destination);
  }
  syncDirectory(path.dirname(destination));
}

/** Makes the new name durable; some platforms cannot open a directory, which only loses that guarantee. */
function syncDirectory(directory: string): void {
  try {
    const fd = fs.openSync(directory, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // Not fatal: the copy is complete and checked.
  }
}

function removeTemporary(temporary: string): void {
  for (const suffix of ['', '-journal', '-wal', '-shm']) fs.rmSync(temporary + suffix, { force: true });
}
