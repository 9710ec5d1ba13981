// Faults at the edge: a backend that never answers (504 after the response timeout), one that
// never finishes its TLS handshake (504 after the connect timeout), one that resets (502, or the
// answer cut off once begun), and hostile requests (smuggling by Content-Length and
// Transfer-Encoding together, a header with a bare CR, oversized headers) — each refused or
// handled without touching other requests. And a change made through one instance's API is in
// force on another instance's listeners.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import { test } from 'node:test';
import tls from 'node:tls';
import { describeEachStore, type Harness } from '../helpers/harness.js';
import { created, edgeWithRoute, edgesRead, request, routesRead, upstream } from './helpers.js';

/** A TCP server that does `onConnection` with each socket; closed by `close()`. */
async function rawServer(onConnection: (socket: net.Socket) => void): Promise<{ port: number; close(): void }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    onConnection(socket);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    close() {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

/** Raw bytes over TLS to the public listener for `host`; resolves with all that came back once the server closes. */
async function rawExchange(h: Harness, host: string, bytes: string): Promise<string> {
  const socket = tls.connect({ host: '127.0.0.1', port: h.agents!.httpsPort, servername: host, ca: h.agents!.caPem });
  await once(socket, 'secureConnect');
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.write(bytes);
  await once(socket, 'close');
  return Buffer.concat(chunks).toString();
}

describeEachStore(
  'edge faults',
  (h) => {
    test('a backend that never answers is a 504 after the response timeout; one that never finishes TLS, after the connect timeout; other routes answer meanwhile', async () => {
      const api = await h().newAccount();
      const silent = await rawServer(() => {});
      const fine = await upstream('fine');
      try {
        const silentBackend = await created(api, '/backends/static', { address: `127.0.0.1:${silent.port}`, tls: { enabled: false } });
        const stalledTls = await created(api, '/backends/static', { address: `127.0.0.1:${silent.port}`, tls: { enabled: true } });
        const fineBackend = await created(api, '/backends/static', { address: `127.0.0.1:${fine.port}`, tls: { enabled: false } });
        const { host, routes } = await edgeWithRoute(api, { match: '/slow', backend: { backend_id: silentBackend.id } });
        await created(api, routes, { match_type: 'path_prefix', match: '/tls', backend: { backend_id: stalledTls.id } });
        await created(api, routes, { match_type: 'path_prefix', match: '/fast', backend: { backend_id: fineBackend.id } });
        await routesRead(h(), host, 3);

        const started = Date.now();
        const slow = request(h(), host, '/slow');
        const fast = await request(h(), host, '/fast');
        assert.equal(fast.text, 'fine /fast', 'answered while the other waits');
        const timedOut = await slow;
        assert.equal(timedOut.status, 504);
        assert.equal(timedOut.headers['ngrok-error-code'], 'ERR_EP_INGRESS_707');
        assert.ok(Date.now() - started >= 400, 'not before the response timeout');

        const handshake = await request(h(), host, '/tls');
        assert.equal(handshake.status, 504);
        assert.equal(handshake.headers['ngrok-error-code'], 'ERR_EP_INGRESS_707');
      } finally {
        silent.close();
        await fine.close();
      }
    });

    test('a backend that resets: before answering is a 502; after its head, the answer is cut off; the next request is served', async () => {
      const api = await h().newAccount();
      let mode: 'before' | 'after' | 'fine' = 'before';
      const flaky = await rawServer((socket) =>
        socket.once('data', () => {
          if (mode === 'fine') return void socket.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok');
          if (mode === 'after') socket.write('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\npartial');
          socket.resetAndDestroy();
        }),
      );
      try {
        const backend = await created(api, '/backends/static', { address: `127.0.0.1:${flaky.port}`, tls: { enabled: false } });
        const { host } = await edgeWithRoute(api, { backend: { backend_id: backend.id } });
        await routesRead(h(), host, 1);
        const before = await request(h(), host, '/');
        assert.equal(before.status, 502);
        assert.equal(before.headers['ngrok-error-code'], 'ERR_EP_INGRESS_706');
        mode = 'after';
        await assert.rejects(request(h(), host, '/'), 'a response cut off after its head fails at the client');
        mode = 'fine';
        assert.equal((await request(h(), host, '/')).text, 'ok');
      } finally {
        flaky.close();
      }
    });

    test('hostile requests: Content-Length with Transfer-Encoding, a bare CR in a header, and oversized headers are refused before any backend', async () => {
      const api = await h().newAccount();
      const up = await upstream('app');
      try {
        const backend = await created(api, '/backends/static', { address: `127.0.0.1:${up.port}`, tls: { enabled: false } });
        const { host } = await edgeWithRoute(api, { backend: { backend_id: backend.id } });
        await routesRead(h(), host, 1);
        const smuggled = await rawExchange(
          h(),
          host,
          `POST / HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /admin HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
        );
        assert.match(smuggled, /^HTTP\/1\.1 400 /);
        const bareCr = await rawExchange(h(), host, `GET / HTTP/1.1\r\nHost: ${host}\r\nX-Evil: a\rInjected: b\r\n\r\n`);
        assert.match(bareCr, /^HTTP\/1\.1 400 /);
        const huge = await rawExchange(h(), host, `GET / HTTP/1.1\r\nHost: ${host}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
        assert.match(huge, /^HTTP\/1\.1 431 /);
        assert.equal(up.received.length, 0, 'the upstream saw none of them');
        assert.equal((await request(h(), host, '/after')).text, 'app /after');
      } finally {
        await up.close();
      }
    });

    test('a change made through one instance’s API is in force on another instance’s listener', async () => {
      const api = await h().newAccount();
      const second = await h().secondInstance({ agents: true });
      try {
        const answer = await created(api, '/backends/http_response', { body: 'first', status_code: 200, headers: {} });
        const { host, routes, routeId } = await edgeWithRoute(api, { backend: { backend_id: answer.id } });
        await edgesRead({ ...h(), agents: second.agents! }, () => second.agents!.edges.httpsEdge(host)?.routes.length === 1, 'the edge on the second instance');
        const there = { ...h(), agents: second.agents! };
        assert.equal((await request(there, host, '/')).text, 'first');
        const next = await created(api, '/backends/http_response', { body: 'second', status_code: 200, headers: {} });
        const changedAt = Date.now();
        assert.equal((await api.put(`${routes}/${routeId}/backend`, { backend_id: next.id })).status, 200);
        await edgesRead(
          there,
          () => second.agents!.edges.httpsEdge(host)?.routes[0]?.modules.backend?.backend_id === next.id,
          'the change on the second instance',
        );
        assert.ok(Date.now() - changedAt < 1000, `in force within a second (took ${Date.now() - changedAt} ms)`);
        assert.equal((await request(there, host, '/')).text, 'second');
      } finally {
        await second.close();
      }
    });
  },
  { agents: { heartbeatIntervalMs: 1000 }, edgeTuning: { responseTimeoutMs: 500, connectTimeoutMs: 500 }, acrossInstances: true },
);
