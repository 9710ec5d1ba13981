// `edgeplane backup FILE`: the real CLI copies the SQLite store of a server that keeps writing
// through its HTTP API; the copy is checked, opened by edgeplane, and restored in place.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { backupSqlite } from '../../src/db/backup.js';
import { startServer, type Server } from '../../src/main.js';

const root = path.resolve(import.meta.dirname, '../..');
const cli = [process.execPath, '--import', 'tsx', path.join(root, 'src/cli.ts')];
const dirs: string[] = [];
/** A request that takes longer fails the test rather than hanging it. */
const REQUEST_TIMEOUT_MS = 10_000;
/** better-sqlite3 12 aborts on Node 24 when the collector destroys its objects: keep them all (see src/db/dialects/sqlite.ts). */
const retained: object[] = [];

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'edgeplane-backup-'));
  dirs.push(dir);
  return dir;
}

const cliEnv = () => ({ ...process.env, EDGEPLANE_LOG_LEVEL: 'silent' });

function runSync(args: string[]): CliResult {
  const res = spawnSync(cli[0]!, [...cli.slice(1), ...args], { cwd: root, env: cliEnv(), encoding: 'utf8', timeout: 60_000 });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}

/** The CLI as a child process, without blocking this process's event loop (where the server runs). */
function runAsync(args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cli[0]!, [...cli.slice(1), ...args], { cwd: root, env: cliEnv(), timeout: 60_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function openReadOnly(file: string): BetterSqlite3.Database {
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  retained.push(db);
  return db;
}

function rows<R>(db: BetterSqlite3.Database, sql: string): R[] {
  const statement = db.prepare(sql);
  retained.push(statement);
  return statement.all() as R[];
}

function ids(db: BetterSqlite3.Database, table: 'ip_policies' | 'ip_policy_rules'): Set<string> {
  return new Set(rows<{ id: string }>(db, `select id from ${table}`).map((r) => r.id));
}

/** About 40 MB of pages, so that the copy takes many steps while the server commits between them. */
function pad(file: string): void {
  const db = new BetterSqlite3(file);
  retained.push(db);
  db.exec(
    'create table backup_test_padding (b blob); with recursive n(i) as (select 1 union all select i + 1 from n where i < 10000) insert into backup_test_padding select randomblob(4000) from n',
  );
  db.close();
}

async function serve(dataDir: string): Promise<Server> {
  const config = loadConfig({ dataDir, listen: '127.0.0.1:0', tls: 'off', logLevel: 'silent', rateLimit: '0', runMode: 'api' });
  return startServer(config, { say: () => {}, terminal: true, logger: pino({ level: 'silent' }) });
}

interface Created {
  id: string;
  kind: 'ip_policies' | 'ip_policy_rules';
  /** Whether the request was sent after the backup command had exited. */
  sentAfterBackup: boolean;
}

/** Creates IP policies, each with a rule, in `loops` parallel loops until stopped; records every 201 and every other answer. */
class Writer {
  readonly acknowledged: Created[] = [];
  readonly failures: string[] = [];
  backupDone = false;
  private stopped = false;
  private loops: Promise<void>[] = [];

  constructor(
    private readonly url: string,
    private readonly token: string,
  ) {}

  start(loops: number): void {
    this.loops = Array.from({ length: loops }, () => this.loop());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  /** Resolves once `count` more creations that match `which` have been acknowledged. */
  async waitFor(count: number, which: (c: Created) => boolean = () => true): Promise<void> {
    const deadline = Date.now() + 30_000;
    while (this.acknowledged.filter(which).length < count) {
      assert.ok(Date.now() < deadline, `fewer than ${count} creations acknowledged; failures: ${this.failures.slice(0, 3).join('; ')}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const policy = await this.create('ip_policies', { description: 'backup test' });
      if (policy) await this.create('ip_policy_rules', { ip_policy_id: policy, cidr: '10.0.0.0/8', action: 'allow' });
    }
  }

  private async create(kind: Created['kind'], body: object): Promise<string | undefined> {
    const sentAfterBackup = this.backupDone;
    let status: number;
    let text: string;
    try {
      const res = await fetch(`${this.url}/${kind}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${this.token}`, 'Service-Version': '2', 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      status = res.status;
      text = await res.text();
    } catch (error) {
      status = 0;
      text = String(error);
    }
    if (status !== 201) {
      this.failures.push(`${kind} ${status} ${text}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      return undefined;
    }
    const { id } = JSON.parse(text) as { id: string };
    this.acknowledged.push({ id, kind, sentAfterBackup });
    return id;
  }
}

/**
 * The creations acknowledged before the backup's temporary file appeared (the copy begins just
 * after), as of the last look that did not see it: each was committed before the copy began.
 */
function watchForCopyStart(dir: string, writer: Writer): { stop: () => Created[] | undefined } {
  let count = writer.acknowledged.length;
  let seen = false;
  const timer = setInterval(() => {
    if (partials(dir).length > 0) {
      seen = true;
      clearInterval(timer);
    } else count = writer.acknowledged.length;
  }, 2);
  return {
    stop() {
      clearInterval(timer);
      return seen ? writer.acknowledged.slice(0, count) : undefined;
    },
  };
}

function getStatus(server: Server, token: string, what: string): Promise<number> {
  const headers = { Authorization: `Bearer ${token}`, 'Service-Version': '2' };
  return fetch(`${server.url}/${what}`, { headers, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }).then(async (res) => {
    await res.arrayBuffer();
    return res.status;
  });
}

/** A store whose index misses a row: integrity_check and quick_check fail on it, and on any page-for-page copy of it. */
function corruptStore(file: string): void {
  let db = new BetterSqlite3(file);
  retained.push(db);
  db.exec('create table t (x); create index t_x on t (x); insert into t values (1), (2), (3)');
  const index = rows<{ sql: string; rootpage: number }>(db, "select sql, rootpage from sqlite_master where name = 't_x'")[0]!;
  db.unsafeMode(true);
  db.exec("pragma writable_schema = on; delete from sqlite_master where name = 't_x'");
  db.close();
  db = new BetterSqlite3(file);
  retained.push(db);
  db.exec('insert into t values (4)');
  db.unsafeMode(true);
  db.exec('pragma writable_schema = on');
  const restore = db.prepare("insert into sqlite_master values ('index', 't_x', 't', ?, ?)");
  retained.push(restore);
  restore.run(index.rootpage, index.sql);
  db.close();
}

function partials(dir: string): string[] {
  return fs.readdirSync(dir).filter((name) => name.includes('.partial-'));
}

after(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('edgeplane backup', () => {
  it('copies the store consistently while the server writes, and the copy restores in place', async () => {
    const dataDir = tempDir();
    const backupDir = tempDir();
    const target = path.join(backupDir, 'copy.db');
    const created = runSync(['accounts', 'create', '--name', 'backed-up', '--json', '--data-dir', dataDir]);
    assert.equal(created.code, 0, created.stderr);
    const { account_id: accountId, token } = JSON.parse(created.stdout) as { account_id: string; token: string };
    pad(path.join(dataDir, 'edgeplane.db'));

    const server = await serve(dataDir);
    const writer = new Writer(server.url, token);
    let backup: CliResult;
    let before: Created[] | undefined;
    try {
      writer.start(4);
      await writer.waitFor(200);
      const copyStart = watchForCopyStart(backupDir, writer);
      backup = await runAsync(['backup', target, '--json', '--data-dir', dataDir]);
      writer.backupDone = true;
      before = copyStart.stop();
      await writer.waitFor(20, (c) => c.sentAfterBackup);
    } finally {
      await writer.stop();
      await server.close();
    }

    // The command, and the server meanwhile.
    assert.equal(backup.code, 0, backup.stderr);
    assert.ok(before, 'the backup wrote a temporary file beside the target');
    assert.deepEqual(writer.failures, [], 'every write during the backup succeeded');
    const report = JSON.parse(backup.stdout) as { target: string; pages: number; bytes: number; integrity: string; migrations: string[] };
    assert.equal(report.target, target);
    assert.equal(report.integrity, 'ok');
    assert.equal(report.bytes, fs.statSync(target).size);
    assert.ok(report.pages > 10_000, `the padding alone is 10000 pages; got ${report.pages}`);
    assert.equal(fs.statSync(target).mode & 0o777, 0o600);
    assert.deepEqual(partials(backupDir), [], 'no temporary file is left');

    // The copy: sound, with every acknowledged creation from before the backup and none sent after it.
    const copy = openReadOnly(target);
    const live = openReadOnly(path.join(dataDir, 'edgeplane.db'));
    assert.deepEqual(rows(copy, 'pragma integrity_check'), [{ integrity_check: 'ok' }]);
    assert.deepEqual(rows(copy, 'pragma foreign_key_check'), [], 'no row names a row that is missing');
    assert.deepEqual(
      report.migrations,
      rows<{ name: string }>(live, 'select name from kysely_migration order by name').map((r) => r.name),
    );
    assert.ok(report.migrations.includes('0001-foundation'));
    const copied = { ip_policies: ids(copy, 'ip_policies'), ip_policy_rules: ids(copy, 'ip_policy_rules') };
    const missing = before.filter((c) => !copied[c.kind].has(c.id));
    assert.deepEqual(missing, [], 'every creation acknowledged before the backup started is in the copy');
    const later = writer.acknowledged.filter((c) => c.sentAfterBackup && copied[c.kind].has(c.id));
    assert.deepEqual(later, [], 'nothing sent after the backup ended is in the copy');
    const orphans = rows(copy, 'select r.id from ip_policy_rules r left join ip_policies p on p.id = r.ip_policy_id where p.id is null');
    assert.deepEqual(orphans, [], 'every rule in the copy has its policy');
    const liveIds = { ip_policies: ids(live, 'ip_policies'), ip_policy_rules: ids(live, 'ip_policy_rules') };
    for (const kind of ['ip_policies', 'ip_policy_rules'] as const) {
      assert.deepEqual(
        [...copied[kind]].filter((id) => !liveIds[kind].has(id)),
        [],
        `every ${kind} row in the copy exists in the store`,
      );
    }
    assert.deepEqual(rows(copy, 'select count(*) as n from backup_test_padding'), [{ n: 10_000 }]);
    copy.close();
    live.close();

    // edgeplane opens the copy as a store.
    const elsewhere = tempDir();
    fs.copyFileSync(target, path.join(elsewhere, 'edgeplane.db'));
    const listed = runSync(['accounts', 'list', '--json', '--data-dir', elsewhere]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(
      (JSON.parse(listed.stdout) as { accounts: { id: string }[] }).accounts.map((a) => a.id),
      [accountId],
    );

    // Restore (the server stopped above): move the store aside, put the copy in its place, start again.
    const aside = path.join(dataDir, 'before-restore');
    fs.mkdirSync(aside);
    for (const name of ['edgeplane.db', 'edgeplane.db-wal', 'edgeplane.db-shm']) {
      if (fs.existsSync(path.join(dataDir, name))) fs.renameSync(path.join(dataDir, name), path.join(aside, name));
    }
    fs.copyFileSync(target, path.join(dataDir, 'edgeplane.db'));
    const restored = await serve(dataDir);
    try {
      const sample = [...before.slice(0, 5), ...before.slice(-5)];
      for (const c of sample) assert.equal(await getStatus(restored, token, `${c.kind}/${c.id}`), 200, `${c.kind}/${c.id} is back`);
      const afterBackup = writer.acknowledged.filter((c) => c.sentAfterBackup).slice(0, 5);
      for (const c of afterBackup) assert.equal(await getStatus(restored, token, `${c.kind}/${c.id}`), 404, `${c.kind}/${c.id} came after the backup`);
    } finally {
      await restored.close();
    }
  });

  it('copies one moment of the store: commits between its steps neither restart the copy nor appear in it', async () => {
    // In process, so that a commit lands between every two steps of the copy, deterministically.
    const file = path.join(tempDir(), 'edgeplane.db');
    const writer = new BetterSqlite3(file);
    retained.push(writer);
    writer.exec('pragma journal_mode = wal; create table t (b blob)');
    writer.exec('with recursive n(i) as (select 1 union all select i + 1 from n where i < 3000) insert into t select randomblob(4000) from n');
    const insert = writer.prepare('insert into t values (randomblob(10))');
    retained.push(insert);
    const seen: number[] = [];
    const target = path.join(tempDir(), 'copy.db');
    const result = await backupSqlite(file, target, ({ remainingPages }) => {
      seen.push(remainingPages);
      // A copy that starts over on every commit would never end.
      if (seen.length > 100) throw new Error(`the copy restarted: remaining pages ${seen.slice(0, 10).join(', ')}, …`);
      insert.run();
    });
    assert.ok(seen.length >= 3, `the copy took ${seen.length} steps`);
    assert.deepEqual(
      seen,
      [...seen].sort((a, b) => b - a),
      'the pages left only go down',
    );
    assert.equal(seen.at(-1), 0);
    const copy = openReadOnly(target);
    assert.deepEqual(rows(copy, 'select count(*) as n from t'), [{ n: 3000 }], 'the rows committed during the copy are not in it');
    assert.deepEqual(rows(writer, 'select count(*) as n from t'), [{ n: 3000 + seen.length }]);
    assert.equal(result.bytes, fs.statSync(target).size);
    assert.deepEqual(result.migrations, [], 'not an edgeplane store: no migrations');
  });

  it('refuses a target that exists (exit 2) and leaves it as it was', () => {
    const dataDir = tempDir();
    assert.equal(runSync(['migrate', '--data-dir', dataDir]).code, 0);
    const backupDir = tempDir();
    const target = path.join(backupDir, 'precious.db');
    fs.writeFileSync(target, 'an older backup\n');
    const res = runSync(['backup', target, '--data-dir', dataDir]);
    assert.equal(res.code, 2, res.stderr);
    assert.match(res.stderr, /precious\.db exists already: a backup never overwrites a file/);
    assert.equal(fs.readFileSync(target, 'utf8'), 'an older backup\n');
    assert.deepEqual(fs.readdirSync(backupDir), ['precious.db']);
  });

  it('refuses a PostgreSQL store (exit 2), showing a pg_dump command without the password', () => {
    const target = path.join(tempDir(), 'edgeplane.dump');
    const res = runSync(['backup', target, '--database-url', 'postgres://edgeplane:s3cret@127.0.0.1:1/edgeplane']);
    assert.equal(res.code, 2, res.stderr);
    assert.match(
      res.stderr,
      /copies a SQLite store only. Use pg_dump, e\.g\.: pg_dump --format=custom --file=\S+edgeplane\.dump 'postgres:\/\/edgeplane@127\.0\.0\.1:1\/edgeplane'/,
    );
    assert.doesNotMatch(res.stderr, /s3cret/);
    assert.ok(!fs.existsSync(target));
  });

  it('keeps no copy that fails its integrity check (exit 2)', () => {
    const dataDir = tempDir();
    corruptStore(path.join(dataDir, 'edgeplane.db'));
    const backupDir = tempDir();
    const res = runSync(['backup', path.join(backupDir, 'copy.db'), '--data-dir', dataDir]);
    assert.equal(res.code, 2, res.stderr);
    assert.match(res.stderr, /the copy failed SQLite's integrity_check, so it was not kept: .*t_x/);
    assert.deepEqual(fs.readdirSync(backupDir), [], 'neither the copy nor a temporary file is left');
  });

  it('needs FILE, and a store to copy (exit 2)', () => {
    const none = runSync(['backup', '--data-dir', tempDir()]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /'backup' needs FILE/);
    const backupDir = tempDir();
    const missing = runSync(['backup', path.join(backupDir, 'copy.db'), '--data-dir', path.join(tempDir(), 'missing')]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /there is no store at .*missing\/edgeplane\.db/);
    assert.deepEqual(fs.readdirSync(backupDir), []);
  });
});
