// The test harness: a real server on a real socket over a real store (SQLite always,
// PostgreSQL too when EDGEPLANE_TEST_DATABASE_URL is set), and a fresh account per test.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe } from 'node:test';
import pg from 'pg';
import { pino } from 'pino';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { migrate, openStore, type Store } from '../../src/db/store.js';
import type { Role } from '../../src/db/schema.js';

export type StoreKind = 'sqlite' | 'postgres';

export function storeKinds(): StoreKind[] {
  return process.env.EDGEPLANE_TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];
}

/** A fresh, empty, migrated store, and how to throw it away. */
export async function freshStore(kind: StoreKind): Promise<{ store: Store; database: Config['database']; schema?: string; dispose(): Promise<void> }> {
  if (kind === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'edgeplane-test-'));
    const database = { kind: 'sqlite' as const, file: path.join(dir, 'test.db') };
    const store = openStore(database);
    await migrate(store);
    return { store, database, async dispose() { await store.close(); fs.rmSync(dir, { recursive: true, force: true }); } };
  }
  const url = process.env.EDGEPLANE_TEST_DATABASE_URL!;
  const schema = `ep_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const database = { kind: 'postgres' as const, url };
  const store = openStore(database, { schema });
  await migrate(store);
  return {
    store,
    database,
    schema,
    async dispose() {
      await store.close();
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(`drop schema ${schema} cascade`);
      await c.end();
    },
  };
}

export interface Response {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as is, without JSON encoding or a content type. */
  raw?: string | Buffer;
  headers?: Record<string, string | undefined>;
  /** Leave out the version header. */
  noVersion?: boolean;
}

/** A request through node:http, for what fetch refuses to send (a GET with a body). */
export function rawRequest(baseUrl: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Response> {
  return new Promise((resolve, reject) => {
    const sized = body === undefined ? headers : { ...headers, 'Content-Length': String(Buffer.byteLength(body)) };
    const req = http.request(baseUrl + path, { method, headers: sized }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
        let json: unknown;
        try { json = text ? JSON.parse(text) : undefined; } catch { json = undefined; }
        resolve({ status: res.statusCode ?? 0, headers: h, text, json });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** An API client for one bearer token. */
export class Api {
  constructor(readonly baseUrl: string, readonly token: string | undefined, readonly info: { accountId: string; userId: string; keyId: string }, private readonly harness: Harness) {}

  async request(method: string, pathAndQuery: string, options: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = {};
    if (!options.noVersion) headers['Service-Version'] = '2';
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    let body: string | Buffer | undefined;
    if (options.raw !== undefined) body = options.raw;
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['Content-Type'] = 'application/json';
    }
    for (const [k, v] of Object.entries(options.headers ?? {})) {
      const existing = Object.keys(headers).find((h) => h.toLowerCase() === k.toLowerCase());
      if (existing) delete headers[existing];
      if (v !== undefined) headers[k] = v;
    }
    const url = pathAndQuery.startsWith('http') ? pathAndQuery : this.baseUrl + pathAndQuery;
    const res = await fetch(url, { method, headers, body: typeof body === "string" || body === undefined ? body : new Uint8Array(body) });
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json };
  }

  get(p: string, o?: RequestOptions) { return this.request('GET', p, o); }
  post(p: string, body?: unknown, o?: RequestOptions) { return this.request('POST', p, { ...o, body }); }
  patch(p: string, body?: unknown, o?: RequestOptions) { return this.request('PATCH', p, { ...o, body }); }
  put(p: string, body?: unknown, o?: RequestOptions) { return this.request('PUT', p, { ...o, body }); }
  delete(p: string, o?: RequestOptions) { return this.request('DELETE', p, o); }

  /** The same account through another token (or none). */
  withToken(token: string | undefined): Api {
    return new Api(this.baseUrl, token, this.info, this.harness);
  }

  /** Another user of this account with the given role, and a client for that user's key. */
  async asNewUser(role: Role): Promise<Api> {
    const issued = await this.harness.deps.accounts.createUser({ accountId: this.info.accountId, name: `${role}-${randomBytes(3).toString('hex')}`, role });
    return new Api(this.baseUrl, issued.token, { accountId: issued.account_id, userId: issued.user_id, keyId: issued.api_key_id }, this.harness);
  }
}

export interface Harness {
  kind: StoreKind;
  app: FastifyInstance;
  deps: Deps;
  baseUrl: string;
  /** A new account with its admin user; every test takes its own. */
  newAccount(): Promise<Api>;
  close(): Promise<void>;
}

export async function startHarness(kind: StoreKind): Promise<Harness> {
  const fresh = await freshStore(kind);
  const config = loadConfig({ listen: '127.0.0.1:0', tls: 'off', logLevel: 'silent', dataDir: os.tmpdir() });
  config.database = fresh.database;
  const logger = pino({ level: process.env.EDGEPLANE_TEST_LOG_LEVEL ?? 'silent' });
  const deps = createDeps({ config, logger, store: fresh.store });
  const app = await buildApp(deps);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address() as { port: number };
  config.baseUrl = `http://127.0.0.1:${address.port}`;
  const harness: Harness = {
    kind,
    app,
    deps,
    baseUrl: config.baseUrl,
    async newAccount() {
      const issued = await deps.accounts.createAccount({ name: `test-${randomBytes(4).toString('hex')}` });
      return new Api(config.baseUrl, issued.token, { accountId: issued.account_id, userId: issued.user_id, keyId: issued.api_key_id }, harness);
    },
    async close() {
      await app.close();
      await fresh.dispose();
    },
  };
  return harness;
}

/** Runs the suite once per store, each with its own server. */
export function describeEachStore(title: string, suite: (h: () => Harness) => void): void {
  for (const kind of storeKinds()) {
    describe(`${title} [${kind}]`, () => {
      let harness: Harness;
      before(async () => {
        harness = await startHarness(kind);
      });
      after(async () => {
        await harness?.close();
      });
      suite(() => harness);
    });
  }
}
