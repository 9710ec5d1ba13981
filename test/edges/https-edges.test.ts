// HTTPS edges serve traffic through the real public listener: routes by path (normalized), each
// route module enforced, and backends resolved per request — the real agent's labeled tunnels
// behind tunnel groups, local servers behind static addresses, fixed answers — with changes made
// through the API in force without a restart.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { test } from 'node:test';
import zlib from 'node:zlib';
import { once } from 'node:events';
import WebSocket, { WebSocketServer } from 'ws';
import { describeEachStore } from '../helpers/harness.js';
import { agent, created, edgesRead, edgeWithRoute, put, request, reservedHost, routesRead, upstream, type Answer } from './helpers.js';

describeEachStore(
  'HTTPS edges serve traffic',
  (h) => {
    test('routes: exact path first, then the longest prefix; the path is normalized before matching and sent on normalized; no route is a 404 page', async () => {
      const api = await h().newAccount();
      const answer = async (body: string) => (await created(api, '/backends/http_response', { body, status_code: 200, headers: { 'x-backend': body } })).id;
      const { host, routes } = await edgeWithRoute(api, { match: '/public', backend: { backend_id: await answer('public') } });
      await created(api, routes, { match_type: 'path_prefix', match: '/public/deep', backend: { backend_id: await answer('deep') } });
      await created(api, routes, { match_type: 'exact_path', match: '/public/deep/exact', backend: { backend_id: await answer('exact') } });
      await created(api, routes, { match_type: 'path_prefix', match: '/admin', backend: { backend_id: await answer('admin') } });
      await routesRead(h(), host, 4);

      const cases: [string, string][] = [
        ['/public', 'public'],
        ['/publicity', 'public'],
        ['/public/deep/x?q=1', 'deep'],
        ['/public/deep/exact', 'exact'],
        ['/public/deep/exact/', 'deep'],
        ['/public/../admin/users', 'admin'],
        ['/public/%2e%2e/admin', 'admin'],
        ['/%61dmin', 'admin'],
        ['/public/./deep', 'deep'],
      ];
      for (const [path, expected] of cases) {
        const r = await request(h(), host, path);
        assert.equal(r.status, 200, `${path}: ${r.text}`);
        assert.equal(r.text, expected, path);
        assert.equal(r.headers['x-backend'], expected);
      }
      const none = await request(h(), host, '/elsewhere');
      assert.equal(none.status, 404);
      assert.equal(none.headers['ngrok-error-code'], 'ERR_EP_INGRESS_701');
      assert.match(none.text, /No route of the edge/);
      const refusal = h().logs.find((l) => l.msg === 'edge: request refused' && l.why === 'no route');
      assert.ok(refusal?.edge_id, 'a refusal is logged with its edge');
    });

    test('a tunnel group backend reaches the real agent’s labeled tunnel; request and response headers modules, compression, forwarding headers', async () => {
      const api = await h().newAccount();
      const up = await upstream('agent', () => ({
        headers: { 'x-secret': 'hidden', 'content-type': 'application/json' },
        body: JSON.stringify({ x: 'y'.repeat(2000) }),
      }));
      const session = await agent(h(), api);
      try {
        const listener = await session.labeledListener().label('env', 'prod').label('app', 'web').listenAndForward(`http://127.0.0.1:${up.port}`);
        const group = await created(api, '/backends/tunnel_group', { labels: { env: 'prod' } });
        const { host, routes, routeId } = await edgeWithRoute(api, { backend: { backend_id: group.id } });
        await put(api, `${routes}/${routeId}/request_headers`, { add: { 'x-edge': 'yes' }, remove: ['x-drop'] });
        await put(api, `${routes}/${routeId}/response_headers`, { add: { 'x-served-by': 'edgeplane' }, remove: ['x-secret'] });
        await put(api, `${routes}/${routeId}/compression`, { enabled: true });
        await edgesRead(h(), () => Boolean(h().agents!.edges.httpsEdge(host)?.routes[0]?.modules.compression), 'the compression module');

        const r = await request(h(), host, '/api/../items?id=7', { headers: { 'x-drop': 'me', 'accept-encoding': 'gzip', 'x-forwarded-for': '203.0.113.9' } });
        assert.equal(r.status, 200, r.text);
        assert.equal(r.headers['content-encoding'], 'gzip');
        assert.equal(JSON.parse(zlib.gunzipSync(r.body).toString()).x.length, 2000);
        assert.equal(r.headers['x-served-by'], 'edgeplane');
        assert.equal(r.headers['x-secret'], undefined);
        const seen = up.received.at(-1)!;
        assert.equal(seen.url, '/items?id=7', 'the upstream gets the normalized path');
        assert.equal(seen.headers['x-edge'], 'yes');
        assert.equal(seen.headers['x-drop'], undefined);
        assert.equal(seen.headers['x-forwarded-for'], '203.0.113.9, 127.0.0.1');
        assert.equal(seen.headers['x-forwarded-proto'], 'https');
        assert.equal(seen.headers.host, host);

        // Without Accept-Encoding the answer is sent as it is.
        const plain = await request(h(), host, '/plain');
        assert.equal(plain.headers['content-encoding'], undefined);
        assert.equal(JSON.parse(plain.text).x.length, 2000);

        // The agent goes: the group has no tunnel online, and the page says the endpoint is offline.
        await listener.close();
        await edgesRead(h(), () => h().agents!.registry.labeled(api.info.accountId, { env: 'prod' }) === undefined, 'the tunnel to go');
        const offline = await request(h(), host, '/x');
        assert.equal(offline.status, 404);
        assert.equal(offline.headers['ngrok-error-code'], 'ERR_NGROK_3200');
      } finally {
        await session.close();
        await up.close();
      }
    });

    test('failover: an offline tunnel group and a refusing address are passed over; weighted never draws weight 0; none reachable is a 502', async () => {
      const api = await h().newAccount();
      const good = await upstream('good');
      // A port that refuses: listened on, then closed.
      const closed = net.createServer().listen(0, '127.0.0.1');
      await new Promise((r) => closed.once('listening', r));
      const deadPort = (closed.address() as net.AddressInfo).port;
      await new Promise((r) => closed.close(r));
      try {
        const offline = await created(api, '/backends/tunnel_group', { labels: { nobody: 'here' } });
        const dead = await created(api, '/backends/static', { address: `127.0.0.1:${deadPort}`, tls: { enabled: false } });
        const alive = await created(api, '/backends/static', { address: `127.0.0.1:${good.port}`, tls: { enabled: false } });
        const never = await created(api, '/backends/http_response', { body: 'never', status_code: 200, headers: {} });
        const weighted = await created(api, '/backends/weighted', { backends: { [alive.id]: 1, [never.id]: 0 } });
        const failover = await created(api, '/backends/failover', { backends: [offline.id, dead.id, weighted.id] });
        const { host, routes, routeId } = await edgeWithRoute(api, { backend: { backend_id: failover.id } });
        await routesRead(h(), host, 1);
        for (let i = 0; i < 5; i++) {
          const r = await request(h(), host, `/n${i}`, { method: 'POST', body: `body ${i}` });
          assert.equal(r.status, 200, r.text);
          assert.equal(r.text, `good /n${i}`);
        }
        assert.deepEqual(
          good.received.map((r) => r.body),
          [0, 1, 2, 3, 4].map((i) => `body ${i}`),
          'the body reaches the backend that answers, whole',
        );

        const onlyDead = await created(api, '/backends/failover', { backends: [offline.id, dead.id] });
        await put(api, `${routes}/${routeId}/backend`, { backend_id: onlyDead.id });
        await edgesRead(h(), () => h().agents!.edges.httpsEdge(host)?.routes[0]?.modules.backend?.backend_id === onlyDead.id, 'the new backend');
        const r = await request(h(), host, '/x');
        assert.equal(r.status, 502);
        assert.equal(r.headers['ngrok-error-code'], 'ERR_EP_INGRESS_706');
      } finally {
        await good.close();
      }
    });

    test('IP restriction refuses addresses its policies do not allow, and an added rule is in force without a restart', async () => {
      const api = await h().newAccount();
      const policy = await created(api, '/ip_policies', {});
      await created(api, '/ip_policy_rules', { ip_policy_id: policy.id, cidr: '10.0.0.0/8', action: 'allow' });
      const ok = await created(api, '/backends/http_response', { body: 'in', status_code: 200, headers: {} });
      const { host, routes, routeId } = await edgeWithRoute(api, { backend: { backend_id: ok.id }, ip_restriction: { ip_policy_ids: [policy.id] } });
      await routesRead(h(), host, 1);
      const refused = await request(h(), host, '/');
      assert.equal(refused.status, 403);
      assert.equal(refused.headers['ngrok-error-code'], 'ERR_EP_INGRESS_702');
      const logged = h().logs.find((l) => l.msg === 'edge: request refused' && l.route_id === routeId);
      assert.equal(logged?.why, 'ip_restriction');

      const rule = await created(api, '/ip_policy_rules', { ip_policy_id: policy.id, cidr: '127.0.0.1/32', action: 'allow' });
      await edgesRead(h(), () => h().agents!.edges.account(api.info.accountId)?.ipPolicies.get(policy.id)?.allow.length === 2, 'the new rule');
      assert.equal((await request(h(), host, '/')).text, 'in');

      // A deny rule wins over the allow.
      await created(api, '/ip_policy_rules', { ip_policy_id: policy.id, cidr: '127.0.0.0/8', action: 'deny' });
      await edgesRead(h(), () => h().agents!.edges.account(api.info.accountId)?.ipPolicies.get(policy.id)?.deny.length === 1, 'the deny rule');
      assert.equal((await request(h(), host, '/')).status, 403);

      // Disabled, the module lets everyone in.
      await put(api, `${routes}/${routeId}/ip_restriction`, { enabled: false, ip_policy_ids: [policy.id] });
      await edgesRead(h(), () => h().agents!.edges.httpsEdge(host)?.routes[0]?.modules.ipRestriction?.enabled === false, 'the disabled module');
      assert.equal((await request(h(), host, '/')).status, 200);
      assert.ok(rule.id);
    });

    test('user agent filter: RE2 patterns (Go syntax), allow over deny, an allow list alone refuses the rest', async () => {
      const api = await h().newAccount();
      const ok = await created(api, '/backends/http_response', { body: 'in', status_code: 200, headers: {} });
      const { host } = await edgeWithRoute(api, {
        backend: { backend_id: ok.id },
        user_agent_filter: { allow: ['(?i)curl/8\\.1'], deny: ['(?i)curl/.*', '^bot-[[:digit:]]+$'] },
      });
      await routesRead(h(), host, 1);
      const as = async (ua: string, at = host) => (await request(h(), at, '/', { headers: { 'user-agent': ua } })).status;
      assert.equal(await as('curl/7.88'), 403);
      assert.equal(await as('CURL/8.1.0'), 200, 'an allow pattern wins over a deny pattern');
      assert.equal(await as('Mozilla/5.0'), 200, 'matched by no pattern, with deny patterns: in');
      assert.equal(await as('bot-42'), 403, 'a POSIX class, as RE2 writes it');
      assert.equal(await as('bot-42x'), 200);

      const only = await edgeWithRoute(api, { backend: { backend_id: ok.id }, user_agent_filter: { allow: ['^Mozilla/'] } });
      await routesRead(h(), only.host, 1);
      assert.equal(await as('Mozilla/5.0', only.host), 200);
      assert.equal(await as('curl/8.1', only.host), 403, 'an allow list alone refuses the rest');
      const refused = await request(h(), only.host, '/', { headers: { 'user-agent': 'x' } });
      assert.equal(refused.headers['ngrok-error-code'], 'ERR_EP_INGRESS_703');
    });

    test('circuit breaker: errors over the threshold trip it (503), and a success after the tripped time closes it', async () => {
      const api = await h().newAccount();
      let failing = true;
      const up = await upstream('flaky', () => (failing ? { status: 500, body: 'down' } : { body: 'up' }));
      try {
        const backend = await created(api, '/backends/static', { address: `127.0.0.1:${up.port}`, tls: { enabled: false } });
        const { host } = await edgeWithRoute(api, {
          backend: { backend_id: backend.id },
          circuit_breaker: { volume_threshold: 3, error_threshold_percentage: 0.5, tripped_duration: 1, rolling_window: 10, num_buckets: 10 },
        });
        await routesRead(h(), host, 1);
        for (let i = 0; i < 3; i++) assert.equal((await request(h(), host, '/')).status, 500);
        const open = await request(h(), host, '/');
        assert.equal(open.status, 503);
        assert.equal(open.headers['ngrok-error-code'], 'ERR_EP_INGRESS_704');
        assert.equal(up.received.length, 3, 'a tripped breaker sends nothing upstream');
        failing = false;
        // Tripped for 1 s: asked again until it lets a request through (a timer, not an event, ends it).
        const started = Date.now();
        let status = 503;
        while (status === 503 && Date.now() - started < 5000) {
          status = (await request(h(), host, '/')).status;
          if (status === 503) await new Promise((r) => setTimeout(r, 100));
        }
        assert.equal(status, 200);
        assert.ok(Date.now() - started >= 900, 'not before the tripped duration');
        assert.equal((await request(h(), host, '/')).status, 200, 'closed again');
      } finally {
        await up.close();
      }
    });

    test('webhook verification: a request signed as the provider publishes reaches the backend whole; unsigned, altered, oversized ones never do; plain HTTP is sent to HTTPS', async () => {
      const api = await h().newAccount();
      const up = await upstream('hooks');
      try {
        const backend = await created(api, '/backends/static', { address: `127.0.0.1:${up.port}`, tls: { enabled: false } });
        const { host, routes, routeId } = await edgeWithRoute(api, { backend: { backend_id: backend.id } });
        // GitHub's own worked example (docs.github.com, "Validating webhook deliveries"): this secret and payload give this signature.
        await put(api, `${routes}/${routeId}/webhook_verification`, { provider: 'GitHub', secret: "It's a Secret to Everybody" });
        await edgesRead(
          h(),
          () => h().agents!.edges.httpsEdge(host)?.routes[0]?.modules.webhookVerification?.provider === 'GitHub',
          'the webhook_verification module',
        );
        const signature = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';
        const post = (body: string | Buffer, headers: Record<string, string> = {}) => request(h(), host, '/hook', { method: 'POST', body, headers });

        const good = await post('Hello, World!', { 'x-hub-signature-256': signature });
        assert.equal(good.status, 200, good.text);
        assert.equal(up.received.length, 1);
        assert.equal(up.received[0]!.body, 'Hello, World!');
        assert.equal(up.received[0]!.headers['x-hub-signature-256'], signature);

        const refusals: [string, Answer][] = [
          ['unsigned', await post('Hello, World!')],
          ['altered body', await post('Hello, World?', { 'x-hub-signature-256': signature })],
          ['wrong signature', await post('Hello, World!', { 'x-hub-signature-256': signature.replace(/.$/, '0'), accept: 'text/html' })],
        ];
        for (const [why, r] of refusals) {
          assert.equal(r.status, 403, why);
          assert.equal(r.headers['ngrok-error-code'], 'ERR_EP_INGRESS_713', why);
          assert.doesNotMatch(r.text, /Secret to Everybody|757107ea/, `${why}: the page shows neither the secret nor the expected signature`);
        }
        const big = await post(Buffer.alloc(1024 * 1024 + 1, 'a'), { 'x-hub-signature-256': signature });
        assert.equal(big.status, 413);
        assert.equal(big.headers['ngrok-error-code'], 'ERR_EP_INGRESS_714');
        assert.equal(up.received.length, 1, 'no refused request reached the backend');
        const plain = await new Promise<http.IncomingMessage>((resolve, reject) =>
          http.get({ host: '127.0.0.1', port: h().agents!.httpPort, path: '/hook?b=1', headers: { host } }, resolve).on('error', reject),
        );
        plain.resume();
        assert.equal(plain.statusCode, 308);
        assert.equal(plain.headers.location, `https://${host}/hook?b=1`);
      } finally {
        await up.close();
      }
    });

    test('WebSockets: upgraded through a tunnel group to the agent’s upstream; with websocket_tcp_converter, messages reach a TCP backend as bytes and plain requests are 426', async () => {
      const api = await h().newAccount();
      const server = http.createServer();
      const wss = new WebSocketServer({ server });
      wss.on('connection', (ws, req) => ws.on('message', (data) => ws.send(`ws ${req.url} ${String(req.headers['x-edge'])} ${String(data)}`)));
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      const tcp = net.createServer((socket) => socket.on('data', (chunk) => socket.write(`tcp ${chunk.toString()}`)));
      tcp.listen(0, '127.0.0.1');
      await once(tcp, 'listening');
      const session = await agent(h(), api);
      const open = (host: string, path: string) => {
        // TLS options pass through ws to tls.connect: the name for SNI and the service CA.
        const options: WebSocket.ClientOptions & { servername: string } = { ca: h().agents!.caPem, servername: host, headers: { host } };
        return new WebSocket(`wss://127.0.0.1:${h().agents!.httpsPort}${path}`, options);
      };
      const reply = async (ws: WebSocket, message: string) => {
        if (ws.readyState !== WebSocket.OPEN) await once(ws, 'open');
        ws.send(message);
        const [data] = (await once(ws, 'message')) as [Buffer];
        return data.toString();
      };
      try {
        await session
          .labeledListener()
          .label('ws', 'yes')
          .listenAndForward(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}`);
        const group = await created(api, '/backends/tunnel_group', { labels: { ws: 'yes' } });
        const upgraded = await edgeWithRoute(api, { backend: { backend_id: group.id }, request_headers: { add: { 'x-edge': 'yes' } } });
        await routesRead(h(), upgraded.host, 1);
        const ws = open(upgraded.host, '/chat/../live');
        assert.equal(await reply(ws, 'hi'), 'ws /live yes hi', 'the normalized path and the request headers module reach the upstream');
        ws.close();

        const raw = await created(api, '/backends/static', { address: `127.0.0.1:${(tcp.address() as net.AddressInfo).port}`, tls: { enabled: false } });
        const converted = await edgeWithRoute(api, { backend: { backend_id: raw.id }, websocket_tcp_converter: { enabled: true } });
        await routesRead(h(), converted.host, 1);
        const bytes = open(converted.host, '/');
        assert.equal(await reply(bytes, 'ping'), 'tcp ping');
        bytes.close();
        const plain = await request(h(), converted.host, '/');
        assert.equal(plain.status, 426);
        assert.equal(plain.headers['ngrok-error-code'], 'ERR_EP_INGRESS_711');
      } finally {
        await session.close();
        wss.close();
        server.close();
        tcp.close();
      }
    });

    test('edges of one account never serve another’s names; a deleted edge stops serving at once', async () => {
      const api = await h().newAccount();
      const ok = await created(api, '/backends/http_response', { body: 'mine', status_code: 200, headers: {} });
      const { host, edgeId } = await edgeWithRoute(api, { backend: { backend_id: ok.id } });
      const elsewhere = await reservedHost(await h().newAccount());
      await routesRead(h(), host, 1);
      assert.equal((await request(h(), host, '/')).text, 'mine');
      assert.equal((await request(h(), elsewhere, '/')).headers['ngrok-error-code'], 'ERR_NGROK_3200');
      assert.equal((await api.delete(`/edges/https/${edgeId}`)).status, 204);
      await edgesRead(h(), () => h().agents!.edges.httpsEdge(host) === undefined, 'the deleted edge');
      assert.equal((await request(h(), host, '/')).headers['ngrok-error-code'], 'ERR_NGROK_3200');
    });
  },
  { agents: { heartbeatIntervalMs: 1000 } },
);
