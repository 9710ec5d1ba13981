// The CLI as an operator runs it: a real process, real stores, real HTTPS with the generated CA.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { startServer } from '../../src/main.js';
import { schemaUrl } from '../helpers/harness.js';

const root = path.resolve(import.meta.dirname, '../..');
const cli = [process.execPath, '--import', 'tsx', path.join(root, 'src/cli.ts')];
const dirs: string[] = [];
const pgUrl = process.env.EDGEPLANE_TEST_DATABASE_URL;

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'edgeplane-cli-'));
  dirs.push(dir);
  return dir;
}

function run(args: string[], env: Record<string, string> = {}) {
  const res = spawnSync(cli[0]!, [...cli.slice(1), ...args], {
    cwd: root,
    env: { ...process.env, EDGEPLANE_LOG_LEVEL: 'silent', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}

function httpsGet(url: string, ca: string, token: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { ca, headers: { Authorization: `Bearer ${token}`, 'Service-Version': '2' } }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
}

function httpsRequest(url: string, ca: string, token: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers = { Authorization: `Bearer ${token}`, 'Service-Version': '2', 'Content-Type': 'application/json' };
    const req = https.request(url, { method: 'POST', ca, headers }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Starts `serve`, waits for the listening line, returns what it printed so far and a stop. */
async function serve(dataDir: string): Promise<{ output: () => string; url: string; stop: () => Promise<number | null> }> {
  const child = spawn(cli[0]!, [...cli.slice(1), 'serve'], {
    cwd: root,
    env: { ...process.env, EDGEPLANE_DATA_DIR: dataDir, EDGEPLANE_LISTEN: '127.0.0.1:0', EDGEPLANE_LOG_LEVEL: 'warn' },
  });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (out += c));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${out}`)), 30_000);
    const check = () => {
      const m = /listening on (https:\/\/\S+)/.exec(out);
      // The token lines follow the listening line on a first start; wait for the curl line.
      if (m && (out.includes('curl ') || !out.includes('Created account'))) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout.on('data', check);
    child.on('exit', () => reject(new Error(`serve exited:\n${out}`)));
  });
  await new Promise((r) => setTimeout(r, 200));
  return {
    output: () => out,
    url,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', (code) => resolve(code));
        child.kill('SIGTERM');
      }),
  };
}

/** The file the first start named for the admin token, and the token in it. */
function tokenFile(out: string): { file: string; token: string } {
  const file = /token was written to (\S+) \(/.exec(out)?.[1];
  assert.ok(file, out);
  const token = fs.readFileSync(file, 'utf8').trim();
  assert.match(token, /^[0-9A-Za-z]{27}_\w+$/);
  return { file, token };
}

after(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('edgeplane CLI', () => {
  it('accounts create --json prints exactly one JSON object with a working token', async () => {
    const dataDir = tempDir();
    const res = run(['accounts', 'create', '--name', 'acme', '--json'], { EDGEPLANE_DATA_DIR: dataDir });
    assert.equal(res.code, 0, res.stderr);
    const lines = res.stdout.trim().split('\n');
    assert.equal(lines.length, 1);
    const issued = JSON.parse(lines[0]!);
    assert.deepEqual(Object.keys(issued).sort(), ['account_id', 'api_key_id', 'token', 'user_id']);
    assert.match(issued.account_id, /^acct_/);
    assert.match(issued.user_id, /^usr_/);
    assert.ok(issued.token.startsWith(issued.api_key_id.slice(3) + '_'));

    const users = run(['users', 'create', '--account', issued.account_id, '--name', 'dana', '--role', 'read_only', '--json'], { EDGEPLANE_DATA_DIR: dataDir });
    assert.equal(users.code, 0, users.stderr);
    const user = JSON.parse(users.stdout);
    assert.equal(user.account_id, issued.account_id);
    assert.match(user.user_id, /^usr_/);

    const list = run(['accounts', 'list', '--json'], { EDGEPLANE_DATA_DIR: dataDir });
    assert.deepEqual(
      JSON.parse(list.stdout).accounts.map((a: { id: string; name: string }) => [a.id, a.name]),
      [[issued.account_id, 'acme']],
    );
  });

  it('refuses bad input with a message and exit code 2', () => {
    const dataDir = tempDir();
    assert.equal(run(['migrate'], { EDGEPLANE_DATA_DIR: dataDir }).code, 0);
    const badRole = run(['users', 'create', '--account', 'acct_x', '--name', 'x', '--role', 'owner'], { EDGEPLANE_DATA_DIR: dataDir });
    assert.equal(badRole.code, 2);
    assert.match(badRole.stderr, /role must be one of admin, developer, read_only/);
    const noAccount = run(['users', 'create', '--account', 'acct_missing', '--name', 'x', '--role', 'admin'], { EDGEPLANE_DATA_DIR: dataDir });
    assert.equal(noAccount.code, 2);
    assert.match(noAccount.stderr, /no account with id 'acct_missing'/);
    const missingFlag = run(['accounts', 'create'], { EDGEPLANE_DATA_DIR: dataDir });
    assert.equal(missingFlag.code, 2);
    assert.match(missingFlag.stderr, /--name is required/);
    const badConfig = run(['migrate'], { EDGEPLANE_DATA_DIR: dataDir, EDGEPLANE_LISTEN: 'nope', EDGEPLANE_LOG_LEVEL: 'loud' });
    assert.equal(badConfig.code, 2);
    assert.match(badConfig.stderr, /EDGEPLANE_LISTEN/);
    assert.match(badConfig.stderr, /EDGEPLANE_LOG_LEVEL/, 'every problem is reported at once');
  });

  it('flags override environment variables', () => {
    const envDir = tempDir();
    const flagDir = tempDir();
    const res = run(['accounts', 'create', '--name', 'f', '--json', '--data-dir', flagDir], { EDGEPLANE_DATA_DIR: envDir });
    assert.equal(res.code, 0, res.stderr);
    assert.ok(fs.existsSync(path.join(flagDir, 'edgeplane.db')));
    assert.ok(!fs.existsSync(path.join(envDir, 'edgeplane.db')));
  });

  it('serve starts on SQLite over HTTPS with a generated CA and hands over the first admin token once', async () => {
    const dataDir = tempDir();
    const first = await serve(dataDir);
    try {
      const out = first.output();
      const caFile = path.join(dataDir, 'tls', 'ca.crt');
      assert.ok(out.includes(`--cacert ${caFile}`), out);
      const { file, token } = tokenFile(out);
      assert.ok(out.includes(`curl --cacert ${caFile} -H "Authorization: Bearer $(cat ${file})"`), out);
      assert.equal(fs.statSync(path.join(dataDir, 'tls', 'ca.key')).mode & 0o777, 0o600);
      const res = await httpsGet(`${first.url}/api_keys`, fs.readFileSync(caFile, 'utf8'), token);
      assert.equal(res.status, 200, res.body);
      assert.equal(JSON.parse(res.body).keys.length, 1);
    } finally {
      assert.equal(await first.stop(), 0);
    }
    const second = await serve(dataDir);
    try {
      assert.ok(!/Created account|token was written/.test(second.output()), 'no second default account');
      assert.match(second.output(), /using a local CA/);
    } finally {
      await second.stop();
    }
  });

  it('serve keeps the data directory and its secrets owner-only, and never writes the token to stdout or stderr', async () => {
    // A data directory that does not exist yet: serve creates it.
    const dataDir = path.join(tempDir(), 'data');
    const mode = (file: string) => fs.statSync(file).mode & 0o777;
    const secrets = ['edgeplane.db', 'edgeplane.db-wal', 'edgeplane.db-shm', 'master.key', 'tls/ca.key', 'tls/server.key'];
    const first = await serve(dataDir);
    try {
      assert.equal(mode(dataDir), 0o700);
      assert.equal(mode(path.join(dataDir, 'tls')), 0o700);
      // The store runs in WAL mode: its -wal and -shm files exist while it is open.
      for (const name of secrets) assert.equal(mode(path.join(dataDir, name)), 0o600, name);

      // Piped stdout is no terminal: the token goes to an owner-only file that the output names.
      const out = first.output();
      const { file, token } = tokenFile(out);
      assert.equal(mode(file), 0o600);
      assert.ok(!out.includes(token), 'the token is in neither stdout nor stderr');
      const res = await httpsGet(`${first.url}/api_keys`, fs.readFileSync(path.join(dataDir, 'tls', 'ca.crt'), 'utf8'), token);
      assert.equal(res.status, 200, res.body);
    } finally {
      assert.equal(await first.stop(), 0);
    }

    // A data directory from an older version: its files are tightened at start, the directory
    // itself (which may be shared with other things) is reported.
    fs.chmodSync(dataDir, 0o755);
    for (const name of ['edgeplane.db', 'master.key', 'tls/ca.key', 'tls/server.key']) fs.chmodSync(path.join(dataDir, name), 0o644);
    fs.chmodSync(path.join(dataDir, 'tls'), 0o755);
    const second = await serve(dataDir);
    try {
      for (const name of secrets) assert.equal(mode(path.join(dataDir, name)), 0o600, name);
      assert.equal(mode(path.join(dataDir, 'tls')), 0o700);
      const warning = second
        .output()
        .split('\n')
        .find((line) => line.includes(`"data_dir":"${dataDir}"`));
      assert.ok(warning && warning.includes('"level":40') && warning.includes('"mode":"0755"'), second.output());
    } finally {
      assert.equal(await second.stop(), 0);
    }
  });

  it('serve shows the first admin token on a terminal, and then writes no file', async () => {
    const dataDir = tempDir();
    const lines: string[] = [];
    const config = loadConfig({ dataDir, listen: '127.0.0.1:0', tls: 'off', logLevel: 'silent' });
    const server = await startServer(config, { say: (line) => lines.push(line), terminal: true, logger: pino({ level: 'silent' }) });
    try {
      const token = /token: (\S+)/.exec(lines.join('\n'))?.[1];
      assert.ok(token, lines.join('\n'));
      assert.ok(!fs.existsSync(path.join(dataDir, 'first-admin-token')));
      const res = await fetch(`${server.url}/api_keys`, { headers: { Authorization: `Bearer ${token}`, 'Service-Version': '2' } });
      assert.equal(res.status, 200);
    } finally {
      await server.close();
    }
  });

  it('starts the data plane by default, next to the API, and the real agent binds an endpoint on the printed listener', async () => {
    const dataDir = tempDir();
    const lines: string[] = [];
    // The API on a free port: the agent and public listeners take free ports too.
    const config = loadConfig({ dataDir, listen: '127.0.0.1:0', logLevel: 'silent' });
    const server = await startServer(config, { say: (line) => lines.push(line), terminal: true, logger: pino({ level: 'silent' }) });
    try {
      assert.ok(server.agents && server.agents.address.port > 0, lines.join('\n'));
      const said = lines.join('\n');
      assert.match(said, new RegExp(`agents dial in at 127\\.0\\.0\\.1:${server.agents.address.port} \\(TLS\\)`));
      const httpsPort = Number(/public HTTPS and TLS endpoints on 127\.0\.0\.1:(\d+)/.exec(said)?.[1]);
      assert.ok(httpsPort > 0 && /public HTTP endpoints on 127\.0\.0\.1:\d+/.test(said), said);
      const ca = fs.readFileSync(path.join(dataDir, 'tls', 'ca.crt'), 'utf8');
      const token = /token: (\S+)/.exec(said)![1]!;
      const created = await httpsRequest(`${server.url}/credentials`, ca, token, '{}');
      const credential = JSON.parse(created.body) as { token: string };
      const { default: ngrok } = await import('@ngrok/ngrok');
      const agent = await new ngrok.SessionBuilder()
        .authtoken(credential.token)
        .serverAddr(`127.0.0.1:${server.agents.address.port}`)
        .caCert(Buffer.from(ca))
        .connect();
      try {
        const endpoint = await agent.httpEndpoint().listen(false);
        assert.match(endpoint.url() ?? '', new RegExp(`^https://[a-z0-9]{16}\\.edgeplane\\.app:${httpsPort}$`));
      } finally {
        await agent.close();
      }
    } finally {
      await server.close();
    }
  });

  it('bin/edgeplane runs and prints its usage', () => {
    const res = spawnSync(path.join(root, 'bin/edgeplane'), ['--help'], { encoding: 'utf8' });
    assert.equal(res.status, 0, res.stderr);
    assert.match(res.stdout, /accounts create --name NAME/);
  });

  it('--version prints the package version and exits 0', () => {
    const res = spawnSync(path.join(root, 'bin/edgeplane'), ['--version'], { encoding: 'utf8' });
    assert.equal(res.status, 0, res.stderr);
    const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
    assert.equal(res.stdout, `edgeplane ${version} (Node.js ${process.versions.node})\n`);
  });

  it(
    'migrate applies the migrations to PostgreSQL',
    { skip: !process.env.EDGEPLANE_TEST_DATABASE_URL && 'EDGEPLANE_TEST_DATABASE_URL is not set' },
    async () => {
      const url = process.env.EDGEPLANE_TEST_DATABASE_URL!;
      const schema = `ep_cli_${randomBytes(5).toString('hex')}`;
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query(`create schema ${schema}`);
      try {
        const scoped = schemaUrl(url, schema);
        const first = run(['migrate'], { EDGEPLANE_DATABASE_URL: scoped });
        assert.equal(first.code, 0, first.stderr);
        assert.match(first.stdout, /applied: 0001-foundation/);
        const again = run(['migrate'], { EDGEPLANE_DATABASE_URL: scoped });
        assert.match(again.stdout, /already up to date/);
        const tables = await admin.query(`select table_name from information_schema.tables where table_schema = $1 order by 1`, [schema]);
        assert.ok(tables.rows.map((r) => r.table_name).includes('api_keys'));
        const created = run(['accounts', 'create', '--name', 'pg', '--json'], { EDGEPLANE_DATABASE_URL: scoped });
        assert.equal(created.code, 0, created.stderr);
      } finally {
        await admin.query(`drop schema ${schema} cascade`);
        await admin.end();
      }
    },
  );
});

describe('edgeplane CLI for a newcomer', () => {
  it('prints usage and exits 2 with no command; a group lists its commands; each command has its own help', () => {
    const none = run([]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /^usage: edgeplane <command>/);
    const group = run(['accounts']);
    assert.equal(group.code, 2);
    assert.match(group.stderr, /accounts create --name NAME/);
    assert.match(group.stderr, /accounts list/);
    assert.doesNotMatch(group.stderr, /users create/);
    const groupHelp = run(['accounts', '--help']);
    assert.equal(groupHelp.code, 0);
    assert.match(groupHelp.stdout, /accounts list/);
    const help = run(['api-keys', 'create', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^usage: edgeplane api-keys create --account ID \[--user ID\]/);
    assert.doesNotMatch(help.stdout, /ip-restrictions/);
    const stray = run(['accounts', 'list', '--name', 'x']);
    assert.equal(stray.code, 2);
    assert.match(stray.stderr, /'accounts list' takes no --name/);
  });

  it('refuses a data directory without a store for a command that reads one, creating nothing, and says when a list is empty', () => {
    const missing = path.join(tempDir(), 'missing');
    const res = run(['accounts', 'list', '--data-dir', missing]);
    assert.equal(res.code, 2);
    assert.match(res.stderr, /there is no store at .*edgeplane\.db/);
    assert.ok(!fs.existsSync(missing), 'no store was created');
    const empty = tempDir();
    assert.equal(run(['migrate', '--data-dir', empty]).code, 0);
    const listed = run(['accounts', 'list', '--data-dir', empty]);
    assert.equal(listed.code, 0);
    assert.match(listed.stdout, /^no accounts yet/);
  });

  it('keeps account names unique, and user names within an account (exit 3), and mints a working admin key that a second start points at', async () => {
    const dataDir = tempDir();
    const dir = ['--data-dir', dataDir];
    const first = JSON.parse(run(['accounts', 'create', '--name', 'a', '--json', ...dir]).stdout);
    const alice = ['users', 'create', '--account', first.account_id, '--name', 'alice', ...dir];
    assert.equal(run([...alice, '--role', 'developer']).code, 0);
    const again = run([...alice, '--role', 'admin']);
    assert.equal(again.code, 3, again.stderr);
    assert.match(again.stderr, /already has a user named 'alice'/);
    const second = JSON.parse(run(['accounts', 'create', '--name', 'b', '--json', ...dir]).stdout);
    assert.equal(run(['users', 'create', '--account', second.account_id, '--name', 'alice', '--role', 'admin', ...dir]).code, 0, 'another account may');
    // Account names are unique too: a retried `accounts create` makes no second account.
    const twice = run(['accounts', 'create', '--name', 'b', '--json', ...dir]);
    assert.equal(twice.code, 3, twice.stderr);
    assert.equal(twice.stderr, `edgeplane: an account named 'b' exists already (${second.account_id}); account names are unique\n`);
    assert.equal(twice.stdout, '');

    const minted = run(['api-keys', 'create', '--account', first.account_id, '--json', ...dir]);
    assert.equal(minted.code, 0, minted.stderr);
    const key = JSON.parse(minted.stdout);
    assert.equal(key.user_id, first.user_id, "the account's oldest admin");
    assert.equal(run(['api-keys', 'create', '--account', first.account_id, '--user', 'usr_none', ...dir]).code, 2);

    const lines: string[] = [];
    const config = loadConfig({ dataDir, listen: '127.0.0.1:0', tls: 'off', logLevel: 'silent', baseUrl: 'https://api.example.com' });
    const server = await startServer(config, { say: (line) => lines.push(line), terminal: true, logger: pino({ level: 'silent' }) });
    try {
      const port = (server.app.server.address() as { port: number }).port;
      const said = lines.join('\n');
      assert.match(said, new RegExp(`edgeplane listening on http://127\\.0\\.0\\.1:${port}, base URL https://api\\.example\\.com \\(store: sqlite\\)`));
      assert.match(said, new RegExp(`holds 2 accounts \\(the first: ${first.account_id}.*edgeplane api-keys create --account ${first.account_id}`));
      assert.doesNotMatch(said, /token: |Created account/, 'a second start creates and prints no token');
      const res = await fetch(`http://127.0.0.1:${port}/api_keys`, { headers: { Authorization: `Bearer ${key.token}`, 'Service-Version': '2' } });
      assert.equal(res.status, 200);
    } finally {
      await server.close();
    }
  });

  it('says in one line, without the password or a stack trace, why the store cannot be opened, and exits 2', () => {
    for (const command of ['migrate', 'serve']) {
      const res = run([command, '--database-url', 'postgres://edgeplane:s3cret@127.0.0.1:1/edgeplane', '--data-dir', tempDir()]);
      assert.equal(res.code, 2, res.stderr);
      assert.equal(res.stderr.trim().split('\n').length, 1, res.stderr);
      assert.match(res.stderr, /^edgeplane: cannot connect to PostgreSQL at postgres:\/\/edgeplane@127\.0\.0\.1:1\/edgeplane: connection refused/);
      assert.doesNotMatch(res.stderr, /s3cret/);
    }
  });

  it('says in one line which listener cannot bind, and the setting that moves it, and exits 2', async () => {
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as net.AddressInfo).port;
    try {
      const cases: [string[], string][] = [
        [['--listen', `127.0.0.1:${port}`], 'EDGEPLANE_LISTEN'],
        [['--listen', '127.0.0.1:0', '--agent-listen', `127.0.0.1:${port}`], 'EDGEPLANE_AGENT_LISTEN'],
        [['--listen', '127.0.0.1:0', '--ingress-https-listen', `127.0.0.1:${port}`], 'EDGEPLANE_INGRESS_HTTPS_LISTEN'],
        [['--listen', '127.0.0.1:0', '--dns-listen', `127.0.0.1:${port}`], 'EDGEPLANE_DNS_LISTEN'],
      ];
      for (const [flags, setting] of cases) {
        const res = run(['serve', '--data-dir', tempDir(), ...flags]);
        assert.equal(res.code, 2, `${setting}: ${res.stderr}`);
        assert.equal(res.stderr.trim().split('\n').length, 1, res.stderr);
        assert.equal(
          res.stderr.trim(),
          `edgeplane: cannot listen on 127.0.0.1:${port} (${setting}): the address is in use (another program, or another edgeplane, listens there); set ${setting} (or its flag) to another host:port`,
        );
      }
    } finally {
      busy.close();
    }
  });

  it('names a database that does not exist, and how to create it', { skip: !pgUrl && 'EDGEPLANE_TEST_DATABASE_URL is not set' }, () => {
    const url = new URL(pgUrl!);
    url.pathname = '/edgeplane_no_such_database';
    const res = run(['migrate', '--database-url', url.toString()]);
    assert.equal(res.code, 2, res.stderr);
    assert.match(res.stderr, /the database 'edgeplane_no_such_database' does not exist .*\(createdb -h /);
  });

  it('npm start hands its process to the server: one SIGTERM to npm stops it', async () => {
    const dataDir = tempDir();
    const child = spawn('npm', ['start'], {
      cwd: root,
      env: { ...process.env, EDGEPLANE_DATA_DIR: dataDir, EDGEPLANE_LISTEN: '127.0.0.1:0', EDGEPLANE_TLS: 'off', EDGEPLANE_LOG_LEVEL: 'warn' },
    });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`npm start did not listen:\n${out}`)), 120_000);
      child.stdout.on('data', () => {
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
    });
    assert.equal((await fetch(`${url}/openapi.json`)).status, 200);
    child.kill('SIGTERM');
    assert.equal(await exited, 0, out);
    await assert.rejects(fetch(`${url}/openapi.json`), 'nothing listens after npm exited');
  });
});
