// When the database cannot be reached, drops the connections, is missing or does not answer
// in time, the API answers 503 with Retry-After and a code that says which, never 500, never
// crashes, and serves again by itself once the database is back.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { pino } from 'pino';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { migrate, openStore, type Store } from '../../src/db/store.js';
import { systemClock } from '../../src/core/time.js';
import { AccountService } from '../../src/accounts/account.service.js';
import { describeEachStore, startHarness, type Harness } from '../helpers/harness.js';
import { spawnServe, type ServeProcess } from '../helpers/serve-process.js';

const pgUrl = process.env.EDGEPLANE_TEST_DATABASE_URL;
const needsPostgres = { skip: !pgUrl && 'EDGEPLANE_TEST_DATABASE_URL is not set' };
const sqliteHolders: object[] = [];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A token of the right form: the lookup reaches the database whatever it holds. */
const someToken = `${'a'.repeat(27)}_${'b'.repeat(40)}`;

async function getKeys(base: string, token: string): Promise<{ status: number; retryAfter: string | null; code?: string }> {
  const res = await fetch(`${base}/api_keys`, { headers: { 'Service-Version': '2', Authorization: `Bearer ${token}` } });
  const body = (await res.json()) as { error_code?: string };
  return { status: res.status, retryAfter: res.headers.get('retry-after'), code: body.error_code };
}

/** Polls until `ok` holds, at most `ms`; the elapsed time, or a failure that names the last result. */
async function within(ms: number, attempt: () => Promise<{ ok: boolean; last: unknown }>): Promise<number> {
  const start = Date.now();
  let last: unknown;
  while (Date.now() - start < ms) {
    const r = await attempt();
    if (r.ok) return Date.now() - start;
    last = r.last;
    await sleep(100);
  }
  assert.fail(`not within ${ms} ms; last: ${JSON.stringify(last)}`);
}

describe('store outage', () => {
  let app: FastifyInstance;
  let store: Store;
  let base: string;

  before(async () => {
    const config = loadConfig({ tls: 'off', listen: '127.0.0.1:0', logLevel: 'silent' });
    // Nothing listens on port 1: every query fails to connect.
    config.database = { kind: 'postgres', url: 'postgres://postgres@127.0.0.1:1/test' };
    store = openStore(config.database);
    app = await buildApp(createDeps({ config, logger: pino({ level: 'silent' }), store, masterKey: randomBytes(32) }));
    await app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  });

  after(async () => {
    await app.close();
    await store.close();
  });

  it('answers 503 ERR_EP_260 with Retry-After', async () => {
    const res = await fetch(`${base}/api_keys`, { headers: { 'Service-Version': '2', Authorization: `Bearer ${someToken}` } });
    assert.equal(res.status, 503);
    assert.equal(res.headers.get('retry-after'), '2');
    const body = await res.json();
    assert.equal(body.error_code, 'ERR_EP_260');
  });
});

describe('PostgreSQL terminates the server’s connections under load', needsPostgres, () => {
  const schema = `ep_drop_${randomBytes(5).toString('hex')}`;
  const application = `edgeplane-drop-${randomBytes(5).toString('hex')}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'edgeplane-drop-'));
  let admin: pg.Client;
  let server: ServeProcess | undefined;
  let token: string;

  before(async () => {
    admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    const store = openStore({ kind: 'postgres', url: pgUrl! }, { schema });
    try {
      await migrate(store);
      token = (await new AccountService(store, systemClock).createAccount({ name: 'load' })).token;
    } finally {
      await store.close();
    }
  });

  after(async () => {
    await server?.stop();
    await admin.query(`drop schema ${schema} cascade`);
    await admin.end();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('does not crash, answers 503 with Retry-After and a store code, and recovers without a restart', async (t) => {
    // The real server in a process of its own: a crash shows as its exit, not as the test runner's.
    const url = new URL(pgUrl!);
    url.searchParams.set('application_name', application);
    url.searchParams.set('options', `-c search_path=${schema}`);
    server = await spawnServe({
      ...process.env,
      EDGEPLANE_DATABASE_URL: url.toString(),
      EDGEPLANE_DATA_DIR: dataDir,
      EDGEPLANE_TLS: 'off',
      EDGEPLANE_LISTEN: '127.0.0.1:0',
      EDGEPLANE_LOG_LEVEL: 'error',
      EDGEPLANE_BOOTSTRAP: 'off',
      // The load is one account's, and on a fast machine passes the default 1,200 requests a
      // minute: its 429s are not what this test is about.
      EDGEPLANE_RATE_LIMIT: '0',
    });
    const { base } = server;
    const exited = () => server!.exited();
    const headers = { 'Service-Version': '2', Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
    const call = async (method: string, p: string, body?: unknown) => {
      try {
        const res = await fetch(base + p, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
        const text = await res.text();
        return { status: res.status, retryAfter: res.headers.get('retry-after'), json: text ? JSON.parse(text) : undefined, text };
      } catch (error) {
        return { status: 0, retryAfter: null, json: undefined, text: String((error as Error).cause ?? error) };
      }
    };

    // Load: several clients each creating, changing, reading, listing and deleting keys.
    const failures: { status: number; code?: string; retryAfter: string | null; text: string }[] = [];
    let successes = 0;
    let stop = false;
    const record = (r: Awaited<ReturnType<typeof call>>) => {
      if (r.status >= 200 && r.status < 300) successes++;
      else failures.push({ status: r.status, code: r.json?.error_code, retryAfter: r.retryAfter, text: r.text.slice(0, 300) });
      return r;
    };
    const worker = async () => {
      while (!stop && !exited()) {
        const created = record(await call('POST', '/api_keys', { description: 'load' }));
        if (created.status !== 201) continue;
        const id = created.json.id as string;
        record(await call('PATCH', `/api_keys/${id}`, { metadata: 'changed' }));
        record(await call('GET', `/api_keys/${id}`));
        record(await call('GET', '/api_keys?limit=5'));
        record(await call('DELETE', `/api_keys/${id}`));
      }
    };
    const workers = Array.from({ length: 6 }, worker);

    // Terminate every backend of the server, several times, while the load runs.
    let terminated = 0;
    let failedDuringTerminations: number;
    let recoveredAfter: number;
    try {
      for (let round = 0; round < 20 && (round < 5 || failures.length === 0) && !exited(); round++) {
        await sleep(300);
        const { rows } = await admin.query('select pg_terminate_backend(pid) as done from pg_stat_activity where application_name = $1', [application]);
        terminated += rows.filter((r) => r.done).length;
      }
      await sleep(200);
      failedDuringTerminations = failures.length;
      assert.ok(!exited(), `the server process exited:\n${server.output()}`);
      // Recovery: within a few seconds of the last termination, requests succeed again.
      recoveredAfter = await within(5_000, async () => {
        const r = await call('GET', '/api_keys?limit=1');
        return { ok: r.status === 200, last: r };
      });
    } finally {
      stop = true;
      await Promise.all(workers);
    }
    const again = await Promise.all(Array.from({ length: 20 }, () => call('POST', '/api_keys', { description: 'after' })));

    const byCode = new Map<string, number>();
    for (const f of failures) byCode.set(`${f.status} ${f.code}`, (byCode.get(`${f.status} ${f.code}`) ?? 0) + 1);
    const codes = [...byCode].map(([k, n]) => `${k} ×${n}`);
    t.diagnostic(`${terminated} backends terminated; ${successes} answers 2xx; failed: ${codes.join(', ') || 'none'}; served again after ${recoveredAfter} ms`);
    assert.ok(!exited(), `the server process exited:\n${server.output()}`);
    assert.ok(terminated > 0, 'the test terminated backends of the server');
    assert.ok(failedDuringTerminations > 0, 'a terminated connection failed some request');
    for (const f of failures) {
      assert.equal(f.status, 503, `a failed request is a 503: ${JSON.stringify(f)}`);
      assert.ok(['ERR_EP_262', 'ERR_EP_263'].includes(f.code!), `with a store code: ${JSON.stringify(f)}`);
      assert.equal(f.retryAfter, '2', `with Retry-After: ${JSON.stringify(f)}`);
    }
    assert.ok(successes > 0);
    assert.deepEqual(
      again.map((r) => r.status),
      again.map(() => 201),
      JSON.stringify(again.filter((r) => r.status !== 201)),
    );
    assert.ok(!exited(), 'still running: no restart');
  });
});

describe('the database is missing, then created and migrated', needsPostgres, () => {
  const name = `ep_missing_${randomBytes(5).toString('hex')}`;
  let admin: pg.Client;
  let app: FastifyInstance;
  let store: Store;
  let deps: Deps;
  let base: string;
  let created = false;

  before(async () => {
    admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    const url = new URL(pgUrl!);
    url.pathname = `/${name}`;
    const config = loadConfig({ tls: 'off', listen: '127.0.0.1:0', logLevel: 'silent' });
    config.database = { kind: 'postgres', url: url.toString() };
    store = openStore(config.database);
    deps = createDeps({ config, logger: pino({ level: 'silent' }), store, masterKey: randomBytes(32) });
    app = await buildApp(deps);
    await app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  });

  after(async () => {
    await app?.close();
    await store?.close();
    // FORCE ends the connections to this database only: ours.
    if (created) await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  });

  it('answers 503 with its own code while the database or its tables are missing, and serves once they exist', async () => {
    const missing = await getKeys(base, someToken);
    assert.deepEqual(missing, { status: 503, retryAfter: '5', code: 'ERR_EP_264' }, 'no such database (3D000)');

    await admin.query(`create database ${name}`);
    created = true;
    const unmigrated = await getKeys(base, someToken);
    assert.deepEqual(unmigrated, { status: 503, retryAfter: '5', code: 'ERR_EP_264' }, 'no such table (42P01)');

    // The operator migrates from elsewhere (`edgeplane migrate`); the running server is not restarted.
    const url = new URL(pgUrl!);
    url.pathname = `/${name}`;
    const operator = openStore({ kind: 'postgres', url: url.toString() });
    await migrate(operator);
    await operator.close();
    const issued = await deps.accounts.createAccount({ name: 'after the outage' });
    await within(5_000, async () => {
      const r = await getKeys(base, issued.token);
      return { ok: r.status === 200, last: r };
    });
    assert.equal((await getKeys(base, someToken)).status, 401, 'an unknown token is a 401 again, not a 503');
  });
});

describeEachStore(
  'a write waits on a lock held elsewhere',
  (h) => {
    it('answers 503 ERR_EP_263 within about the statement timeout (500 ms), then succeeds once the lock is gone', async () => {
      const api = await h().newAccount();
      const key = (await api.post('/api_keys', { description: 'locked' })).json.id as string;
      let release: () => Promise<void>;
      if (h().kind === 'postgres') {
        // Another session holds the row, as a long transaction would.
        const holder = new pg.Client({ connectionString: h().databaseUrl });
        await holder.connect();
        await holder.query('begin');
        await holder.query('select id from api_keys where id = $1 for update', [key]);
        release = async () => {
          await holder.query('rollback');
          await holder.end();
        };
      } else {
        // Another process holds the file's write lock.
        const holder = new BetterSqlite3(h().databaseUrl.slice('sqlite:'.length));
        // Kept reachable, as the dialect keeps its own: on Node 24 better-sqlite3 12 aborts the
        // process when the garbage collector destroys one of its objects.
        sqliteHolders.push(holder);
        holder.exec('begin immediate');
        release = async () => {
          holder.exec('rollback');
          holder.close();
        };
      }
      try {
        const start = Date.now();
        const res = await Promise.race([api.patch(`/api_keys/${key}`, { description: 'changed' }), sleep(10_000).then(() => undefined)]);
        const elapsed = Date.now() - start;
        assert.ok(res, 'no answer within 10 s');
        assert.equal(res.status, 503, res.text);
        assert.equal(res.json.error_code, 'ERR_EP_263');
        assert.equal(res.headers.get('retry-after'), '2');
        assert.ok(elapsed >= 400 && elapsed < 3_000, `answered after ${elapsed} ms`);
      } finally {
        await release();
      }
      const retried = await api.patch(`/api_keys/${key}`, { description: 'changed' });
      assert.equal(retried.status, 200, retried.text);
      assert.equal(retried.json.description, 'changed');
    });
  },
  { databaseTimeouts: { statementMs: 500 } },
);

describe('every connection of the pool waits on a lock', needsPostgres, () => {
  let harness: Harness;
  before(async () => {
    harness = await startHarness('postgres', { databaseTimeouts: { statementMs: 2000, poolMs: 200 } });
  });
  after(async () => {
    await harness?.close();
  });

  it('answers 503 ERR_EP_263 after the pool timeout (200 ms) to a request that finds no free connection', async () => {
    const api = await harness.newAccount();
    const key = (await api.post('/api_keys', {})).json.id as string;
    const holder = new pg.Client({ connectionString: harness.databaseUrl });
    await holder.connect();
    await holder.query('begin');
    await holder.query('select id from api_keys where id = $1 for update', [key]);
    try {
      // The pool has 10 connections: ten changes wait on the row, the others on the pool.
      const start = Date.now();
      const answers = await Promise.all(
        Array.from({ length: 14 }, async () => {
          const res = await api.patch(`/api_keys/${key}`, { description: 'x' });
          return { status: res.status, code: res.json?.error_code, retryAfter: res.headers.get('retry-after'), ms: Date.now() - start };
        }),
      );
      for (const a of answers) assert.deepEqual([a.status, a.code, a.retryAfter], [503, 'ERR_EP_263', '2'], JSON.stringify(a));
      const early = answers.filter((a) => a.ms < 1500);
      assert.ok(early.length >= 1, `some answered before the statement timeout: ${JSON.stringify(answers.map((a) => a.ms))}`);
    } finally {
      await holder.query('rollback');
      await holder.end();
    }
    assert.equal((await api.patch(`/api_keys/${key}`, { description: 'y' })).status, 200);
  });
});
