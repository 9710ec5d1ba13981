// When the database cannot be reached the API answers 503 with Retry-After, never 500.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createDeps } from '../../src/deps.js';
import { openStore, type Store } from '../../src/db/store.js';

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
    const res = await fetch(`${base}/api_keys`, { headers: { 'Service-Version': '2', Authorization: `Bearer ${'a'.repeat(27)}_${'b'.repeat(40)}` } });
    assert.equal(res.status, 503);
    assert.equal(res.headers.get('retry-after'), '2');
    const body = await res.json();
    assert.equal(body.error_code, 'ERR_EP_260');
  });
});
