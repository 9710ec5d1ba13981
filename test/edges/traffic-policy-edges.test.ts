// Traffic policies are enforced on real traffic: a route's policy document (as the published docs
// write them) runs its rules on each request and response — deny, custom-response, redirect,
// url-rewrite, add-headers, remove-headers, rate-limit, log, restrict-ips, compress-response,
// jwt-validation — the older policy module's inbound and outbound the same way, and a TCP edge's
// on_tcp_connect on each connection. What the client and the upstream each saw is asserted.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { test } from 'node:test';
import zlib from 'node:zlib';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { describeEachStore } from '../helpers/harness.js';
import { created, edgesRead, edgeWithRoute, portListening, put, request, upstream } from './helpers.js';

const DOCUMENT = `
on_http_request:
  - name: no admin
    expressions:
      - req.url.path.startsWith('/admin')
    actions:
      - type: deny
        config:
          status_code: 403
  - name: teapot
    expressions:
      - req.url.path == '/tea'
    actions:
      - type: custom-response
        config:
          status_code: 418
          content: "short and stout at \${req.url.path}"
          headers:
            x-tea: earl grey
  - name: moved
    expressions:
      - req.url.path.startsWith('/old/')
    actions:
      - type: redirect
        config:
          from: "/old/(.*)"
          to: "/new/$1"
          status_code: 301
  - name: versioned
    expressions:
      - req.url.path.startsWith('/v1/')
    actions:
      - type: url-rewrite
        config:
          from: "/v1/(.*)"
          to: "/api/$1"
  - name: headers
    actions:
      - type: add-headers
        config:
          headers:
            x-client-ip: "\${conn.client_ip}"
      - type: remove-headers
        config:
          headers: [x-remove-me]
  - name: limited
    expressions:
      - req.url.path == '/limited'
    actions:
      - type: rate-limit
        config:
          name: two a minute
          algorithm: sliding_window
          capacity: 2
          rate: 60s
          bucket_key:
            - conn.client_ip
  - name: audit
    expressions:
      - req.method == 'DELETE'
    actions:
      - type: log
        config:
          metadata:
            reason: a delete
on_http_response:
  - name: stamp
    actions:
      - type: add-headers
        config:
          headers:
            x-policy: applied
      - type: remove-headers
        config:
          headers: [server-secret]
  - name: squeeze
    expressions:
      - req.url.path == '/big'
    actions:
      - type: compress-response
        config:
          algorithms: [gzip]
  - name: friendly 404
    expressions:
      - res.status_code == 404
    actions:
      - type: custom-response
        config:
          status_code: 404
          content: nothing here
`;

describeEachStore(
  'traffic policies at the edge',
  (h) => {
    test('a route’s traffic_policy document: every action on real requests, as the client and the upstream see them', async () => {
      const api = await h().newAccount();
      const up = await upstream('app', (seen) => {
        if (seen.url === '/missing') return { status: 404, body: 'upstream 404' };
        if (seen.url === '/big') return { body: 'z'.repeat(5000), headers: { 'server-secret': 's' } };
        return { headers: { 'server-secret': 's' } };
      });
      try {
        const backend = await created(api, '/backends/static', { address: `127.0.0.1:${up.port}`, tls: { enabled: false } });
        const { host } = await edgeWithRoute(api, { backend: { backend_id: backend.id }, traffic_policy: { value: DOCUMENT } });
        await edgesRead(h(), () => Boolean(h().agents!.edges.httpsEdge(host)?.routes[0]?.modules.policy), 'the policy');

        const admin = await request(h(), host, '/admin/users');
        assert.equal(admin.status, 403);
        const tea = await request(h(), host, '/tea');
        assert.deepEqual([tea.status, tea.text, tea.headers['x-tea']], [418, 'short and stout at /tea', 'earl grey']);
        const moved = await request(h(), host, '/old/page?x=1');
        assert.equal(moved.status, 301);
        assert.equal(moved.headers.location, `https://${host}/new/page?x=1`);
        assert.equal(up.received.length, 0, 'answered by the policy: nothing reached the upstream');

        const rewritten = await request(h(), host, '/v1/items?q=2', { headers: { 'x-remove-me': 'gone', 'x-keep': 'kept' } });
        assert.equal(rewritten.status, 200);
        const seen = up.received.at(-1)!;
        assert.equal(seen.url, '/api/items?q=2');
        assert.equal(seen.headers['x-client-ip'], '127.0.0.1');
        assert.equal(seen.headers['x-remove-me'], undefined);
        assert.equal(seen.headers['x-keep'], 'kept');
        assert.equal(rewritten.headers['x-policy'], 'applied', 'on_http_response adds headers');
        assert.equal(rewritten.headers['server-secret'], undefined, 'and removes them');

        const statuses = [];
        for (let i = 0; i < 3; i++) statuses.push((await request(h(), host, '/limited')).status);
        assert.deepEqual(statuses, [200, 200, 429]);

        await request(h(), host, '/thing', { method: 'DELETE' });
        const logged = h().logs.find((l) => (l.metadata as { reason?: string } | undefined)?.reason === 'a delete');
        assert.ok(logged, 'the log action writes a line with its metadata');

        const big = await request(h(), host, '/big', { headers: { 'accept-encoding': 'gzip, br' } });
        assert.equal(big.headers['content-encoding'], 'gzip', 'compress-response with its algorithms only');
        assert.equal(zlib.gunzipSync(big.body).toString(), 'z'.repeat(5000));

        const missing = await request(h(), host, '/missing');
        assert.deepEqual([missing.status, missing.text], [404, 'nothing here'], 'a custom response replaces the upstream’s');
        const refusal = h().logs.find((l) => l.msg === 'edge: request answered by its traffic policy' && l.rule === 'no admin');
        assert.equal(refusal?.action, 'deny', 'a refusal is logged with its rule and action');
      } finally {
        await up.close();
      }
    });

    test('restrict-ips with an IP policy of the account, and a policy that fails to evaluate answers 500 without touching other requests', async () => {
      const api = await h().newAccount();
      const ok = await created(api, '/backends/http_response', { body: 'in', status_code: 200, headers: {} });
      const policy = await created(api, '/ip_policies', {});
      await created(api, '/ip_policy_rules', { ip_policy_id: policy.id, cidr: '127.0.0.0/8', action: 'deny' });
      const doc = JSON.stringify({
        on_http_request: [
          { expressions: ["req.url.path == '/guarded'"], actions: [{ type: 'restrict-ips', config: { ip_policies: [policy.id] } }] },
          { name: 'broken', expressions: ["req.headers['x-missing'][0] == 'x'"], actions: [{ type: 'deny' }] },
        ],
      });
      const { host } = await edgeWithRoute(api, { backend: { backend_id: ok.id }, traffic_policy: { value: doc } });
      await edgesRead(h(), () => Boolean(h().agents!.edges.httpsEdge(host)?.routes[0]?.modules.policy), 'the policy');
      assert.equal((await request(h(), host, '/guarded')).status, 403);
      const failed = await request(h(), host, '/other');
      assert.equal(failed.status, 500);
      assert.equal(failed.headers['ngrok-error-code'], 'ERR_EP_INGRESS_709');
      assert.ok(h().logs.some((l) => l.msg === 'edge: the traffic policy failed on a request' && l.rule === 'broken'));
      assert.equal((await request(h(), host, '/other', { headers: { 'x-missing': 'y' } })).text, 'in', 'the next request is served');
    });

    test('jwt-validation with keys from a JWKS URL: a valid token passes, a missing, foreign or expired one is 401', async () => {
      const api = await h().newAccount();
      const { publicKey, privateKey } = await generateKeyPair('ES256');
      const other = await generateKeyPair('ES256');
      const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
      const jwks = http.createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ keys: [jwk] }));
      });
      jwks.listen(0, '127.0.0.1');
      await once(jwks, 'listening');
      try {
        const jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;
        const ok = await created(api, '/backends/http_response', { body: 'member', status_code: 200, headers: {} });
        const doc = JSON.stringify({
          on_http_request: [
            {
              actions: [
                {
                  type: 'jwt-validation',
                  config: {
                    issuer: { allow_list: [{ value: 'https://issuer.example' }] },
                    audience: { allow_list: [{ value: 'edgeplane' }] },
                    http: { tokens: [{ type: 'jwt', method: 'header', name: 'Authorization', prefix: 'Bearer ' }] },
                    jws: { allowed_algorithms: ['ES256'], keys: { sources: { additional_jkus: [jwksUrl] } } },
                  },
                },
              ],
            },
          ],
        });
        const { host } = await edgeWithRoute(api, { backend: { backend_id: ok.id }, traffic_policy: { value: doc } });
        await edgesRead(h(), () => Boolean(h().agents!.edges.httpsEdge(host)?.routes[0]?.modules.policy), 'the policy');
        const token = (key: CryptoKey, expires = '5m') =>
          new SignJWT({ sub: 'u1' })
            .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
            .setIssuer('https://issuer.example')
            .setAudience('edgeplane')
            .setIssuedAt()
            .setExpirationTime(expires)
            .sign(key);
        const as = async (authorization?: string) => (await request(h(), host, '/', { headers: authorization ? { authorization } : {} })).status;
        assert.equal(await as(`Bearer ${await token(privateKey)}`), 200);
        assert.equal(await as(), 401);
        assert.equal(await as(`Bearer ${await token(other.privateKey)}`), 401);
        assert.equal(await as(`Bearer ${await token(privateKey, '-1m')}`), 401);

        // A token in a form body: the edge reads the body for the policy, then sends it on whole.
        const up = await upstream('form');
        try {
          const backend = await created(api, '/backends/static', { address: `127.0.0.1:${up.port}`, tls: { enabled: false } });
          const bodyDoc = doc.replace('"method":"header","name":"Authorization","prefix":"Bearer "', '"method":"body","name":"access_token"');
          assert.notEqual(bodyDoc, doc);
          const form = await edgeWithRoute(api, { backend: { backend_id: backend.id }, traffic_policy: { value: bodyDoc } });
          await edgesRead(h(), () => Boolean(h().agents!.edges.httpsEdge(form.host)?.routes[0]?.modules.policy), 'the body policy');
          const post = (body: string) =>
            request(h(), form.host, '/submit', { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
          const sent = `access_token=${await token(privateKey)}&note=${'n'.repeat(5000)}`;
          assert.equal((await post(sent)).status, 200);
          assert.equal(up.received.at(-1)!.body, sent, 'the upstream gets the body whole');
          assert.equal((await post('note=none')).status, 401);
          assert.equal((await post(`access_token=x&pad=${'p'.repeat(1024 * 1024)}`)).status, 413, 'a body past 1 MiB is not read for the policy');
          assert.equal(up.received.length, 1);
        } finally {
          await up.close();
        }
      } finally {
        jwks.close();
      }
    });

    test('the older policy module: inbound denies by the old spellings, outbound adds headers', async () => {
      const api = await h().newAccount();
      const ok = await created(api, '/backends/http_response', { body: 'in', status_code: 200, headers: {} });
      const { host, routes, routeId } = await edgeWithRoute(api, { backend: { backend_id: ok.id } });
      await put(api, `${routes}/${routeId}/policy`, {
        inbound: [{ name: 'no deletes', expressions: ["req.Method == 'DELETE'"], actions: [{ type: 'deny', config: { status_code: 405 } }] }],
        outbound: [{ name: 'mark', expressions: ['res.StatusCode == 200'], actions: [{ type: 'add-headers', config: { headers: { 'x-old': 'policy' } } }] }],
      });
      await edgesRead(h(), () => Boolean(h().agents!.edges.httpsEdge(host)?.routes[0]?.modules.policy), 'the policy');
      assert.equal((await request(h(), host, '/', { method: 'DELETE' })).status, 405);
      assert.equal((await request(h(), host, '/')).headers['x-old'], 'policy');
    });

    test('a TCP edge’s on_tcp_connect: a denied client is closed, logged with its rule; an allowed one reaches the backend', async () => {
      const api = await h().newAccount();
      const echo = net.createServer((socket) => socket.pipe(socket));
      echo.listen(0, '127.0.0.1');
      await once(echo, 'listening');
      try {
        const addr = await created(api, '/reserved_addrs', {});
        const port = Number(String(addr.addr).split(':')[1]);
        const backend = await created(api, '/backends/static', { address: `127.0.0.1:${(echo.address() as AddressInfo).port}`, tls: { enabled: false } });
        const doc = JSON.stringify({
          on_tcp_connect: [{ name: 'no loopback', expressions: ["inCidrRange(conn.client_ip, '127.0.0.0/8')"], actions: [{ type: 'deny' }] }],
        });
        const edge = await created(api, '/edges/tcp', { hostports: [addr.addr], backend: { backend_id: backend.id }, traffic_policy: { value: doc } });
        await portListening(h(), port);
        const refused = net.connect(port, '127.0.0.1');
        refused.on('error', () => {});
        await once(refused, 'close');
        assert.ok(h().logs.some((l) => l.msg === 'edge: connection refused by its traffic policy' && l.rule === 'no loopback' && l.edge_id === edge.id));

        await put(api, `/edges/tcp/${edge.id}/traffic_policy`, {
          value: JSON.stringify({ on_tcp_connect: [{ expressions: ["conn.client_ip == '192.0.2.1'"], actions: [{ type: 'deny' }] }] }),
        });
        await edgesRead(
          h(),
          () => (h().agents!.edges.tcpEdge(port)?.policy as { value?: string } | undefined)?.value?.includes('192.0.2.1') === true,
          'the new policy',
        );
        const allowed = net.connect(port, '127.0.0.1');
        await once(allowed, 'connect');
        allowed.write('ping');
        const [echoed] = (await once(allowed, 'data')) as [Buffer];
        assert.equal(echoed.toString(), 'ping');
        allowed.destroy();
      } finally {
        echo.close();
      }
    });
  },
  { agents: { heartbeatIntervalMs: 1000 } },
);
