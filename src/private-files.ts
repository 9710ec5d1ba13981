// What the server keeps on disk is readable by its own user only: the data directory 0700, the
// SQLite files, the master key, the local CA's and the server's private keys 0600. New ones are
// created so; at start, those left more open by an older version are tightened (they are the
// server's own files), while a data directory that others can enter is only reported, since it
// may be a directory the operator shares with other things on purpose.
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from './config.js';

/** The first admin API key token, when no terminal is attached to show it on. */
export const TOKEN_FILE = 'first-admin-token';

const octal = (mode: number) => (mode & 0o777).toString(8).padStart(4, '0');

/** Creates the data directory owner-only, or warns when an existing one is open to others. */
export function ensurePrivateDataDir(dataDir: string, logger: Logger): void {
  if (fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 }) !== undefined) return;
  const mode = fs.statSync(dataDir).mode;
  if ((mode & 0o077) !== 0) {
    logger.warn({ data_dir: dataDir, mode: octal(mode) }, `the data directory is open to other users; make it owner-only: chmod 700 ${dataDir}`);
  }
}

/** The server's own files that hold secrets, wherever they are configured to be. */
export function privateFiles(config: Config): { files: string[]; dirs: string[] } {
  const tls = path.join(config.dataDir, 'tls');
  const files = [path.join(config.dataDir, 'master.key'), path.join(config.dataDir, TOKEN_FILE), path.join(tls, 'ca.key'), path.join(tls, 'server.key')];
  if (config.database.kind === 'sqlite' && config.database.file !== ':memory:') {
    const db = config.database.file;
    files.push(db, `${db}-wal`, `${db}-shm`, `${db}-journal`);
  }
  return { files, dirs: [tls] };
}

/** Takes group and other permissions off those that exist; each change is logged. */
export function tightenPrivateFiles({ files, dirs }: { files: string[]; dirs: string[] }, logger: Logger): void {
  const tighten = (file: string, wanted: number) => {
    let mode: number;
    try {
      mode = fs.statSync(file).mode;
    } catch {
      return; // not created (yet)
    }
    if ((mode & 0o077) === 0) return;
    try {
      fs.chmodSync(file, wanted);
      logger.warn({ file, was: octal(mode), now: octal(wanted) }, 'made a file that holds secrets owner-only');
    } catch (error) {
      logger.warn(
        { file, mode: octal(mode), err: error },
        `a file that holds secrets is open to other users and could not be changed; chmod ${octal(wanted)} ${file}`,
      );
    }
  };
  for (const dir of dirs) tighten(dir, 0o700);
  for (const file of files) tighten(file, 0o600);
}

/**
 * Creates `file` owner-only before `issue` runs, then writes the token it returns there, so that
 * no token is issued that could not be kept. A file left by an earlier store is replaced; `wx`
 * never follows a link planted in its place.
 */
export async function issueIntoFile<T extends { token: string }>(file: string, issue: () => Promise<T>): Promise<T> {
  fs.rmSync(file, { force: true });
  const fd = fs.openSync(file, 'wx', 0o600);
  try {
    const issued = await issue();
    fs.writeSync(fd, issued.token + '\n');
    return issued;
  } catch (error) {
    fs.rmSync(file, { force: true });
    throw error;
  } finally {
    fs.closeSync(fd);
  }
}
