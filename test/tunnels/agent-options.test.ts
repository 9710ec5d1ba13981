// An agent's own endpoint options, sent by the real agent (@ngrok/ngrok) with its Bind, are
// enforced by the edges' module code: basic auth, CIDR allow and deny lists, header changes and a
// traffic policy on HTTPS endpoints; CIDRs and on_tcp_connect on TCP ones. The endpoint
// configuration attached to a reserved domain applies to an agent endpoint on it. What edgeplane
// cannot serve is refused at Bind, naming the option.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import { test } from 'node:test';
import tls from 'node:tls';
import type ngrok from '@ngrok/ngrok';
import { AgentEndpoints } from '../../src/edges/agent-endpoints.js';
import { identityModules } from '../../src/edges/agent-options.js';
import { oauthModule, oidcModule } from '../../src/edge-config/modules/sign-in-modules.js';
import type { HttpEndpoint } from '../../src/lib/agent-proto/messages.js';
import { makeChain, selfSigned } from '../helpers/certs.js';
import { describeEachStore, type Harness } from '../helpers/harness.js';
import { agent, created, edgesRead, online, request, reservedHost, upstream } from '../edges/helpers.js';

const hostOf = (listener: ngrok.Listener) => new URL(listener.url()!).hostname;
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** The refusal of a bind: its code (the SDK keeps edgeplane's own at the end of the message) and message. */
async function refusal(bind: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await bind;
  } catch (err) {
    const e = err as Error & { errorCode?: string };
    return { code: e.errorCode ?? /\n(ERR_EP_AGENT_\d+)$/.exec(e.message)?.[1] ?? '', message: e.message };
  }
  return { code: 'bound', message: '' };
}

/** A TCP connection's outcome: what came back after `payload`, or 'closed' when it was closed with nothing. */
async function tcpExchange(port: number, payload: string): Promise<string> {
  const socket = net.connect({ host: '127.0.0.1', port });
  socket.on('error', () => {});
  await once(socket, 'connect');
  socket.write(payload);
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => {
    chunks.push(c);
    if (Buffer.concat(chunks).length >= payload.length) socket.end();
  });
  await once(socket, 'close');
  return chunks.length === 0 ? 'closed' : Buffer.concat(chunks).toString();
}

async function echoServer(): Promise<{ port: number; close(): Promise<void> }> {
  const server = net.createServer((socket) => {
    socket.on('error', () => {});
    socket.pipe(socket);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: (server.address() as AddressInfo).port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const tunnelTarget = (h: Harness, accountId: string) => h.agents!.registry.tunnels().find((t) => t.accountId === accountId)!;

describeEachStore(
  'agent endpoint options',
  (h) => {
    test('basic auth: no or wrong credentials get 401 with a Basic challenge; the right ones reach the upstream', async () => {
      const api = await h().newAccount();
      const up = await upstream('app');
      const session = await agent(h(), api);
      try {
        const listener = await online(
          h(),
          await session.httpEndpoint().basicAuth('alice', 'correct horse').basicAuth('bob', 'battery staple').listenAndForward(`http://127.0.0.1:${up.port}`),
        );
        const host = hostOf(listener);
        const none = await request(h(), host, '/');
        assert.equal(none.status, 401);
        assert.equal(none.headers['ngrok-error-code'], 'ERR_EP_INGRESS_715');
        assert.match(String(none.headers['www-authenticate']), /^Basic realm="[^"]+", charset="UTF-8"$/);
        const wrong = await request(h(), host, '/', { headers: { authorization: basic('alice', 'battery staple') } });
        assert.equal(wrong.status, 401);
        const garbage = await request(h(), host, '/', { headers: { authorization: 'Basic !!!' } });
        assert.equal(garbage.status, 401);
        assert.equal(up.received.length, 0, 'nothing refused reached the upstream');
        for (const [user, password] of [
          ['alice', 'correct horse'],
          ['bob', 'battery staple'],
        ] as const) {
          const ok = await request(h(), host, '/in', { headers: { authorization: basic(user, password) } });
          assert.equal(ok.status, 200, ok.text);
          assert.equal(ok.text, 'app /in');
        }
      } finally {
        await session.close();
        await up.close();
      }
    });

    test('CIDRs: a denied or not allowed client gets 403; an allowed one passes', async () => {
      const api = await h().newAccount();
      const up = await upstream('app');
      const session = await agent(h(), api);
      try {
        const denied = await online(h(), await session.httpEndpoint().denyCidr('127.0.0.0/8').listenAndForward(`http://127.0.0.1:${up.port}`));
        const notAllowed = await online(h(), await session.httpEndpoint().allowCidr('10.0.0.0/8').listenAndForward(`http://127.0.0.1:${up.port}`));
        const allowed = await online(
          h(),
          await session.httpEndpoint().allowCidr('127.0.0.1/32').denyCidr('10.0.0.0/8').listenAndForward(`http://127.0.0.1:${up.port}`),
        );
        for (const listener of [denied, notAllowed]) {
          const answer = await request(h(), hostOf(listener), '/');
          assert.equal(answer.status, 403);
          assert.equal(answer.headers['ngrok-error-code'], 'ERR_EP_INGRESS_702');
        }
        assert.equal(up.received.length, 0);
        assert.equal((await request(h(), hostOf(allowed), '/')).status, 200);
      } finally {
        await session.close();
        await up.close();
      }
    });

    test('headers and a traffic policy: added and removed on the way in and out; a rule answers for the upstream', async () => {
      const api = await h().newAccount();
      const up = await upstream('app');
      const session = await agent(h(), api);
      try {
        const policy = JSON.stringify({
          on_http_request: [
            { expressions: ["req.url.path.startsWith('/blocked')"], actions: [{ type: 'custom-response', config: { status_code: 418, content: 'no tea' } }] },
          ],
        });
        const listener = await online(
          h(),
          await session
            .httpEndpoint()
            .requestHeader('X-Added', 'by the agent')
            .removeRequestHeader('x-secret')
            .responseHeader('X-Answer', 'yes')
            .removeResponseHeader('content-type')
            .trafficPolicy(policy)
            .listenAndForward(`http://127.0.0.1:${up.port}`),
        );
        const host = hostOf(listener);
        const ok = await request(h(), host, '/page', { headers: { 'x-secret': 'hide me' } });
        assert.equal(ok.status, 200);
        assert.equal(ok.headers['x-answer'], 'yes');
        assert.equal(ok.headers['content-type'], undefined);
        const seen = up.received.at(-1)!;
        assert.equal(seen.headers['x-added'], 'by the agent');
        assert.equal(seen.headers['x-secret'], undefined);
        const blocked = await request(h(), host, '/blocked');
        assert.equal(blocked.status, 418);
        assert.equal(blocked.text, 'no tea');
        assert.equal(up.received.length, 1, 'the policy answered /blocked itself');
      } finally {
        await session.close();
        await up.close();
      }
    });

    test('a plain endpoint with no option and no configuration is not put through the edge pipeline', async () => {
      const api = await h().newAccount();
      const up = await upstream('app');
      const session = await agent(h(), api);
      try {
        const listener = await online(h(), await session.httpEndpoint().listenAndForward(`http://127.0.0.1:${up.port}`));
        const held = tunnelTarget(h(), api.info.accountId);
        const target = h().agents!.registry.tunnel(held.id)!.target;
        assert.equal(target.endpoint?.modules, undefined);
        assert.equal(new AgentEndpoints(h().agents!.edges).httpEdge(target, 'https'), undefined);
        assert.equal((await request(h(), hostOf(listener), '/')).status, 200);
      } finally {
        await session.close();
        await up.close();
      }
    });

    test('TCP: CIDRs, on_tcp_connect and the reserved address’s configuration close a refused connection at once; an allowed one reaches the upstream', async () => {
      const api = await h().newAccount();
      const echo = await echoServer();
      const session = await agent(h(), api);
      try {
        const portOf = (l: ngrok.Listener) => Number(new URL(l.url()!.replace(/^tcp:/, 'http:')).port);
        const denied = await online(h(), await session.tcpEndpoint().denyCidr('127.0.0.0/8').listenAndForward(`tcp://127.0.0.1:${echo.port}`));
        const allowed = await online(h(), await session.tcpEndpoint().allowCidr('127.0.0.0/8').listenAndForward(`tcp://127.0.0.1:${echo.port}`));
        const policed = await online(
          h(),
          await session
            .tcpEndpoint()
            .trafficPolicy(JSON.stringify({ on_tcp_connect: [{ expressions: ["inCidrRange(conn.client_ip, '127.0.0.0/8')"], actions: [{ type: 'deny' }] }] }))
            .listenAndForward(`tcp://127.0.0.1:${echo.port}`),
        );
        assert.equal(await tcpExchange(portOf(denied), 'hello'), 'closed');
        assert.equal(await tcpExchange(portOf(policed), 'hello'), 'closed');
        assert.equal(await tcpExchange(portOf(allowed), 'hello'), 'hello');
        // A reserved address whose endpoint configuration's IP policy allows 10.0.0.0/8 only.
        const policy = await created(api, '/ip_policies', {});
        await created(api, '/ip_policy_rules', { ip_policy_id: policy.id, cidr: '10.0.0.0/8', action: 'allow' });
        const configuration = await created(api, '/endpoint_configurations', { type: 'tcp', ip_policy: { ip_policy_ids: [policy.id] } });
        const addr = await created(api, '/reserved_addrs', {});
        const attached = await api.patch(`/reserved_addrs/${addr.id}`, { endpoint_configuration_id: configuration.id });
        assert.equal(attached.status, 200, attached.text);
        await edgesRead(h(), () => h().agents!.edges.account(api.info.accountId)?.endpointConfigurations?.byAddr.has(addr.id) === true, 'the configuration');
        const configured = await online(h(), await session.tcpEndpoint().remoteAddr(addr.addr).listenAndForward(`tcp://127.0.0.1:${echo.port}`));
        assert.equal(await tcpExchange(portOf(configured), 'hello'), 'closed');
        // Loopback allowed by the policy too: the same endpoint now passes, without binding again.
        await created(api, '/ip_policy_rules', { ip_policy_id: policy.id, cidr: '127.0.0.0/8', action: 'allow' });
        await edgesRead(h(), () => h().agents!.edges.account(api.info.accountId)?.ipPolicies.get(policy.id)?.allow.length === 2, 'the allow rule');
        assert.equal(await tcpExchange(portOf(configured), 'hello'), 'hello');
      } finally {
        await session.close();
        await echo.close();
      }
    });

    test('TLS: a denied client is closed before its ClientHello reaches the agent; an allowed one is passed through to the upstream', async () => {
      const api = await h().newAccount();
      const [deniedName, allowedName] = [await reservedHost(api), await reservedHost(api)];
      const issued = await selfSigned({ names: [allowedName] });
      const upstreamTls = tls.createServer({ cert: issued.certPem, key: issued.keyPem }, (socket) => socket.end(`hello from ${socket.servername}`));
      upstreamTls.listen(0, '127.0.0.1');
      await once(upstreamTls, 'listening');
      const forward = `tcp://127.0.0.1:${(upstreamTls.address() as AddressInfo).port}`;
      const session = await agent(h(), api);
      try {
        await online(h(), await session.tlsEndpoint().domain(deniedName).denyCidr('127.0.0.0/8').listenAndForward(forward));
        await online(h(), await session.tlsEndpoint().domain(allowedName).allowCidr('127.0.0.1/32').listenAndForward(forward));
        const refused = tls.connect({ host: '127.0.0.1', port: h().agents!.httpsPort, servername: deniedName, ca: issued.certPem });
        const [err] = (await once(refused, 'error')) as [NodeJS.ErrnoException];
        assert.match(String(err.code ?? err.message), /ECONNRESET|socket disconnected|EPIPE/);
        const allowed = tls.connect({ host: '127.0.0.1', port: h().agents!.httpsPort, servername: allowedName, ca: issued.certPem });
        const chunks: Buffer[] = [];
        allowed.on('data', (c: Buffer) => chunks.push(c));
        await once(allowed, 'end');
        assert.equal(Buffer.concat(chunks).toString(), `hello from ${allowedName}`);
        allowed.destroy();
      } finally {
        await session.close();
        await new Promise((resolve) => upstreamTls.close(resolve));
      }
    });

    test('an endpoint configuration on the reserved domain applies: its IP policy and headers, the configuration’s value winning a header both set', async () => {
      const api = await h().newAccount();
      const up = await upstream('app');
      const session = await agent(h(), api);
      try {
        const policy = await created(api, '/ip_policies', {});
        await created(api, '/ip_policy_rules', { ip_policy_id: policy.id, cidr: '127.0.0.0/8', action: 'allow' });
        const configuration = await created(api, '/endpoint_configurations', {
          type: 'https',
          ip_policy: { ip_policy_ids: [policy.id] },
          request_headers: { add: { 'x-configured': 'by the configuration', 'x-both': 'configuration' } },
        });
        const host = await reservedHost(api);
        const domains = await api.get('/reserved_domains');
        const domain = (domains.json.reserved_domains as { id: string; domain: string }[]).find((d) => d.domain === host)!;
        const attached = await api.patch(`/reserved_domains/${domain.id}`, { https_endpoint_configuration_id: configuration.id });
        assert.equal(attached.status, 200, attached.text);
        const accountId = api.info.accountId;
        await edgesRead(
          h(),
          () => h().agents!.edges.account(accountId)?.endpointConfigurations?.byDomain.get(domain.id)?.https !== undefined,
          'the configuration',
        );
        const listener = await online(
          h(),
          await session
            .httpEndpoint()
            .domain(host)
            .requestHeader('x-both', 'agent')
            .requestHeader('x-agent', 'yes')
            .listenAndForward(`http://127.0.0.1:${up.port}`),
        );
        const ok = await request(h(), hostOf(listener), '/');
        assert.equal(ok.status, 200, ok.text);
        const seen = up.received.at(-1)!;
        assert.equal(seen.headers['x-configured'], 'by the configuration');
        assert.equal(seen.headers['x-both'], 'configuration');
        assert.equal(seen.headers['x-agent'], 'yes');
        // A deny rule added to the configuration's policy applies to the endpoint online.
        await created(api, '/ip_policy_rules', { ip_policy_id: policy.id, cidr: '127.0.0.1/32', action: 'deny' });
        await edgesRead(h(), () => (h().agents!.edges.account(accountId)?.ipPolicies.get(policy.id)?.deny.length ?? 0) > 0, 'the deny rule');
        const refused = await request(h(), hostOf(listener), '/');
        assert.equal(refused.status, 403);
        assert.equal(refused.headers['ngrok-error-code'], 'ERR_EP_INGRESS_702');
        assert.equal(up.received.length, 1);
      } finally {
        await session.close();
        await up.close();
      }
    });

    test('a configuration asking for client certificates refuses every request to an agent endpoint on its domain (501), never passes around it', async () => {
      const api = await h().newAccount();
      const up = await upstream('app');
      const session = await agent(h(), api);
      try {
        const chain = await makeChain();
        const ca = await created(api, '/certificate_authorities', { ca_pem: chain.root.certPem });
        const configuration = await created(api, '/endpoint_configurations', { type: 'https', mutual_tls: { certificate_authority_ids: [ca.id] } });
        const host = await reservedHost(api);
        const domains = await api.get('/reserved_domains');
        const domain = (domains.json.reserved_domains as { id: string; domain: string }[]).find((d) => d.domain === host)!;
        assert.equal((await api.patch(`/reserved_domains/${domain.id}`, { https_endpoint_configuration_id: configuration.id })).status, 200);
        await edgesRead(
          h(),
          () => h().agents!.edges.account(api.info.accountId)?.endpointConfigurations?.byDomain.get(domain.id)?.https !== undefined,
          'the configuration',
        );
        const listener = await online(h(), await session.httpEndpoint().domain(host).listenAndForward(`http://127.0.0.1:${up.port}`));
        const answer = await request(h(), hostOf(listener), '/');
        assert.equal(answer.status, 501);
        assert.equal(answer.headers['ngrok-error-code'], 'ERR_EP_INGRESS_716');
        assert.match(answer.text, /mutual_tls/);
        assert.equal(up.received.length, 0);
      } finally {
        await session.close();
        await up.close();
      }
    });

    test('options edgeplane cannot serve, and values that are not valid, are refused at Bind, naming them', async () => {
      const api = await h().newAccount();
      const session = await agent(h(), api);
      try {
        const proxyProto = await refusal(session.httpEndpoint().proxyProto('1').listen(false));
        assert.equal(proxyProto.code, 'ERR_EP_AGENT_611');
        assert.match(proxyProto.message, /proxy_proto/);
        const mutualTls = await refusal(session.tlsEndpoint().mutualTlsca(Buffer.from('not a CA')).listen(false));
        assert.equal(mutualTls.code, 'ERR_EP_AGENT_611');
        assert.match(mutualTls.message, /mutual_tls/);
        const tcpProxy = await refusal(session.tcpEndpoint().proxyProto('2').listen());
        assert.equal(tcpProxy.code, 'ERR_EP_AGENT_611');
        const managed = await refusal(session.httpEndpoint().oauth('google').listen(false));
        assert.equal(managed.code, 'ERR_EP_AGENT_611');
        assert.match(managed.message, /oauth \(managed application\)/);
        const unknownProvider = await refusal(session.httpEndpoint().oauth('myspace', null, null, null, 'client', 'secret').listen(false));
        assert.equal(unknownProvider.code, 'ERR_EP_AGENT_613');
        assert.match(unknownProvider.message, /oauth.*'myspace'/);
        const badCidr = await refusal(session.httpEndpoint().allowCidr('10.0.0.1/8').listen(false));
        assert.equal(badCidr.code, 'ERR_EP_AGENT_613');
        assert.match(badCidr.message, /ip_restriction\.allow_cidrs\[0\].*10\.0\.0\.0\/8/);
        const shortPassword = await refusal(session.httpEndpoint().basicAuth('user', 'short').listen(false));
        assert.equal(shortPassword.code, 'ERR_EP_AGENT_613');
        const badPolicy = await refusal(session.httpEndpoint().trafficPolicy('{"on_nothing": []}').listen(false));
        assert.equal(badPolicy.code, 'ERR_EP_AGENT_613');
        assert.match(badPolicy.message, /traffic_policy/);
        // OAuth with the agent's own application is accepted (the edge enforces it: see the sign-in test below).
        const own = await refusal(session.httpEndpoint().oauth('google', ['a@example.com'], null, null, 'client', 'secret').listen(false));
        assert.equal(own.code, 'bound', own.message);
        assert.equal(
          h()
            .agents!.registry.tunnels()
            .filter((t) => t.accountId === api.info.accountId).length,
          1,
        );
      } finally {
        await session.close();
      }
    });

    test('OAuth and OIDC options become the route modules’ stored values, client secrets sealed as the API seals them', () => {
      const sealer = h().deps.sealer;
      const empty = { sealedClientSecret: Buffer.alloc(0), scopes: [] as string[] };
      const options = {
        oauth: { ...empty, provider: 'google', clientId: 'client-1', clientSecret: 'secret-1', allowEmails: ['a@example.com'], allowDomains: ['example.org'] },
        oidc: {
          ...empty,
          issuerUrl: 'https://issuer.example.com',
          clientId: 'client-2',
          clientSecret: 'secret-2',
          allowEmails: [],
          allowDomains: [],
          scopes: ['openid'],
        },
      } as unknown as HttpEndpoint;
      const identity = identityModules(options, { sealer });
      const google = oauthModule(sealer).read(identity.oauth).provider.google!;
      assert.equal(google.client_id, 'client-1');
      assert.deepEqual(google.email_addresses, ['a@example.com']);
      assert.deepEqual(google.email_domains, ['example.org']);
      assert.equal(sealer.open(google.client_secret_sealed!, 'oauth.client_secret'), 'secret-1');
      const oidc = oidcModule(sealer).read(identity.oidc);
      assert.equal(oidc.issuer, 'https://issuer.example.com');
      assert.deepEqual(oidc.scopes, ['openid']);
      assert.equal(sealer.open(oidc.client_secret_sealed, 'oidc.client_secret'), 'secret-2');
      assert.throws(() => identityModules({ ...options, oidc: { ...options.oidc!, issuerUrl: 'ftp://x' } } as HttpEndpoint, { sealer }), /oidc/);
    });
  },
  { agents: { heartbeatIntervalMs: 1_000 }, acrossInstances: true },
);
