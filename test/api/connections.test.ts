// Slow and unfinished requests: real sockets (node:net, node:tls) against a real listening server
// with short limits. A client that never finishes its headers or body, or idles on a kept-alive
// connection, loses the connection within the configured time; connections beyond the maximum
// are closed at once while those already open keep working.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { after, afterEach, before, describe, it } from 'node:test';
import { pino } from 'pino';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig, type RawSettings } from '../../src/config.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { ensureLocalTls } from '../../src/tls.js';
import { freshStore, storeKinds, type StoreKind } from '../helpers/harness.js';

/** The limits under test, in seconds as configured; the margin absorbs a busy two-core machine. */
const HEADERS_TIMEOUT = 1;
const REQUEST_TIMEOUT = 2;
const KEEPALIVE_TIMEOUT = 1;
const MARGIN_MS = 4000;

interface Served {
  port: number;
  deps: Deps;
  close(): Promise<void>;
}

async function serve(kind: StoreKind, settings: RawSettings, https?: { cert: string; key: string }): Promise<Served> {
  const fresh = await freshStore(kind);
  const config = loadConfig({ listen: '127.0.0.1:0', tls: 'off', logLevel: 'silent', dataDir: os.tmpdir(), ...settings });
  config.database = fresh.database;
  const deps = createDeps({ config, logger: pino({ level: 'silent' }), store: fresh.store, masterKey: randomBytes(32) });
  const app: FastifyInstance = await buildApp(deps, { https });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    port: (app.server.address() as net.AddressInfo).port,
    deps,
    async close() {
      await app.close();
      await fresh.dispose();
    },
  };
}

/** One client connection: what it received, and when (ms after it opened) the server closed it. */
class Conn {
  readonly opened = Date.now();
  received = '';
  readonly closed: Promise<number>;
  constructor(readonly socket: net.Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (this.received += chunk));
    socket.on('error', () => {});
    this.closed = new Promise((resolve) => socket.once('close', () => resolve(Date.now() - this.opened)));
  }

  /** Resolves with the ms since opening once the socket closes; fails if it is still open after `ms`. */
  async closedWithin(ms: number): Promise<number> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`still open after ${ms} ms; received so far: ${JSON.stringify(this.received)}`)), ms);
    });
    try {
      return await Promise.race([this.closed, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Waits until `count` complete responses have arrived (bodies are small and carry Content-Length). */
  async responses(count: number, ms = 5000): Promise<{ status: number; headers: string; body: string }[]> {
    const start = Date.now();
    for (;;) {
      const parsed = parseResponses(this.received);
      if (parsed.length >= count) return parsed;
      if (Date.now() - start > ms) assert.fail(`expected ${count} responses within ${ms} ms; received ${JSON.stringify(this.received)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

function parseResponses(text: string): { status: number; headers: string; body: string }[] {
  const out: { status: number; headers: string; body: string }[] = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) break;
    const headers = rest.slice(0, end);
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(headers)?.[1] ?? 0);
    if (rest.length < end + 4 + length) break;
    out.push({ status: Number(headers.slice(9, 12)), headers, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
  return out;
}

const conns: Conn[] = [];

function open(port: number): Promise<Conn> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const conn = new Conn(socket);
    conns.push(conn);
    socket.once('connect', () => resolve(conn));
    socket.once('error', reject);
  });
}

function get(token?: string): string {
  return `GET /api_keys HTTP/1.1\r\nHost: x\r\nService-Version: 2\r\n${token ? `Authorization: Bearer ${token}\r\n` : ''}\r\n`;
}

/** Headers announcing a 100-byte body, and the first 10 bytes of it. */
function unfinishedPost(token?: string, idempotencyKey?: string): string {
  return (
    `POST /api_keys HTTP/1.1\r\nHost: x\r\nService-Version: 2\r\nContent-Type: application/json\r\nContent-Length: 100\r\n` +
    `${token ? `Authorization: Bearer ${token}\r\n` : ''}${idempotencyKey ? `Idempotency-Key: ${idempotencyKey}\r\n` : ''}\r\n{"descript`
  );
}

function assertTimeoutBody(response: { status: number; headers: string; body: string }): void {
  assert.equal(response.status, 408, response.headers);
  assert.match(response.headers, /\r\nconnection: close/i);
  const body = JSON.parse(response.body);
  assert.equal(body.error_code, 'ERR_EP_265');
  assert.equal(body.status_code, 408);
  assert.equal(typeof body.msg, 'string');
  assert.match(body.details.operation_id, /^op_/);
  assert.match(response.headers, new RegExp(`\\r\\nOperation-Id: ${body.details.operation_id}`, 'i'));
}

/** The test's own sockets, so that closing the server does not wait for them. */
function dropConnections(): void {
  for (const c of conns.splice(0)) c.socket.destroy();
}

for (const kind of storeKinds()) {
  describe(`slow and unfinished requests [${kind}]`, () => {
    let served: Served;
    let token: string;
    before(async () => {
      served = await serve(kind, {
        headersTimeout: String(HEADERS_TIMEOUT),
        requestTimeout: String(REQUEST_TIMEOUT),
        keepAliveTimeout: String(KEEPALIVE_TIMEOUT),
      });
      token = (await served.deps.accounts.createAccount({ name: `conn-${randomBytes(3).toString('hex')}` })).token;
    });
    afterEach(dropConnections);
    after(async () => {
      await served?.close();
    });

    it('closes an unauthenticated request whose body never finishes within the request timeout, after its one answer', async () => {
      const conn = await open(served.port);
      conn.socket.write(unfinishedPost());
      const [answer] = await conn.responses(1);
      // The server refuses the request without reading its body; a second answer (a 408) to the
      // same request would break HTTP/1.1's one-response-per-request framing, so none is sent.
      assert.equal(answer!.status, 401);
      await conn.closedWithin(REQUEST_TIMEOUT * 1000 + MARGIN_MS);
      assert.equal(parseResponses(conn.received).length, 1, conn.received);
      assert.equal(conn.received.split('HTTP/1.1 ').length, 2, conn.received);
    });

    it('answers an authenticated request whose body never finishes with 408 in the error body, and closes it', async () => {
      const conn = await open(served.port);
      conn.socket.write(unfinishedPost(token));
      const elapsed = await conn.closedWithin(REQUEST_TIMEOUT * 1000 + MARGIN_MS);
      assert.ok(elapsed >= REQUEST_TIMEOUT * 1000 - 300, `closed after ${elapsed} ms, before the request timeout`);
      const answers = parseResponses(conn.received);
      assert.equal(answers.length, 1, conn.received);
      assertTimeoutBody(answers[0]!);
    });

    it('takes 200 requests cut mid-body, half with an Idempotency-Key, without storing anything, and serves the next ones at once', async () => {
      const base = `http://127.0.0.1:${served.port}`;
      const headers = { Authorization: `Bearer ${token}`, 'Service-Version': '2', 'Content-Type': 'application/json' };
      const keyCount = async () => ((await (await fetch(`${base}/api_keys?limit=100`, { headers })).json()) as { keys: unknown[] }).keys.length;
      const before = await keyCount();
      const tag = randomBytes(4).toString('hex');
      for (let batch = 0; batch < 4; batch++) {
        const cut = await Promise.all(Array.from({ length: 50 }, () => open(served.port)));
        cut.forEach((conn, i) => conn.socket.write(unfinishedPost(token, i % 2 ? `cut-${tag}-${batch}-${i}` : undefined)));
        // Long enough for the server to have read the headers and started on the body.
        await new Promise((r) => setTimeout(r, 50));
        for (const conn of cut) conn.socket.destroy();
        await Promise.all(cut.map((conn) => conn.closed));
      }
      // A client retrying a cut request with its key is served at once: the cut left no claim behind.
      const retried = await fetch(`${base}/api_keys`, {
        method: 'POST',
        headers: { ...headers, 'Idempotency-Key': `cut-${tag}-3-1` },
        body: JSON.stringify({ description: 'retried' }),
        signal: AbortSignal.timeout(3000),
      });
      assert.equal(retried.status, 201, await retried.clone().text());
      assert.equal(retried.headers.get('idempotent-replayed'), null);
      assert.equal(await keyCount(), before + 1);
    });

    it('closes a connection that sends nothing, or only part of its headers, within the headers timeout with a 408', async () => {
      const silent = await open(served.port);
      const partial = await open(served.port);
      partial.socket.write('GET /api_keys HTTP/1.1\r\nHost: x\r\n');
      for (const conn of [silent, partial]) {
        await conn.closedWithin(HEADERS_TIMEOUT * 1000 + MARGIN_MS);
        const answers = parseResponses(conn.received);
        assert.equal(answers.length, 1, conn.received);
        assertTimeoutBody(answers[0]!);
      }
    });

    it('closes an idle kept-alive connection within the keep-alive timeout, silently', async () => {
      const conn = await open(served.port);
      conn.socket.write(get(token));
      const [first] = await conn.responses(1);
      assert.equal(first!.status, 200);
      assert.match(first!.headers, /\r\nconnection: keep-alive/i);
      const answeredAt = Date.now() - conn.opened;
      const closedAt = await conn.closedWithin(answeredAt + KEEPALIVE_TIMEOUT * 1000 + MARGIN_MS);
      assert.ok(closedAt - answeredAt >= KEEPALIVE_TIMEOUT * 1000 - 300, `closed ${closedAt - answeredAt} ms after the answer`);
      assert.equal(parseResponses(conn.received).length, 1, conn.received);
    });
  });
}

describe('slow TLS handshakes', () => {
  let served: Served;
  let dir: string;
  let ca: string;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'edgeplane-conn-tls-'));
    const local = await ensureLocalTls(dir, ['127.0.0.1']);
    ca = fs.readFileSync(local.caFile, 'utf8');
    served = await serve('sqlite', { headersTimeout: String(HEADERS_TIMEOUT), requestTimeout: String(REQUEST_TIMEOUT) }, { cert: local.cert, key: local.key });
  });
  afterEach(dropConnections);
  after(async () => {
    await served?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('closes a connection that never starts its TLS handshake within the headers timeout', async () => {
    const conn = await open(served.port);
    await conn.closedWithin(HEADERS_TIMEOUT * 1000 + MARGIN_MS);
    assert.equal(conn.received, '');
  });

  it('still serves a client that completes its handshake', async () => {
    const status = await new Promise<string>((resolve, reject) => {
      const socket = tls.connect({ port: served.port, host: '127.0.0.1', ca, servername: 'localhost' }, () => socket.write(get()));
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (c: string) => {
        text += c;
        if (text.includes('\r\n\r\n')) {
          resolve(text.slice(9, 12));
          socket.destroy();
        }
      });
      socket.on('error', reject);
    });
    assert.equal(status, '401');
  });
});

for (const kind of storeKinds()) {
  describe(`connection limit [${kind}]`, () => {
    const MAX = 3;
    let served: Served;
    before(async () => {
      served = await serve(kind, { maxConnections: String(MAX), keepAliveTimeout: '60', headersTimeout: '60', requestTimeout: '60' });
    });
    afterEach(dropConnections);
    after(async () => {
      await served?.close();
    });

    it('closes connections beyond the maximum at once while the open ones keep working', async () => {
      const held: Conn[] = [];
      for (let i = 0; i < MAX; i++) {
        const conn = await open(served.port);
        conn.socket.write(get());
        assert.equal((await conn.responses(1))[0]!.status, 401);
        held.push(conn);
      }
      const extra = await open(served.port);
      extra.socket.write(get());
      await extra.closedWithin(MARGIN_MS);
      assert.equal(extra.received, '', 'the connection over the limit is closed without an answer');

      for (const conn of held) {
        conn.socket.write(get());
        assert.equal((await conn.responses(2))[1]!.status, 401, 'an open connection keeps working');
      }

      // A slot frees when a connection closes.
      held[0]!.socket.destroy();
      await held[0]!.closed;
      let served401 = false;
      for (let attempt = 0; attempt < 50 && !served401; attempt++) {
        const next = await open(served.port);
        next.socket.write(get());
        served401 = await Promise.race([next.responses(1, 2000).then((r) => r[0]!.status === 401), next.closed.then(() => false)]).catch(() => false);
        if (!served401) await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(served401, 'a new connection is served once one has closed');
    });
  });
}
