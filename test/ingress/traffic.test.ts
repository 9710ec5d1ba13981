// What public traffic leaves for the operator: GET /metrics counts the requests and bytes of an
// agent's endpoint (the real agent) and of an HTTPS edge by status class, the refusals by module
// and code, the upstream latency and failed TLS handshakes, and reads the agents' sessions,
// tunnels and streams; and every request or connection leaves one access-log line, which
// EDGEPLANE_ACCESS_LOG=off silences.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { test } from 'node:test';
import tls from 'node:tls';
import WebSocket, { WebSocketServer } from 'ws';
import { ConfigError, loadConfig, readSettings } from '../../src/config.js';
import { describeEachStore, type Harness } from '../helpers/harness.js';
import { agent, created, edgeWithRoute, request, routesRead, upstream } from '../edges/helpers.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** GET /metrics (from loopback, so no token is needed), parsed into samples. */
async function scrape(h: Harness): Promise<Sample[]> {
  const res = await fetch(`${h.baseUrl}/metrics`);
  assert.equal(res.status, 200);
  const samples: Sample[] = [];
  for (const line of (await res.text()).split('\n')) {
    const m = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const pair of (m[2] ?? '').matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

/** The value of the sample of `name` whose labels include `labels` (0 when there is none). */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  assert.ok(found.length <= 1, `${name} ${JSON.stringify(labels)} names ${found.length} samples`);
  return found[0]?.value ?? 0;
}

/**
 * The log lines that `match`, once there are `count` of them. A line is written when its request's
 * response or its connection closes, which the client may see first; the log has no event to
 * await, so it is looked at again each turn of the event loop, for 5 s at most.
 */
async function accessLines(h: Harness, count: number, match: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>[]> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const lines = h.logs.filter((l) => l.msg === 'access' && match(l));
    if (lines.length >= count || Date.now() > deadline) return lines;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** The id of the account's one bound endpoint, as this process holds it. */
function endpointIdOf(h: Harness, accountId: string): string {
  const tunnel = h.agents!.registry.tunnels().find((t) => t.accountId === accountId && t.endpoint);
  assert.ok(tunnel?.endpoint, 'the endpoint is bound');
  return tunnel.endpoint.id;
}

describeEachStore(
  'public traffic in /metrics and the access log',
  (h) => {
    test('an agent endpoint and an HTTPS edge: requests by status class, bytes, upstream latency, refusals, and one access line each', async () => {
      const api = await h().newAccount();
      const up = await upstream('up', (req) => (req.url.startsWith('/missing') ? { status: 404, body: 'none here' } : { body: `hello ${req.url}` }));
      const session = await agent(h(), api);
      try {
        const listener = await session.httpEndpoint().listenAndForward(`http://127.0.0.1:${up.port}`);
        const endpointHost = new URL(listener.url()!).hostname;
        const endpointId = endpointIdOf(h(), api.info.accountId);
        const tunnelId = h()
          .agents!.registry.tunnels()
          .find((t) => t.endpoint?.id === endpointId)!.id;

        const staticBackend = await created(api, '/backends/static', { address: `127.0.0.1:${up.port}`, tls: { enabled: false } });
        const { host: edgeHost, edgeId, routeId, routes } = await edgeWithRoute(api, { match: '/app', backend: { backend_id: staticBackend.id } });
        // A second route only 10.0.0.0/8 may reach: this client (127.0.0.1) is refused.
        const policy = await created(api, '/ip_policies', {});
        await created(api, '/ip_policy_rules', { ip_policy_id: policy.id, cidr: '10.0.0.0/8', action: 'allow' });
        const closed = await created(api, routes, {
          match_type: 'path_prefix',
          match: '/closed',
          backend: { backend_id: staticBackend.id },
          ip_restriction: { ip_policy_ids: [policy.id] },
        });
        await routesRead(h(), edgeHost, 2);

        const before = await scrape(h());
        // The endpoint: two answers of 200 (one with a token in its query string) and one 404 of the upstream's own.
        assert.equal((await request(h(), endpointHost, '/one')).status, 200);
        assert.equal((await request(h(), endpointHost, '/two?token=s3cret')).status, 200);
        const missing = await request(h(), endpointHost, '/missing', { method: 'POST', body: 'x'.repeat(300) });
        assert.equal(missing.status, 404);
        // The edge: one 200 through its static address, one path no route matches, one refused by the IP restriction.
        assert.equal((await request(h(), edgeHost, '/app/page')).text, 'hello /app/page');
        assert.equal((await request(h(), edgeHost, '/nowhere')).headers['ngrok-error-code'], 'ERR_EP_INGRESS_701');
        assert.equal((await request(h(), edgeHost, '/closed/x')).headers['ngrok-error-code'], 'ERR_EP_INGRESS_702');
        // A host no one serves.
        assert.equal((await request(h(), `unbound-${endpointHost}`, '/')).status, 404);

        const endpointLines = await accessLines(h(), 3, (l) => l.endpoint_id === endpointId);
        const edgeLines = await accessLines(h(), 3, (l) => l.edge_id === edgeId);
        const after = await scrape(h());
        const delta = (name: string, labels: Record<string, string>) => valueOf(after, name, labels) - valueOf(before, name, labels);

        // Requests by edge or endpoint and status class.
        assert.equal(delta('edgeplane_ingress_requests_total', { kind: 'endpoint', id: endpointId, status_class: '2xx' }), 2);
        assert.equal(delta('edgeplane_ingress_requests_total', { kind: 'endpoint', id: endpointId, status_class: '4xx' }), 1);
        assert.equal(delta('edgeplane_ingress_requests_total', { kind: 'edge', id: edgeId, status_class: '2xx' }), 1);
        assert.equal(delta('edgeplane_ingress_requests_total', { kind: 'edge', id: edgeId, status_class: '4xx' }), 2);
        assert.equal(delta('edgeplane_ingress_requests_total', { kind: 'unmatched', id: '', status_class: '4xx' }), 1);
        assert.equal(delta('edgeplane_ingress_requests_total', { kind: 'edge', id: edgeId, status_class: '5xx' }), 0);

        // Refusals by module and code: the IP restriction's and the missing route's.
        assert.equal(delta('edgeplane_ingress_refusals_total', { module: 'ip_restriction', code: 'ERR_EP_INGRESS_702' }), 1);
        assert.equal(delta('edgeplane_ingress_refusals_total', { module: 'route', code: 'ERR_EP_INGRESS_701' }), 1);

        // Upstream latency: the endpoint's three requests reached the agent, the edge's one its static address.
        assert.equal(delta('edgeplane_ingress_upstream_latency_seconds_count', { kind: 'endpoint' }), 3);
        assert.equal(delta('edgeplane_ingress_upstream_latency_seconds_count', { kind: 'edge' }), 1);
        assert.equal(delta('edgeplane_ingress_upstream_latency_seconds_bucket', { kind: 'endpoint', le: '+Inf' }), 3);
        assert.ok(delta('edgeplane_ingress_upstream_latency_seconds_sum', { kind: 'endpoint' }) > 0);

        // The agent's session and tunnel are read at scrape time.
        assert.ok(valueOf(after, 'edgeplane_agent_sessions') >= 1);
        assert.ok(valueOf(after, 'edgeplane_agent_tunnels') >= 1);

        // One access line per request, with every field; the path never carries its query string.
        assert.equal(endpointLines.length, 3);
        const [one, two, post] = endpointLines;
        const fields = [
          'component',
          'proto',
          'endpoint_id',
          'edge_id',
          'route_id',
          'backend_kind',
          'backend_id',
          'client_ip',
          'method',
          'host',
          'path',
          'status',
        ];
        assert.deepEqual(Object.fromEntries(fields.map((f) => [f, one![f]])), {
          component: 'ingress',
          proto: 'https',
          endpoint_id: endpointId,
          edge_id: undefined,
          route_id: undefined,
          backend_kind: 'tunnel',
          backend_id: tunnelId,
          client_ip: '127.0.0.1',
          method: 'GET',
          host: endpointHost,
          path: '/one',
          status: 200,
        });
        for (const field of ['bytes_in', 'bytes_out', 'ms']) assert.equal(typeof one![field], 'number', field);
        assert.equal(one!.level, 30, 'at info');
        assert.equal(two!.path, '/two');
        assert.ok(!JSON.stringify(endpointLines).includes('s3cret'), 'no query string is logged');
        assert.equal(post!.method, 'POST');
        assert.equal(post!.status, 404);
        assert.ok(typeof post!.ms === 'number' && post!.ms >= 0);
        // Bytes both ways, heads included: the body of 300 bytes in, the upstream's answer out.
        assert.ok((post!.bytes_in as number) > 300 && (post!.bytes_in as number) < 1000, `bytes in: ${post!.bytes_in}`);
        assert.ok((post!.bytes_out as number) > 'none here'.length + 'HTTP/1.1 404 Not Found\r\n'.length, `bytes out: ${post!.bytes_out}`);
        // The metric adds up the same bytes as the lines.
        const sum = (lines: Record<string, unknown>[], field: string) => lines.reduce((n, l) => n + (l[field] as number), 0);
        assert.equal(delta('edgeplane_ingress_bytes_total', { kind: 'endpoint', id: endpointId, direction: 'in' }), sum(endpointLines, 'bytes_in'));
        assert.equal(delta('edgeplane_ingress_bytes_total', { kind: 'endpoint', id: endpointId, direction: 'out' }), sum(endpointLines, 'bytes_out'));
        assert.equal(delta('edgeplane_ingress_bytes_total', { kind: 'edge', id: edgeId, direction: 'out' }), sum(edgeLines, 'bytes_out'));

        // The edge's lines name its route and backend where the request got that far.
        const byPath = new Map(edgeLines.map((l) => [l.path, l]));
        assert.deepEqual(
          [byPath.get('/app/page')?.status, byPath.get('/app/page')?.route_id, byPath.get('/app/page')?.backend_kind, byPath.get('/app/page')?.backend_id],
          [200, routeId, 'static', staticBackend.id],
        );
        assert.equal(byPath.get('/app/page')?.endpoint_id, undefined);
        assert.deepEqual([byPath.get('/nowhere')?.status, byPath.get('/nowhere')?.route_id], [404, undefined]);
        assert.deepEqual(
          [byPath.get('/closed/x')?.status, byPath.get('/closed/x')?.route_id, byPath.get('/closed/x')?.backend_id],
          [403, closed.id, undefined],
        );

        // A kept-alive client connection keeps its stream to the agent open: the gauge counts it.
        const keepAlive = new https.Agent({ keepAlive: true, maxSockets: 1 });
        try {
          assert.equal((await request(h(), endpointHost, '/kept', { agent: keepAlive })).status, 200);
          assert.ok(valueOf(await scrape(h()), 'edgeplane_streams_open') >= 1);
          assert.ok(h().agents!.registry.openProxyStreams >= 1);
        } finally {
          keepAlive.destroy();
        }
      } finally {
        await session.close();
        await up.close();
      }
    });

    test('a TCP endpoint’s connection is counted and logged once it closes', async () => {
      const api = await h().newAccount();
      const echo = net.createServer((socket) => socket.pipe(socket));
      echo.listen(0, '127.0.0.1');
      await once(echo, 'listening');
      const session = await agent(h(), api);
      try {
        const listener = await session.tcpEndpoint().listenAndForward(`tcp://127.0.0.1:${(echo.address() as AddressInfo).port}`);
        const port = Number(new URL(listener.url()!.replace(/^tcp:/, 'http:')).port);
        const endpointId = endpointIdOf(h(), api.info.accountId);
        const before = await scrape(h());

        const client = net.connect({ host: '127.0.0.1', port });
        await once(client, 'connect');
        client.write('ping '.repeat(20));
        let echoed = 0;
        for await (const chunk of client) {
          echoed += (chunk as Buffer).length;
          if (echoed === 100) break;
        }
        client.destroy();

        const [line] = await accessLines(h(), 1, (l) => l.endpoint_id === endpointId);
        assert.ok(line, 'the connection left a line');
        assert.equal(line.proto, 'tcp');
        assert.equal(line.backend_kind, 'tunnel');
        assert.equal(line.client_ip, '127.0.0.1');
        assert.equal(line.bytes_in, 100);
        assert.equal(line.bytes_out, 100);
        assert.equal(line.status, undefined, 'a connection has no status');
        const after = await scrape(h());
        const delta = (name: string, labels: Record<string, string>) => valueOf(after, name, labels) - valueOf(before, name, labels);
        assert.equal(delta('edgeplane_ingress_connections_total', { kind: 'endpoint', id: endpointId }), 1);
        assert.equal(delta('edgeplane_ingress_bytes_total', { kind: 'endpoint', id: endpointId, direction: 'in' }), 100);
      } finally {
        await session.close();
        echo.close();
      }
    });

    test('a WebSocket upgrade leaves one line as its connection closes, with the status its answer began with', async () => {
      const api = await h().newAccount();
      const server = http.createServer();
      const wss = new WebSocketServer({ server });
      wss.on('connection', (ws) => ws.on('message', (data) => ws.send(`echo ${String(data)}`)));
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      const session = await agent(h(), api);
      try {
        const upstreamUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        const listener = await session.httpEndpoint().listenAndForward(upstreamUrl);
        const host = new URL(listener.url()!).hostname;
        const endpointId = endpointIdOf(h(), api.info.accountId);
        // Through an edge too: a tunnel group of the same agent, and a route that refuses this client.
        await session.labeledListener().label('app', 'ws').listenAndForward(upstreamUrl);
        const group = await created(api, '/backends/tunnel_group', { labels: { app: 'ws' } });
        const policy = await created(api, '/ip_policies', {});
        const { host: edgeHost, edgeId, routeId, routes } = await edgeWithRoute(api, { match: '/live', backend: { backend_id: group.id } });
        await created(api, routes, {
          match_type: 'path_prefix',
          match: '/closed',
          backend: { backend_id: group.id },
          ip_restriction: { ip_policy_ids: [policy.id] },
        });
        await routesRead(h(), edgeHost, 2);
        const before = await scrape(h());

        const talk = async (to: string, path: string) => {
          const options: WebSocket.ClientOptions & { servername: string } = { ca: h().agents!.caPem, servername: to, headers: { host: to } };
          const ws = new WebSocket(`wss://127.0.0.1:${h().agents!.httpsPort}${path}`, options);
          await once(ws, 'open');
          ws.send('hi');
          const [data] = (await once(ws, 'message')) as [Buffer];
          ws.close();
          await once(ws, 'close');
          return data.toString();
        };
        assert.equal(await talk(host, '/ws?token=s3cret'), 'echo hi');
        assert.equal(await talk(edgeHost, '/live'), 'echo hi');
        const refused = new WebSocket(`wss://127.0.0.1:${h().agents!.httpsPort}/closed`, {
          ca: h().agents!.caPem,
          servername: edgeHost,
          headers: { host: edgeHost },
        } as WebSocket.ClientOptions);
        const [, answer] = (await once(refused, 'unexpected-response')) as [unknown, http.IncomingMessage];
        assert.equal(answer.statusCode, 403);
        // Abandoned: ws reports that as an error, which is expected here.
        refused.on('error', () => {});
        refused.terminate();

        const [line] = await accessLines(h(), 1, (l) => l.endpoint_id === endpointId);
        assert.deepEqual([line?.proto, line?.method, line?.path, line?.status, line?.backend_kind], ['https', 'GET', '/ws', 101, 'tunnel']);
        assert.ok((line!.bytes_in as number) > 0 && (line!.bytes_out as number) > 0);
        const edgeLines = await accessLines(h(), 2, (l) => l.edge_id === edgeId);
        const byPath = new Map(edgeLines.map((l) => [l.path, l]));
        assert.deepEqual([byPath.get('/live')?.status, byPath.get('/live')?.route_id, byPath.get('/live')?.backend_id], [101, routeId, group.id]);
        assert.equal(byPath.get('/closed')?.status, 403);
        const after = await scrape(h());
        const delta = (name: string, labels: Record<string, string>) => valueOf(after, name, labels) - valueOf(before, name, labels);
        assert.equal(delta('edgeplane_ingress_requests_total', { kind: 'endpoint', id: endpointId, status_class: '1xx' }), 1);
        assert.equal(delta('edgeplane_ingress_requests_total', { kind: 'edge', id: edgeId, status_class: '1xx' }), 1);
        assert.equal(delta('edgeplane_ingress_requests_total', { kind: 'edge', id: edgeId, status_class: '4xx' }), 1);
      } finally {
        await session.close();
        server.closeAllConnections();
        server.close();
      }
    });

    test('a TLS handshake that fails at the HTTPS listener is counted', async () => {
      const before = valueOf(await scrape(h()), 'edgeplane_ingress_tls_handshake_failures_total', { listener: 'https' });
      // An RSA key exchange only: the listener's certificates are ECDSA, so no cipher is shared.
      const socket = tls.connect({
        host: '127.0.0.1',
        port: h().agents!.httpsPort,
        servername: 'nobody.edgeplane.app',
        maxVersion: 'TLSv1.2',
        ciphers: 'ECDHE-RSA-AES128-GCM-SHA256',
        rejectUnauthorized: false,
      });
      const [err] = (await once(socket, 'error')) as [NodeJS.ErrnoException];
      assert.match(String(err.code), /ALERT_HANDSHAKE_FAILURE/);
      const after = valueOf(await scrape(h()), 'edgeplane_ingress_tls_handshake_failures_total', { listener: 'https' });
      assert.equal(after - before, 1);
    });
  },
  { agents: { heartbeatIntervalMs: 1000 } },
);

describeEachStore(
  'EDGEPLANE_ACCESS_LOG=off',
  (h) => {
    test('silences the access log; the metrics still count', async () => {
      const api = await h().newAccount();
      const ok = await created(api, '/backends/http_response', { body: 'in', status_code: 201, headers: {} });
      const { host, edgeId } = await edgeWithRoute(api, { backend: { backend_id: ok.id } });
      await routesRead(h(), host, 1);
      assert.equal((await request(h(), host, '/')).status, 201);
      assert.equal((await request(h(), host, '/again')).status, 201);
      const samples = await scrape(h());
      assert.equal(valueOf(samples, 'edgeplane_ingress_requests_total', { kind: 'edge', id: edgeId, status_class: '2xx' }), 2);
      assert.equal(h().logs.filter((l) => l.msg === 'access').length, 0, 'no access line, though the log is at info');
      assert.ok(
        h().logs.some((l) => l.msg === 'request'),
        'the API’s own request lines are still written',
      );
    });
  },
  { agents: { heartbeatIntervalMs: 1000 }, accessLog: 'off' },
);

test('EDGEPLANE_ACCESS_LOG takes info (the default), debug or off', () => {
  assert.equal(loadConfig({}, '/x').accessLog, 'info');
  assert.equal(loadConfig(readSettings({ EDGEPLANE_ACCESS_LOG: 'OFF' }), '/x').accessLog, 'off');
  assert.equal(loadConfig(readSettings({ EDGEPLANE_ACCESS_LOG: 'off' }, { accessLog: 'debug' }), '/x').accessLog, 'debug', 'the flag wins');
  assert.throws(
    () => loadConfig({ accessLog: 'loud' }, '/x'),
    (err: ConfigError) => err.problems.length === 1 && err.problems[0] === "EDGEPLANE_ACCESS_LOG must be one of info, debug, off; got 'loud'",
  );
});
