// A rolling restart under load, as an operator does it: two `edgeplane serve` processes on one
// PostgreSQL database behind a round-robin balancer, clients writing all the while; each instance
// in turn gets SIGTERM, must drain and exit 0, and is started again. No acknowledged write may be
// lost, and no answer may be a 5xx other than the documented 503s (which clients retry, with the
// same Idempotency-Key, so a retried write is not made twice).
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { schemaUrl } from '../helpers/harness.js';
import { freePort } from '../helpers/ports.js';

const pgUrl = process.env.EDGEPLANE_TEST_DATABASE_URL;
const root = path.resolve(import.meta.dirname, '../..');
const cli = [process.execPath, '--import', 'tsx', path.join(root, 'src/cli.ts')];

interface Instance {
  port: number;
  process?: ChildProcess;
  output: string;
}

describe('rolling restart of two instances under load', { skip: !pgUrl && 'EDGEPLANE_TEST_DATABASE_URL is not set (instances share PostgreSQL)' }, () => {
  const schema = `ep_roll_${randomBytes(5).toString('hex')}`;
  const databaseUrl = schemaUrl(pgUrl ?? '', schema);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'edgeplane-roll-'));
  const env = {
    ...process.env,
    EDGEPLANE_DATABASE_URL: databaseUrl,
    EDGEPLANE_DATA_DIR: dataDir,
    EDGEPLANE_MASTER_KEY: randomBytes(32).toString('base64'),
    EDGEPLANE_TLS: 'off',
    EDGEPLANE_BOOTSTRAP: 'off',
    EDGEPLANE_LOG_LEVEL: 'warn',
    EDGEPLANE_RATE_LIMIT: '0',
  };
  const instances: Instance[] = [];
  let balancer: http.Server | undefined;

  after(async () => {
    for (const instance of instances) instance.process?.kill('SIGKILL');
    balancer?.closeAllConnections();
    balancer?.close();
    const admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    await admin.query(`drop schema if exists ${schema} cascade`);
    await admin.end();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function start(instance: Instance): Promise<void> {
    instance.output = '';
    const child = spawn(cli[0]!, [...cli.slice(1), 'serve'], { cwd: root, env: { ...env, EDGEPLANE_LISTEN: `127.0.0.1:${instance.port}` } });
    instance.process = child;
    child.stdout!.on('data', (c) => (instance.output += c));
    child.stderr!.on('data', (c) => (instance.output += c));
    const deadline = Date.now() + 60_000;
    for (;;) {
      const ready = await fetch(`http://127.0.0.1:${instance.port}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ready) return;
      if (child.exitCode !== null || Date.now() > deadline) assert.fail(`instance on ${instance.port} did not become ready:\n${instance.output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** SIGTERM, then the exit code (within 15 s). */
  async function stop(instance: Instance): Promise<number | null> {
    const child = instance.process!;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 15_000));
    const outcome = await Promise.race([exited, timeout]);
    assert.notEqual(outcome, 'timeout', `instance on ${instance.port} did not exit after SIGTERM:\n${instance.output}`);
    return outcome as number | null;
  }

  /**
   * A round-robin balancer with keep-alive connections, as nginx with `proxy_next_upstream error`:
   * a request whose connection failed before any answer is sent to the other instance; an answer
   * is passed on as it is.
   */
  async function startBalancer(): Promise<number> {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
    let next = 0;
    balancer = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (c: Buffer) => chunks.push(c));
      request.on('end', () => {
        const body = Buffer.concat(chunks);
        const first = next++;
        const attempt = (tries: number) => {
          // The first try by turn, the retry on the other instance.
          const target = instances[(first + 2 - tries) % instances.length]!;
          const upstream = http.request(
            { host: '127.0.0.1', port: target.port, method: request.method, path: request.url, headers: request.headers, agent },
            (answer) => {
              response.writeHead(answer.statusCode ?? 502, answer.headers);
              answer.pipe(response);
            },
          );
          upstream.on('error', () => {
            if (response.headersSent) return response.destroy();
            if (tries > 1) return attempt(tries - 1);
            response.writeHead(502, { 'content-type': 'text/plain' }).end('no instance answered');
          });
          upstream.end(body);
        };
        attempt(2);
      });
    });
    const port = await freePort();
    await new Promise<void>((resolve) => balancer!.listen(port, '127.0.0.1', resolve));
    return port;
  }

  it('drains each instance on SIGTERM (exit 0), loses no acknowledged write, and answers no 5xx but the documented 503', async () => {
    // The store and an account, made with the CLI as an operator would.
    const admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await admin.end();
    const made = spawnSync(cli[0]!, [...cli.slice(1), 'accounts', 'create', '--name', 'rolling', '--json'], { cwd: root, env, encoding: 'utf8' });
    assert.equal(made.status, 0, made.stderr);
    const token = JSON.parse(made.stdout).token as string;

    instances.push({ port: await freePort(), output: '' }, { port: await freePort(), output: '' });
    await Promise.all(instances.map(start));
    const entry = `http://127.0.0.1:${await startBalancer()}`;

    const acknowledged: string[] = [];
    const answers = new Map<number, number>();
    const unexpected: string[] = [];
    let writing = true;
    const count = (status: number) => answers.set(status, (answers.get(status) ?? 0) + 1);
    const writer = async (n: number) => {
      while (writing) {
        const key = randomUUID();
        // A client retries a 503 with the same Idempotency-Key.
        for (let tries = 0; tries < 20; tries++) {
          const res = await fetch(`${entry}/ip_policies`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'service-version': '2', 'content-type': 'application/json', 'idempotency-key': key },
            body: JSON.stringify({ description: `writer ${n}` }),
          });
          const text = await res.text();
          count(res.status);
          if (res.status === 201) {
            acknowledged.push(JSON.parse(text).id);
            break;
          }
          const documented = res.status === 503 && /"error_code":"ERR_EP_2\d\d"/.test(text) && res.headers.get('retry-after') !== null;
          if (!documented) unexpected.push(`${res.status} ${text.slice(0, 200)}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    };
    const writers = Array.from({ length: 6 }, (_, n) => writer(n));
    try {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      for (const instance of instances) {
        assert.equal(await stop(instance), 0, `a drained instance exits 0:\n${instance.output}`);
        await new Promise((resolve) => setTimeout(resolve, 500));
        await start(instance);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    } finally {
      writing = false;
      await Promise.all(writers);
    }

    assert.deepEqual(unexpected, [], 'only documented 503s besides 201 (and the balancer never lacked an instance to answer)');
    assert.ok(acknowledged.length > 50, `writes went on through the restarts (${acknowledged.length})`);
    assert.equal(new Set(acknowledged).size, acknowledged.length, 'each acknowledged write once');
    // Every acknowledged write is there, and nothing more: no write was made twice by a retry.
    const check = new pg.Client({ connectionString: databaseUrl });
    await check.connect();
    try {
      const { rows } = await check.query<{ id: string }>('select id from ip_policies');
      const stored = new Set(rows.map((r) => r.id));
      const lost = acknowledged.filter((id) => !stored.has(id));
      assert.deepEqual(lost, [], 'no acknowledged write lost');
      assert.equal(stored.size, acknowledged.length, 'no write made twice');
    } finally {
      await check.end();
    }
    console.log(`# answers: ${JSON.stringify(Object.fromEntries(answers))}`);
  });
});
