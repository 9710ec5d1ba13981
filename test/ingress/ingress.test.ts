// Public ingress over real sockets: HTTPS (TLS terminated by SNI) and plain HTTP requests proxied
// to a tunnel by Host, keep-alive over one agent stream, large bodies both ways, a WebSocket
// upgrade, TLS passed through untouched, error answers, backpressure and timeouts. A tunnel target
// here connects to a local upstream with net.connect(), as an agent forwards a stream's bytes.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Duplex } from 'node:stream';
import tls from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import type { IngressCertificates } from '../../src/ingress/certificates.js';
import { startIngress, type Ingress } from '../../src/ingress/ingress.js';
import type { IngressDirectory, TunnelTarget } from '../../src/core/live-agents.js';
import { ensureLocalTls, ensureServiceDomainTls } from '../../src/tls.js';
import { makeChain } from '../helpers/certs.js';

const SERVICE = 'ingress.test';
const APP = `app.${SERVICE}`;
const MB3 = 3 * 1024 * 1024;

interface CountingTarget extends TunnelTarget {
  connects: string[];
}

function tcpTarget(tunnelId: string, port: number, proto: TunnelTarget['proto'] = 'https'): CountingTarget {
  const connects: string[] = [];
  return {
    tunnelId,
    accountId: 'acct_test',
    proto,
    connects,
    connect(clientAddr) {
      connects.push(clientAddr);
      return net.connect(port, '127.0.0.1');
    },
  };
}

/** Where every upstream request lands: what it saw, and each connection it came on. */
interface Seen {
  headers: string[];
  connections: number;
}

function startUpstream(seen: Seen): Promise<{ server: http.Server; port: number; sockets: Set<net.Socket>; stream: { written: number } }> {
  const sockets = new Set<net.Socket>();
  const stream = { written: 0 };
  const server = http.createServer(async (req, res) => {
    seen.headers = req.rawHeaders;
    const url = new URL(req.url!, 'http://upstream');
    if (url.pathname === '/upload') {
      const hash = createHash('sha256');
      let bytes = 0;
      for await (const chunk of req) {
        hash.update(chunk as Buffer);
        bytes += (chunk as Buffer).length;
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ bytes, sha256: hash.digest('hex') }));
    } else if (url.pathname === '/download') {
      const body = download();
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'x-sha256': createHash('sha256').update(body).digest('hex') });
      res.end(body);
    } else if (url.pathname === '/stream') {
      // As fast as the proxy takes it: counts the bytes node's socket accepted.
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      const total = Number(url.searchParams.get('bytes'));
      stream.written = 0;
      while (stream.written < total && !res.destroyed) {
        const ok = res.write(chunk);
        stream.written += chunk.length;
        if (!ok) await Promise.race([once(res, 'drain'), once(res, 'close')]);
      }
      res.end();
    } else {
      res.writeHead(200, { 'content-type': 'text/plain', 'X-Upstream-Case': 'Kept', Connection: 'keep-alive', 'Keep-Alive': 'timeout=30' });
      res.end(`hello ${req.method} ${req.url}`);
    }
  });
  server.on('connection', (socket) => {
    seen.connections++;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('upgrade', (req, socket: net.Socket) => {
    const accept = createHash('sha1').update(`${req.headers['sec-websocket-key']}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
    socket.pipe(socket); // an echo of every byte (frames included)
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as net.AddressInfo).port, sockets, stream })));
}

let downloadBody: Buffer | undefined;
const download = () => (downloadBody ??= randomBytes(MB3));

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

function collect(req: http.ClientRequest, body?: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.end(body);
  });
}

/** A WebSocket text frame from the client (masked). */
function maskedFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const mask = randomBytes(4);
  const masked = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!));
  return Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, masked]);
}

/** Reads from a socket until `predicate` holds for what was read. */
function readUntil(socket: Duplex, predicate: (data: Buffer) => boolean): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let data = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      if (predicate(data)) {
        socket.removeListener('data', onData);
        resolve(data);
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.once('close', () => resolve(data));
  });
}

describe('public ingress', () => {
  const seen: Seen = { headers: [], connections: 0 };
  const httpTargets = new Map<string, TunnelTarget>();
  const tlsTargets = new Map<string, TunnelTarget>();
  const directory: IngressDirectory = {
    http: (host) => httpTargets.get(host),
    tls: (name) => tlsTargets.get(name),
    tcp: () => undefined,
    labeled: () => undefined,
    internal: () => undefined,
  };
  let dir: string;
  let ca: string;
  let upstream: Awaited<ReturnType<typeof startUpstream>>;
  let ingress: Ingress;
  let httpsPort: number;
  let httpPort: number;
  let app: CountingTarget;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'edgeplane-ingress-'));
    const local = await ensureLocalTls(dir, []);
    ca = fs.readFileSync(local.caFile, 'utf8');
    const service = await ensureServiceDomainTls(dir, SERVICE);
    // The certificates part stands in here: the service domain's wildcard under it, the default otherwise.
    const certificates: IngressCertificates = {
      defaultCertificate: { cert: local.cert, key: local.key },
      defaultContext: tls.createSecureContext({ cert: local.cert, key: local.key }),
      contextFor: async (name) =>
        name.endsWith(`.${SERVICE}`) ? tls.createSecureContext(service) : tls.createSecureContext({ cert: local.cert, key: local.key }),
    };
    upstream = await startUpstream(seen);
    app = tcpTarget('tn_app', upstream.port);
    httpTargets.set(APP, app);
    ingress = await startIngress({
      https: { host: '127.0.0.1', port: 0 },
      http: { host: '127.0.0.1', port: 0 },
      directory,
      certificates,
      log: pino({ level: 'silent' }),
      tuning: { helloTimeoutMs: 500, headersTimeoutMs: 500 },
    });
    httpsPort = ingress.httpsAddress!.port;
    httpPort = ingress.httpAddress!.port;
  });

  after(async () => {
    await ingress?.close();
    upstream?.server.closeAllConnections();
    upstream?.server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const httpsRequest = (options: https.RequestOptions & { servername?: string }) =>
    https.request({ host: '127.0.0.1', port: httpsPort, ca, servername: APP, agent: false, ...options, headers: { host: APP, ...options.headers } });

  it('proxies an HTTPS request by SNI and Host to the tunnel, with forwarded headers and hop-by-hop ones dropped', async () => {
    const before = app.connects.length;
    const answer = await collect(
      httpsRequest({
        path: '/hello?x=1',
        headers: {
          'X-CuStOm': 'yes',
          'X-Forwarded-For': '203.0.113.9',
          'X-Forwarded-Proto': 'gopher',
          'Proxy-Authorization': 'Basic c2VjcmV0',
          Connection: 'keep-alive, X-Drop-Me',
          'X-Drop-Me': '1',
          'Keep-Alive': 'timeout=5',
          TE: 'trailers',
        },
      }),
    );
    assert.equal(answer.status, 200);
    assert.equal(answer.body.toString(), 'hello GET /hello?x=1');
    assert.equal(answer.headers['x-upstream-case'], 'Kept');
    assert.notEqual(answer.headers['keep-alive'], 'timeout=30', "the upstream's Keep-Alive is its own hop's");
    const raw = seen.headers;
    const header = (name: string) => raw.filter((_, i) => i % 2 === 0 && raw[i]!.toLowerCase() === name).map((n) => raw[raw.indexOf(n) + 1]);
    assert.ok(raw.includes('X-CuStOm'), 'names as sent');
    assert.deepEqual(header('host'), [APP]);
    assert.deepEqual(header('x-forwarded-for'), ['203.0.113.9, 127.0.0.1']);
    assert.deepEqual(header('x-forwarded-proto'), ['https']);
    assert.deepEqual(header('x-forwarded-host'), [APP]);
    for (const gone of ['proxy-authorization', 'x-drop-me', 'te']) assert.deepEqual(header(gone), [], gone);
    assert.equal(app.connects.length, before + 1);
    assert.match(app.connects.at(-1)!, /^127\.0\.0\.1:\d+$/);
  });

  it('serves requests of one client connection over one agent stream, and closes it with the connection', async () => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca, servername: APP });
    const before = app.connects.length;
    const connectionsBefore = seen.connections;
    for (let i = 0; i < 3; i++) {
      const answer = await collect(https.request({ host: '127.0.0.1', port: httpsPort, agent, path: `/n${i}`, headers: { host: `${APP}:443` } }));
      assert.equal(answer.body.toString(), `hello GET /n${i}`);
    }
    assert.equal(app.connects.length - before, 1, 'one stream for three requests');
    assert.equal(seen.connections - connectionsBefore, 1);
    const [upstreamSocket] = [...upstream.sockets].slice(-1);
    const closed = once(upstreamSocket!, 'close');
    agent.destroy();
    await closed;
  });

  it('keeps requests on one stream that is a plain Duplex (as an agent stream is), not a socket', async () => {
    const connects: string[] = [];
    httpTargets.set('duplex.test', {
      tunnelId: 'tn_duplex',
      accountId: 'a',
      proto: 'http',
      connect(clientAddr) {
        connects.push(clientAddr);
        const socket = net.connect(upstream.port, '127.0.0.1');
        return Duplex.from({ readable: socket, writable: socket });
      },
    });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let i = 0; i < 3; i++) {
        const answer = await collect(http.request({ host: '127.0.0.1', port: httpPort, agent, path: `/d${i}`, headers: { host: 'duplex.test' } }));
        assert.equal(answer.body.toString(), `hello GET /d${i}`);
      }
      const up = await collect(
        http.request({ host: '127.0.0.1', port: httpPort, agent, method: 'POST', path: '/upload', headers: { host: 'duplex.test' } }),
        download(),
      );
      assert.equal(JSON.parse(up.body.toString()).bytes, MB3);
      assert.equal(connects.length, 1);
    } finally {
      agent.destroy();
      httpTargets.delete('duplex.test');
    }
  });

  it('streams a 3 MB upload and a 3 MB download intact', async () => {
    const body = randomBytes(MB3);
    const up = await collect(httpsRequest({ method: 'POST', path: '/upload', headers: { 'content-type': 'application/octet-stream' } }), body);
    assert.deepEqual(JSON.parse(up.body.toString()), { bytes: MB3, sha256: createHash('sha256').update(body).digest('hex') });
    // Chunked, with no Content-Length: the body is re-framed on the way.
    const req = httpsRequest({ method: 'PUT', path: '/upload', headers: { 'transfer-encoding': 'chunked' } });
    for (let i = 0; i < 2; i++) req.write(body.subarray(i * 1024 * 1024, (i + 1) * 1024 * 1024));
    const chunked = collect(req, body.subarray(2 * 1024 * 1024));
    assert.equal(JSON.parse((await chunked).body.toString()).sha256, createHash('sha256').update(body).digest('hex'));
    const down = await collect(httpsRequest({ path: '/download' }));
    assert.equal(down.body.length, MB3);
    assert.equal(createHash('sha256').update(down.body).digest('hex'), down.headers['x-sha256']);
  });

  it('upgrades to a WebSocket and carries its bytes both ways', async () => {
    const socket = tls.connect({ host: '127.0.0.1', port: httpsPort, ca, servername: APP });
    await once(socket, 'secureConnect');
    const key = randomBytes(16).toString('base64');
    socket.write(
      `GET /chat HTTP/1.1\r\nHost: ${APP}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
    const head = await readUntil(socket, (d) => d.includes('\r\n\r\n'));
    const text = head.toString('latin1');
    assert.match(text, /^HTTP\/1\.1 101 /);
    const expected = createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
    assert.match(text, new RegExp(`Sec-WebSocket-Accept: ${expected.replace(/[+/]/g, '\\$&')}`, 'i'));
    const frame = maskedFrame('hello over the tunnel');
    socket.write(frame);
    const echoed = await readUntil(socket, (d) => d.length >= frame.length);
    assert.deepEqual(echoed, frame);
    socket.destroy();
  });

  it('passes TLS through to a tls tunnel: the upstream presents its own certificate', async () => {
    const chain = await makeChain({ names: ['secure.tls.test'] });
    const tlsUpstream = tls.createServer({ cert: chain.chainPem, key: chain.leaf.keyPem }, (s) => {
      s.on('data', (d: Buffer) => s.write(`upstream got ${d.toString()}`));
    });
    await new Promise<void>((resolve) => tlsUpstream.listen(0, '127.0.0.1', resolve));
    const target = tcpTarget('tn_tls', (tlsUpstream.address() as net.AddressInfo).port, 'tls');
    tlsTargets.set('secure.tls.test', target);
    try {
      const socket = tls.connect({ host: '127.0.0.1', port: httpsPort, servername: 'Secure.TLS.test', ca: chain.root.certPem });
      await once(socket, 'secureConnect');
      assert.equal(socket.getPeerX509Certificate()!.fingerprint256, new (await import('node:crypto')).X509Certificate(chain.leaf.certPem).fingerprint256);
      socket.write('ping');
      assert.equal((await readUntil(socket, (d) => d.toString().endsWith('ping'))).toString(), 'upstream got ping');
      assert.equal(target.connects.length, 1);
      socket.destroy();
    } finally {
      tlsTargets.delete('secure.tls.test');
      tlsUpstream.close();
    }
  });

  it('answers 404 ERR_NGROK_3200 at once for a host no tunnel serves: text, or HTML for browsers', async () => {
    const started = Date.now();
    const text = await collect(httpsRequest({ servername: `nobody.${SERVICE}`, headers: { host: `nobody.${SERVICE}` } }));
    assert.equal(text.status, 404);
    assert.equal(text.headers['ngrok-error-code'], 'ERR_NGROK_3200');
    assert.match(text.headers['content-type']!, /^text\/plain/);
    assert.match(text.body.toString(), new RegExp(`The endpoint https://nobody\\.${SERVICE} is offline\\.[\\s\\S]*ERR_NGROK_3200`));
    const page = await collect(
      http.request({ host: '127.0.0.1', port: httpPort, agent: false, headers: { host: 'Nobody.Example.com:80', accept: 'text/html,application/xhtml+xml' } }),
    );
    assert.equal(page.status, 404);
    assert.match(page.headers['content-type']!, /^text\/html/);
    assert.match(page.body.toString(), /<h1>The endpoint http:\/\/nobody\.example\.com is offline\.<\/h1>[\s\S]*ERR_NGROK_3200/);
    const upgrade = net.connect(httpPort, '127.0.0.1');
    upgrade.write('GET / HTTP/1.1\r\nHost: nobody.example.com\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
    assert.match((await readUntil(upgrade, () => false)).toString(), /^HTTP\/1\.1 404 [\s\S]*ngrok-error-code: ERR_NGROK_3200/);
    assert.ok(Date.now() - started < 2000);
  });

  it('answers 502 when the agent side fails before a response: ERR_NGROK_3210 for the stream, ERR_NGROK_3004 for no HTTP answer', async () => {
    const failing = (name: string, connect: () => Duplex) => httpTargets.set(name, { tunnelId: `tn_${name}`, accountId: 'a', proto: 'http', connect });
    failing('reset.test', () => {
      const stream = new Duplex({ read() {}, write: (_c, _e, cb) => cb() });
      setImmediate(() => stream.destroy(new Error('stream reset by the agent')));
      return stream;
    });
    failing('gone.test', () => {
      throw new Error('the session has ended');
    });
    const mute = net.createServer((s) => s.once('data', () => s.end('not http at all\r\n\r\n')));
    await new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', resolve));
    httpTargets.set('garbage.test', tcpTarget('tn_garbage', (mute.address() as net.AddressInfo).port, 'http'));
    try {
      for (const [host, code] of [
        ['reset.test', 'ERR_NGROK_3210'],
        ['gone.test', 'ERR_NGROK_3210'],
        ['garbage.test', 'ERR_NGROK_3004'],
      ] as const) {
        const started = Date.now();
        const answer = await collect(http.request({ host: '127.0.0.1', port: httpPort, agent: false, method: 'POST', headers: { host } }), Buffer.from('x'));
        assert.equal(answer.status, 502, host);
        assert.equal(answer.headers['ngrok-error-code'], code, host);
        assert.match(answer.body.toString(), new RegExp(code));
        assert.ok(Date.now() - started < 2000, host);
      }
      // An upgrade to a tunnel whose stream breaks gets the same answer on the raw connection.
      const upgrade = net.connect(httpPort, '127.0.0.1');
      upgrade.write('GET / HTTP/1.1\r\nHost: reset.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
      assert.match((await readUntil(upgrade, () => false)).toString(), /^HTTP\/1\.1 502 [\s\S]*ERR_NGROK_3210/);
    } finally {
      mute.close();
    }
  });

  it('stops reading the upstream while a client does not read: what it wrote stays near a bound, then all arrives', async () => {
    const total = 256 * 1024 * 1024;
    const socket = net.connect(httpPort, '127.0.0.1');
    await once(socket, 'connect');
    socket.write(`GET /stream?bytes=${total} HTTP/1.1\r\nHost: ${APP}\r\n\r\n`);
    socket.pause();
    // No event says "stalled": wait until the count stops moving for a while.
    let last = -1;
    while (upstream.stream.written !== last) {
      last = upstream.stream.written;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    assert.ok(last > 0, 'the upstream began');
    if (process.env.DEBUG_INGRESS) console.log('written while stalled', last);
    assert.ok(last < 64 * 1024 * 1024, `the upstream wrote ${last} bytes to a client that reads nothing`);
    let received = 0;
    socket.on('data', (d: Buffer) => {
      received += d.length;
      if (received >= total) socket.destroy();
    });
    socket.resume();
    await once(socket, 'close');
    assert.ok(received >= total, 'everything arrives once the client reads');
  });

  it('serves the plain HTTP listener with X-Forwarded-Proto http', async () => {
    const answer = await collect(http.request({ host: '127.0.0.1', port: httpPort, agent: false, path: '/plain', headers: { host: APP.toUpperCase() } }));
    assert.equal(answer.body.toString(), 'hello GET /plain');
    const raw = seen.headers;
    assert.equal(raw[raw.findIndex((h) => h.toLowerCase() === 'x-forwarded-proto') + 1], 'http');
  });

  it('closes a connection that sends no ClientHello in time, or no request headers in time, or no TLS at all', async () => {
    const silent = net.connect(httpsPort, '127.0.0.1');
    const started = Date.now();
    await once(silent, 'close');
    assert.ok(Date.now() - started < 3000);

    const slow = net.connect(httpPort, '127.0.0.1');
    slow.write(`GET / HTTP/1.1\r\nHost: ${APP}\r\n`);
    const answer = await readUntil(slow, () => false);
    assert.match(answer.toString(), /^HTTP\/1\.1 408 /);

    const plain = net.connect(httpsPort, '127.0.0.1');
    plain.write(`GET / HTTP/1.1\r\nHost: ${APP}\r\n\r\n`);
    assert.equal((await readUntil(plain, () => false)).length, 0);
  });

  it('refuses request headers over the bound with 431', async () => {
    const answer = await collect(http.request({ host: '127.0.0.1', port: httpPort, agent: false, headers: { host: APP, 'x-big': 'a'.repeat(20_000) } }));
    assert.equal(answer.status, 431);
  });

  it('close() ends open connections and resolves', async () => {
    const extra = await startIngress({
      http: { host: '127.0.0.1', port: 0 },
      directory,
      certificates: { contextFor: async () => tls.createSecureContext() } as unknown as IngressCertificates,
      log: pino({ level: 'silent' }),
    });
    const socket = net.connect(extra.httpAddress!.port, '127.0.0.1');
    socket.on('error', () => {}); // closing may reset it
    await once(socket, 'connect');
    socket.write(`GET /upload HTTP/1.1\r\nHost: ${APP}\r\nContent-Length: 100\r\n\r\n`);
    const closed = new Promise((resolve) => socket.once('close', resolve));
    await extra.close();
    await closed;
  });
});
