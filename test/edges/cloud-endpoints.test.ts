// Cloud endpoints serve real traffic: the real agent (@ngrok/ngrok) binds an internal endpoint
// (`https://<name>.internal`), a cloud endpoint made through the API with a traffic policy (add a
// header, then forward-internal) forwards public HTTPS requests to it, a PATCH of the policy
// takes effect without a restart, DELETE stops serving. An internal endpoint is reachable through
// its own account's forward-internal only: never on a public listener, never from another
// account's cloud endpoint. With no internal endpoint online, a clear error page. TCP cloud
// endpoints likewise: the agent binds `tcp://<name>.internal:<port>`, a `tcp://` cloud endpoint on
// a reserved address forwards raw connections to it (bytes both ways) or closes them as its
// on_tcp_connect rules say, and stops listening when deleted.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { test } from 'node:test';
import { waitFor } from '../helpers/assertions.js';
import { describeEachStore, type Api, type Harness } from '../helpers/harness.js';
import { agent, created, edgesRead, online, portListening, request, reservedHost, upstream } from './helpers.js';

/** A policy that adds `x-cloud: <tag>` to the request, then forwards it to the internal URL. */
const policy = (internalUrl: string, tag: string) => `
on_http_request:
  - name: tag
    actions:
      - type: add-headers
        config:
          headers:
            x-cloud: ${tag}
  - name: to the service
    actions:
      - type: forward-internal
        config:
          url: ${internalUrl}
on_http_response:
  - actions:
      - type: add-headers
        config:
          headers:
            x-served-by: cloud endpoint
`;

/** A request to a public listener by name, whatever certificate it presents: its status and error code. */
function publicRequest(h: Harness, scheme: 'http' | 'https', host: string): Promise<{ status: number; error: unknown }> {
  return new Promise((resolve, reject) => {
    const options = { host: '127.0.0.1', path: '/', headers: { host }, agent: false as const };
    const done = (res: http.IncomingMessage) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, error: res.headers['ngrok-error-code'] }));
    };
    const req =
      scheme === 'https'
        ? // The name has no certificate: what is asserted is the answer, not the TLS identity.
          https.request({ ...options, port: h.agents!.httpsPort, servername: host, rejectUnauthorized: false }, done)
        : http.request({ ...options, port: h.agents!.httpPort }, done);
    req.on('error', reject);
    req.end();
  });
}

/** A TCP service that answers each line with `<name>: <line>`. */
async function echo(name: string): Promise<{ port: number; close(): Promise<void> }> {
  const server = net.createServer((socket) => {
    socket.on('error', () => {});
    let buffered = '';
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      for (let at = buffered.indexOf('\n'); at >= 0; at = buffered.indexOf('\n')) {
        socket.write(`${name}: ${buffered.slice(0, at)}\n`);
        buffered = buffered.slice(at + 1);
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: (server.address() as AddressInfo).port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** A line's answer on a new connection to `port`; rejects when the connection is closed first. */
async function askTcp(port: number, line: string): Promise<string> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {});
  try {
    return await new Promise<string>((resolve, reject) => {
      let got = '';
      socket.on('data', (chunk: Buffer) => {
        got += chunk.toString();
        if (got.includes('\n')) resolve(got.trim());
      });
      socket.once('close', () => reject(new Error(`closed before an answer (got '${got}')`)));
      socket.write(`${line}\n`);
    });
  } finally {
    socket.destroy();
  }
}

/** An on_tcp_connect policy: `before` rules, then forward-internal to `url`. */
const tcpPolicy = (url: string, ...before: unknown[]) =>
  JSON.stringify({ on_tcp_connect: [...before, { actions: [{ type: 'forward-internal', config: { url } }] }] });

/** Resolves once this instance serves the TCP cloud endpoint on `port` with a policy satisfying `check` (undefined: none). */
function tcpRead(h: Harness, port: number, check: (policy: string | undefined) => boolean, what: string): Promise<void> {
  return edgesRead(
    h,
    () => {
      const edge = h.agents!.edges.tcpEdge(port);
      return check(edge?.cloud && edge.policy?.kind === 'traffic_policy' ? edge.policy.value : undefined);
    },
    what,
  );
}

const internalName = () => `svc-${randomBytes(4).toString('hex')}.internal`;

/** Resolves once this instance serves a cloud endpoint on `host` whose policy satisfies `check` (or none, with `gone`). */
function cloudRead(h: Harness, host: string, check: (policy: string | undefined) => boolean, what: string): Promise<void> {
  return edgesRead(
    h,
    () => {
      const module = h.agents!.edges.cloudEndpoint(host, 'https')?.edge.routes[0]?.modules.policy;
      return check(module?.kind === 'traffic_policy' ? module.value : undefined);
    },
    what,
  );
}

async function cloudEndpoint(h: Harness, api: Api, host: string, trafficPolicy: string): Promise<string> {
  const e = await created(api, '/endpoints', { type: 'cloud', url: `https://${host}`, traffic_policy: trafficPolicy });
  await cloudRead(h, host, (p) => p === trafficPolicy, `the cloud endpoint on ${host}`);
  return e.id as string;
}

describeEachStore(
  'cloud endpoints serve traffic',
  (h) => {
    test('forward-internal sends public requests to the agent’s internal endpoint; PATCH applies at once; DELETE stops serving', async () => {
      const api = await h().newAccount();
      const up = await upstream('service');
      const session = await agent(h(), api);
      try {
        const name = internalName();
        const listener = await session.httpEndpoint().domain(name).listenAndForward(`http://127.0.0.1:${up.port}`);
        assert.equal(listener.url(), `https://${name}`);
        // The internal endpoint is listed with the agent's endpoints, bound internally, once the
        // live rows are written (they follow the registry's changes; no event says when).
        let listed: { url: string; bindings: string[]; type: string }[] = [];
        await waitFor('the internal endpoint to be listed', async () => {
          listed = (await api.get('/endpoints')).json.endpoints;
          return listed.length === 1;
        });
        assert.deepEqual(
          listed.map((e) => [e.url, e.type, e.bindings]),
          [[`https://${name}`, 'ephemeral', ['internal']]],
        );

        const host = await reservedHost(api);
        const id = await cloudEndpoint(h(), api, host, policy(`https://${name}`, 'one'));
        const r = await request(h(), host, '/items?id=7', { method: 'POST', body: 'hello' });
        assert.equal(r.status, 200, r.text);
        assert.equal(r.text, 'service /items?id=7');
        assert.equal(r.headers['x-served-by'], 'cloud endpoint');
        const seen = up.received.at(-1)!;
        assert.equal(seen.method, 'POST');
        assert.equal(seen.body, 'hello');
        assert.equal(seen.headers['x-cloud'], 'one');
        assert.equal(seen.headers['x-forwarded-proto'], 'https');
        assert.equal(seen.headers.host, host);

        // A PATCH of the policy is served without a restart.
        const patched = await api.patch(`/endpoints/${id}`, { traffic_policy: policy(`https://${name}`, 'two') });
        assert.equal(patched.status, 200, patched.text);
        await cloudRead(h(), host, (p) => p?.includes('x-cloud: two') === true, 'the patched policy');
        assert.equal((await request(h(), host, '/again')).status, 200);
        assert.equal(up.received.at(-1)!.headers['x-cloud'], 'two');

        // A policy that answers itself needs no internal endpoint.
        await api.patch(`/endpoints/${id}`, {
          traffic_policy: 'on_http_request:\n  - actions:\n      - type: deny\n        config:\n          status_code: 451\n',
        });
        await cloudRead(h(), host, (p) => p?.includes('451') === true, 'the deny policy');
        assert.equal((await request(h(), host, '/')).status, 451);

        // A policy that neither answers nor forwards: a clear error page.
        await api.patch(`/endpoints/${id}`, { traffic_policy: '{"on_http_request": []}' });
        await cloudRead(h(), host, (p) => p === '{"on_http_request": []}', 'the empty policy');
        const none = await request(h(), host, '/');
        assert.equal(none.status, 502);
        assert.equal(none.headers['ngrok-error-code'], 'ERR_EP_INGRESS_718');

        // DELETE: the name is served by nothing.
        assert.equal((await api.delete(`/endpoints/${id}`)).status, 204);
        await cloudRead(h(), host, (p) => p === undefined, 'the deleted cloud endpoint');
        assert.equal((await request(h(), host, '/')).headers['ngrok-error-code'], 'ERR_NGROK_3200');
        await listener.close();
      } finally {
        await session.close();
        await up.close();
      }
    });

    test('no internal endpoint online: a clear 502 page naming it; one bound later is used at once', async () => {
      const api = await h().newAccount();
      const up = await upstream('late');
      const name = internalName();
      const host = await reservedHost(api);
      await cloudEndpoint(h(), api, host, policy(`https://${name}`, 'x'));
      const offline = await request(h(), host, '/', { headers: { accept: 'text/plain' } });
      assert.equal(offline.status, 502);
      assert.equal(offline.headers['ngrok-error-code'], 'ERR_EP_INGRESS_717');
      assert.match(offline.text, new RegExp(`internal endpoint.*\\(https://${name.replace(/\./g, '\\.')}\\)`));
      const session = await agent(h(), api);
      try {
        await online(h(), await session.httpEndpoint().domain(name).listenAndForward(`http://127.0.0.1:${up.port}`), api.info.accountId);
        const r = await request(h(), host, '/now');
        assert.equal(r.status, 200, r.text);
        assert.equal(r.text, 'late /now');
      } finally {
        await session.close();
        await up.close();
      }
    });

    test('an internal endpoint is not served publicly, and another account’s cloud endpoint cannot reach it', async () => {
      const owner = await h().newAccount();
      const stranger = await h().newAccount();
      const up = await upstream('private');
      const session = await agent(h(), owner);
      try {
        const name = internalName();
        await online(h(), await session.httpEndpoint().domain(name).listenAndForward(`http://127.0.0.1:${up.port}`), owner.info.accountId);
        // On the public listeners, by name: no endpoint (HTTPS has no certificate for the name either).
        for (const scheme of ['https', 'http'] as const) {
          const direct = await publicRequest(h(), scheme, name);
          assert.equal(direct.error, 'ERR_NGROK_3200', `${scheme}: ${direct.status}`);
        }
        // Another account forwarding to the same internal URL reaches nothing of the owner's.
        const host = await reservedHost(stranger);
        await cloudEndpoint(h(), stranger, host, policy(`https://${name}`, 'stranger'));
        const r = await request(h(), host, '/');
        assert.equal(r.status, 502);
        assert.equal(r.headers['ngrok-error-code'], 'ERR_EP_INGRESS_717');
        assert.equal(up.received.length, 0, 'the owner’s service saw no request');
        // The stranger may bind the same internal name for itself: internal names are per account.
        const theirs = await upstream('theirs');
        const other = await agent(h(), stranger);
        try {
          await online(h(), await other.httpEndpoint().domain(name).listenAndForward(`http://127.0.0.1:${theirs.port}`), stranger.info.accountId);
          assert.equal((await request(h(), host, '/')).text, 'theirs /');
          assert.equal(up.received.length, 0);
        } finally {
          await other.close();
          await theirs.close();
        }
      } finally {
        await session.close();
        await up.close();
      }
    });

    test('binds: the binding internal on a public name, and internal TLS endpoints, are refused with a clear reason', async () => {
      const api = await h().newAccount();
      const session = await agent(h(), api);
      try {
        const host = await reservedHost(api);
        await assert.rejects(session.httpEndpoint().domain(host).binding('internal').listen(), /named under \.internal/);
        await assert.rejects(session.tlsEndpoint().domain(internalName()).listen(), /Internal tls endpoints are not served/);
        // Explicitly internal, with its binding, is taken.
        const name = internalName();
        // listen(false): no local socket of the SDK's own to keep the process alive.
        const listener = await session.httpEndpoint().domain(name).binding('internal').listen(false);
        assert.equal(listener.url(), `https://${name}`);
        await listener.close();
      } finally {
        await session.close();
      }
    });

    test('precedence: an HTTPS edge on the name first, then the cloud endpoint, then an agent endpoint', async () => {
      const api = await h().newAccount();
      const host = await reservedHost(api);
      const agentUp = await upstream('agent');
      const session = await agent(h(), api);
      try {
        await online(h(), await session.httpEndpoint().domain(host).listenAndForward(`http://127.0.0.1:${agentUp.port}`));
        assert.equal((await request(h(), host, '/')).text, 'agent /');
        const id = await cloudEndpoint(
          h(),
          api,
          host,
          'on_http_request:\n  - actions:\n      - type: custom-response\n        config:\n          status_code: 200\n          content: cloud\n',
        );
        assert.equal((await request(h(), host, '/')).text, 'cloud');
        const backend = await created(api, '/backends/http_response', { body: 'edge', status_code: 200 });
        const edge = await created(api, '/edges/https', { hostports: [`${host}:443`] });
        await created(api, `/edges/https/${edge.id}/routes`, { match_type: 'path_prefix', match: '/', backend: { backend_id: backend.id } });
        await edgesRead(h(), () => h().agents!.edges.httpsEdge(host)?.routes.length === 1, 'the edge');
        assert.equal((await request(h(), host, '/')).text, 'edge');
        assert.equal((await api.delete(`/edges/https/${edge.id}`)).status, 204);
        await edgesRead(h(), () => h().agents!.edges.httpsEdge(host) === undefined, 'the deleted edge');
        assert.equal((await request(h(), host, '/')).text, 'cloud');
        assert.equal((await api.delete(`/endpoints/${id}`)).status, 204);
        await cloudRead(h(), host, (p) => p === undefined, 'the deleted cloud endpoint');
        assert.equal((await request(h(), host, '/')).text, 'agent /');
      } finally {
        await session.close();
        await agentUp.close();
      }
    });

    test('a tcp:// cloud endpoint forwards raw connections to the agent’s internal TCP endpoint; its on_tcp_connect rules close others; DELETE stops listening', async () => {
      const api = await h().newAccount();
      const service = await echo('db');
      const session = await agent(h(), api);
      try {
        const name = internalName();
        const listener = await online(
          h(),
          await session.tcpEndpoint().remoteAddr(`${name}:5432`).listenAndForward(`tcp://127.0.0.1:${service.port}`),
          api.info.accountId,
        );
        assert.equal(listener.url(), `tcp://${name}:5432`);
        let listed: { url: string; bindings: string[]; tcp_addr: unknown }[] = [];
        await waitFor('the internal TCP endpoint to be listed', async () => {
          listed = (await api.get('/endpoints')).json.endpoints;
          return listed.length === 1;
        });
        assert.deepEqual(
          listed.map((e) => [e.url, e.bindings, e.tcp_addr]),
          [[`tcp://${name}:5432`, ['internal'], null]],
        );

        const addr = await created(api, '/reserved_addrs', {});
        const port = Number(String(addr.addr).split(':')[1]);
        const forward = tcpPolicy(`tcp://${name}:5432`, { actions: [{ type: 'log', config: { metadata: { via: 'cloud' } } }] });
        const e = await created(api, '/endpoints', { url: `tcp://${addr.addr}`, traffic_policy: forward });
        await portListening(h(), port);
        assert.equal(await askTcp(port, 'select 1'), 'db: select 1');
        assert.equal(await askTcp(port, 'x'.repeat(100_000)), `db: ${'x'.repeat(100_000)}`);

        // restrict-ips, then deny on an expression: each closes the connection, and says which rule did.
        const restricted = tcpPolicy(`tcp://${name}:5432`, { name: 'only far', actions: [{ type: 'restrict-ips', config: { allow: ['192.0.2.0/24'] } }] });
        assert.equal((await api.patch(`/endpoints/${e.id}`, { traffic_policy: restricted })).status, 200);
        await tcpRead(h(), port, (p) => p === restricted, 'the restricting policy');
        await assert.rejects(askTcp(port, 'hello'), /closed before an answer/);
        const denying = tcpPolicy(`tcp://${name}:5432`, { name: 'not local', expressions: ["conn.client_ip == '127.0.0.1'"], actions: [{ type: 'deny' }] });
        assert.equal((await api.patch(`/endpoints/${e.id}`, { traffic_policy: denying })).status, 200);
        await tcpRead(h(), port, (p) => p === denying, 'the denying policy');
        await assert.rejects(askTcp(port, 'hello'), /closed before an answer/);
        const refused = h().logs.filter((l) => l.msg === 'edge: connection refused by its traffic policy' && l.edge_id === e.id);
        assert.deepEqual(
          refused.map((l) => l.rule),
          ['only far', 'not local'],
        );

        // DELETE: the port is no longer listened on.
        assert.equal((await api.delete(`/endpoints/${e.id}`)).status, 204);
        await edgesRead(h(), () => !h().agents!.edgePorts.isListening(port), 'the port to close');
        const closed = net.connect(port, '127.0.0.1');
        const [err] = (await once(closed, 'error')) as [NodeJS.ErrnoException];
        assert.equal(err.code, 'ECONNREFUSED');
        await listener.close();
      } finally {
        await session.close();
        await service.close();
      }
    });

    test('a tcp:// cloud endpoint whose internal TCP endpoint is offline, or another account’s, closes the connection', async () => {
      const owner = await h().newAccount();
      const stranger = await h().newAccount();
      const service = await echo('private');
      const session = await agent(h(), owner);
      try {
        const name = internalName();
        await online(
          h(),
          await session.tcpEndpoint().remoteAddr(`${name}:6379`).binding('internal').listenAndForward(`tcp://127.0.0.1:${service.port}`),
          owner.info.accountId,
        );
        const addr = await created(stranger, '/reserved_addrs', {});
        const port = Number(String(addr.addr).split(':')[1]);
        const e = await created(stranger, '/endpoints', { url: `tcp://${addr.addr}`, traffic_policy: tcpPolicy(`tcp://${name}:6379`) });
        await portListening(h(), port);
        await assert.rejects(askTcp(port, 'hello'), /closed before an answer/);
        assert.ok(
          h().logs.some((l) => l.msg === 'edge: forward-internal names an internal endpoint that is not online' && l.edge_id === e.id),
          'the offline internal endpoint is logged',
        );
        // The stranger binds the name for itself: its own service answers.
        const theirs = await echo('theirs');
        const other = await agent(h(), stranger);
        try {
          await online(h(), await other.tcpEndpoint().remoteAddr(`${name}:6379`).listenAndForward(`tcp://127.0.0.1:${theirs.port}`), stranger.info.accountId);
          assert.equal(await askTcp(port, 'hello'), 'theirs: hello');
        } finally {
          await other.close();
          await theirs.close();
        }
      } finally {
        await session.close();
        await service.close();
      }
    });

    test('binds: an internal TCP endpoint needs its port, and the binding internal needs an .internal name', async () => {
      const api = await h().newAccount();
      const session = await agent(h(), api);
      try {
        const addr = await created(api, '/reserved_addrs', {});
        await assert.rejects(
          session
            .tcpEndpoint()
            .remoteAddr(addr.addr as string)
            .binding('internal')
            .listen(false),
          /named under \.internal/,
        );
        await assert.rejects(session.tcpEndpoint().remoteAddr(internalName()).listen(false), /not an internal TCP address/);
      } finally {
        await session.close();
      }
    });
  },
  { agents: { heartbeatIntervalMs: 1000 }, acrossInstances: true },
);
