// Per-account rate limits over real HTTP: counted per process, or in a real Redis shared by two
// instances, and loosened to per-process counts (never errors) while Redis is away. The limit
// does not depend on the store, so these run on SQLite only.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { after, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { startHarness, type Api, type Harness, type HarnessOptions } from '../helpers/harness.js';
import { freePort } from '../helpers/ports.js';

const REDIS_URL = process.env.EDGEPLANE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const harnesses: Harness[] = [];
async function harness(options: HarnessOptions): Promise<Harness> {
  const h = await startHarness('sqlite', { logLevel: 'silent', ...options });
  harnesses.push(h);
  return h;
}
after(async () => {
  await Promise.all(harnesses.map((h) => h.close()));
});

/** The statuses of `n` GET /api_keys of `api`, `concurrency` at a time. */
async function statuses(api: Api, n: number, concurrency = 1): Promise<number[]> {
  const out: number[] = [];
  for (let sent = 0; sent < n; sent += concurrency) {
    const batch = Math.min(concurrency, n - sent);
    out.push(...(await Promise.all(Array.from({ length: batch }, () => api.get('/api_keys').then((r) => r.status)))));
  }
  return out;
}

const count = (list: number[], status: number) => list.filter((s) => s === status).length;

/** Whether a Redis at `url` answers PING. */
async function answers(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/** A redis-server of the test's own, on one port, to stop and start again at will. */
async function ownRedis(): Promise<{ url: string; start(): Promise<void>; stop(): Promise<void> }> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const deadline = Date.now() + 10_000;
    while (!(await answers(url))) {
      if (Date.now() > deadline) throw new Error(`redis-server did not start on port ${port}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const stop = () =>
    new Promise<void>((resolve) => {
      if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  await start();
  return { url, start, stop };
}

describe('rate limits', () => {
  it('counts an account’s requests per minute: RateLimit-* headers on each, then 429 with Retry-After and its own code', async () => {
    const h = await harness({ rateLimit: { perMinute: 5 } });
    const api = await h.newAccount();
    const other = await h.newAccount();
    for (let i = 4; i >= 0; i--) {
      const res = await api.get('/api_keys');
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('ratelimit-limit'), '5');
      assert.equal(res.headers.get('ratelimit-remaining'), String(i));
      assert.equal(res.headers.get('ratelimit-policy'), '5;w=60');
      const reset = Number(res.headers.get('ratelimit-reset'));
      assert.ok(reset >= 1 && reset <= 60, `reset ${reset}`);
    }
    const refused = await api.post('/ip_policies', { description: 'over the limit' });
    assert.equal(refused.status, 429);
    assert.equal(refused.json.error_code, 'ERR_EP_269');
    assert.match(refused.json.msg, /5 requests a minute/);
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    assert.equal(refused.headers.get('ratelimit-remaining'), '0');
    const created = await h.deps.store.reader.selectFrom('ip_policies').select('id').where('account_id', '=', api.info.accountId).execute();
    assert.equal(created.length, 0, 'the refused request created nothing');

    assert.equal((await other.get('/api_keys')).status, 200, 'another account has its own count');
    assert.equal((await api.withToken('not-a-token').get('/api_keys')).status, 401, 'a refused credential is not counted, nor limited');
    assert.equal((await api.withToken(undefined).get('/openapi.json', { noVersion: true })).status, 200, 'public routes are not limited');
  });

  it('takes a burst of 10,000 requests from one account: exactly the limit answered, the rest 429, nothing else', async () => {
    const h = await harness({});
    const api = await h.newAccount();
    const result = await statuses(api, 10_000, 50);
    assert.equal(count(result, 200), 1200, 'the default limit, 1,200 a minute');
    assert.equal(count(result, 429), 8800);
    assert.equal((await h.newAccount().then((a) => a.get('/api_keys'))).status, 200, 'the server still answers others');
  });

  it('shares one count between instances through Redis', async () => {
    const h = await harness({ rateLimit: { perMinute: 6, redisUrl: REDIS_URL } });
    const second = await h.secondInstance();
    try {
      const api = await h.newAccount();
      const there = api.at(second.baseUrl);
      assert.deepEqual([...(await statuses(api, 3)), ...(await statuses(there, 3))], [200, 200, 200, 200, 200, 200]);
      assert.equal((await api.get('/api_keys')).status, 429);
      assert.equal((await there.get('/api_keys')).status, 429, 'the other instance counted the same requests');
    } finally {
      await second.close();
    }
  });

  it('without Redis, each instance counts its own', async () => {
    const h = await harness({ rateLimit: { perMinute: 3 } });
    const second = await h.secondInstance();
    try {
      const api = await h.newAccount();
      assert.deepEqual(await statuses(api, 4), [200, 200, 200, 429]);
      assert.deepEqual(await statuses(api.at(second.baseUrl), 4), [200, 200, 200, 429]);
    } finally {
      await second.close();
    }
  });

  it('counts per process while Redis is away, without errors or waits, and shares again once it is back', async () => {
    const redis = await ownRedis();
    try {
      const h = await harness({ rateLimit: { perMinute: 4, redisUrl: redis.url } });
      const second = await h.secondInstance();
      const api = await h.newAccount();
      const there = api.at(second.baseUrl);
      try {
        assert.deepEqual(await statuses(api, 2), [200, 200]);
        await redis.stop();
        const started = performance.now();
        const during = await statuses(api, 5);
        const ms = performance.now() - started;
        // The process's own count starts from nothing: 4 more, then 429; never a 5xx.
        assert.deepEqual(during, [200, 200, 200, 200, 429]);
        assert.ok(ms < 2000, `answered without waiting for Redis (${Math.round(ms)} ms for 5 requests)`);
        assert.deepEqual(await statuses(there, 5), [200, 200, 200, 200, 429], 'the other instance counts on its own meanwhile');

        // Redis is back (empty): both instances count in it again, once they have reconnected.
        await redis.start();
        const deadline = Date.now() + 10_000;
        for (;;) {
          const account = await h.newAccount();
          const shared = [...(await statuses(account, 2)), ...(await statuses(account.at(second.baseUrl), 3))];
          if (shared.join() === '200,200,200,200,429') break;
          if (Date.now() > deadline) assert.fail(`the instances did not share a count again: ${shared.join()}`);
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      } finally {
        await second.close();
      }
    } finally {
      await redis.stop();
    }
  });

  it('a server pointed at a Redis that never answered starts and limits per process', async () => {
    const h = await harness({ rateLimit: { perMinute: 2, redisUrl: `redis://127.0.0.1:${await freePort()}` } });
    const api = await h.newAccount();
    assert.deepEqual(await statuses(api, 3), [200, 200, 429]);
  });
});
