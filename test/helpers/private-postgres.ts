// A PostgreSQL cluster of a test's own (initdb in a temporary directory, on a free port), for a
// test that must stop, crash or restart the database: the shared server other test runs use
// must never be. Run as the `postgres` system user when the tests run as root (initdb refuses
// root). Every command is asynchronous, so that a load running meanwhile is not held up.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './ports.js';

const BINARIES = ['initdb', 'pg_ctl', 'postgres'] as const;

/** The directory holding initdb, pg_ctl and postgres: pg_config's, or the newest under /usr/lib/postgresql. */
function findBinDir(): string | undefined {
  const candidates: string[] = [];
  const config = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  if (config.status === 0 && config.stdout.trim()) candidates.push(config.stdout.trim());
  try {
    const versions = fs.readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
    for (const version of versions) candidates.push(path.join('/usr/lib/postgresql', version, 'bin'));
  } catch {
    // No Debian-style installation.
  }
  return candidates.find((dir) => BINARIES.every((name) => fs.existsSync(path.join(dir, name))));
}

/** The uid and gid to run the cluster as: the `postgres` user's when we are root, else ours (undefined). */
function findUser(): { uid?: number; gid?: number } | string {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  const uid = id('-u');
  const gid = id('-g');
  if (uid.status !== 0 || gid.status !== 0) return 'running as root, and there is no `postgres` user to run initdb as (it refuses root)';
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

const binDir = findBinDir();
const user = findUser();

/** Why a private cluster cannot be made here, or undefined when it can: a skip reason. */
export function privatePostgresUnavailable(): string | undefined {
  if (!binDir) return `no PostgreSQL server binaries (${BINARIES.join(', ')}) found by pg_config --bindir or under /usr/lib/postgresql`;
  if (typeof user === 'string') return user;
  return undefined;
}

export type StopMode = 'smart' | 'fast' | 'immediate';

export interface PrivatePostgres {
  readonly port: number;
  /** postgres://postgres@127.0.0.1:PORT/postgres (trust authentication). */
  readonly url: string;
  /** `pg_ctl stop -m MODE -w`: resolves once the server is down. */
  stop(mode: StopMode): Promise<void>;
  /** `pg_ctl start -w`: resolves once the server accepts connections (after recovery, if needed). */
  start(): Promise<void>;
  /** The server's log so far. */
  log(): string;
  /** Stops the server (immediate) and removes its directory. */
  destroy(): Promise<void>;
}

/** Runs one of the binaries as the cluster's user; rejects, with its output, unless it exits 0. */
function run(name: (typeof BINARIES)[number], args: string[], cwd: string): Promise<void> {
  const ids = typeof user === 'string' ? {} : user;
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(binDir!, name), args, {
      cwd,
      ...ids,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${name} ${args.join(' ')} exited with ${code}:\n${output}`))));
  });
}

/** Creates the cluster and starts it; the process's exit stops it, should the test not get to destroy(). */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const reason = privatePostgresUnavailable();
  if (reason) throw new Error(reason);
  const ids = user as { uid?: number; gid?: number };
  // The socket directory, the log and the data directory, all owned by the cluster's user.
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'edgeplane-pg-'));
  const dataDir = path.join(root, 'data');
  const logFile = path.join(root, 'postgres.log');
  fs.mkdirSync(dataDir, { mode: 0o700 });
  fs.chmodSync(dataDir, 0o700);
  if (ids.uid !== undefined) {
    fs.chownSync(root, ids.uid, ids.gid!);
    fs.chownSync(dataDir, ids.uid, ids.gid!);
  }
  const port = await freePort();
  const options = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=40 -c shared_buffers=16MB`;

  // Should the test runner exit without destroy() (a failure, an interrupt): no postgres left behind.
  let destroyed = false;
  const onExit = () => {
    if (destroyed) return;
    spawnSync(path.join(binDir!, 'pg_ctl'), ['stop', '-D', dataDir, '-m', 'immediate', '-w', '-t', '10'], { cwd: root, ...ids, stdio: 'ignore' });
    fs.rmSync(root, { recursive: true, force: true });
  };
  process.on('exit', onExit);

  try {
    await run('initdb', ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync'], root);
    const start = () => run('pg_ctl', ['start', '-D', dataDir, '-l', logFile, '-w', '-t', '30', '-o', options], root);
    await start();
    return {
      port,
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      stop: (mode) => run('pg_ctl', ['stop', '-D', dataDir, '-m', mode, '-w', '-t', '30'], root),
      start,
      log() {
        try {
          return fs.readFileSync(logFile, 'utf8');
        } catch {
          return '(no log)';
        }
      },
      async destroy() {
        if (destroyed) return;
        const pidFile = path.join(dataDir, 'postmaster.pid');
        if (fs.existsSync(pidFile)) {
          await run('pg_ctl', ['stop', '-D', dataDir, '-m', 'immediate', '-w', '-t', '10'], root).catch(() => {
            // pg_ctl could not stop it: SIGQUIT is the same immediate shutdown, sent directly.
            try {
              const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
              if (pid > 0) process.kill(pid, 'SIGQUIT');
            } catch {
              // Already gone.
            }
          });
        }
        destroyed = true;
        process.off('exit', onExit);
        fs.rmSync(root, { recursive: true, force: true });
      },
    };
  } catch (error) {
    onExit();
    destroyed = true;
    process.off('exit', onExit);
    throw error;
  }
}
