// A Bind's options, as the agents send them on the wire, made into the module values the edges
// enforce: each value checked as the API checks the same module, what cannot be served refused by
// name, a value that is not valid refused naming the option.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { agentEndpointModules, BindOptionRefused, identityModules } from '../../src/edges/agent-options.js';
import { oauthModule } from '../../src/edge-config/modules/sign-in-modules.js';
import { basicAuthAllowed } from '../../src/edges/basic-auth.js';
import { parseJsonObject } from '../../src/lib/agent-proto/json.js';
import { Sealer } from '../../src/lib/crypto/sealer.js';
import { decodeBind, type Bind } from '../../src/lib/agent-proto/messages.js';

const EXTRA = '"Extra":{"Token":"","IPPolicyRef":"","Metadata":"","Bindings":[],"PoolingEnabled":false}';

/** An HTTPS Bind as the Node SDK sends it, with `opts` (wire names) over its defaults. */
function httpsBind(opts: Record<string, unknown>, extra = EXTRA): Bind {
  const base = { Domain: '', Hostname: '', Auth: '', Subdomain: '', HostHeaderRewrite: false, ProxyProto: 0 };
  const text = `{"Id":"","Proto":"https","ForwardsTo":"localhost:8080","ForwardsProto":"","Opts":${JSON.stringify({ ...base, ...opts })},${extra}}`;
  return decodeBind(parseJsonObject(Buffer.from(text), 'test'));
}

function streamBind(proto: 'tcp' | 'tls', opts: Record<string, unknown>): Bind {
  const base = proto === 'tcp' ? { Addr: '', ProxyProto: 0 } : { Domain: '', Hostname: '', Subdomain: '', ProxyProto: 0, MutualTLSAtAgent: false };
  const text = `{"Id":"","Proto":"${proto}","ForwardsTo":"localhost:22","ForwardsProto":"","Opts":${JSON.stringify({ ...base, ...opts })},${EXTRA}}`;
  return decodeBind(parseJsonObject(Buffer.from(text), 'test'));
}

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

const SEALER = new Sealer(randomBytes(32));

/** The refusal agentEndpointModules throws: its kind and message. */
function refused(bind: Bind, sealer: Sealer | null = SEALER): { kind: string; message: string } {
  try {
    agentEndpointModules(bind, sealer ? { sealer } : undefined);
  } catch (err) {
    assert.ok(err instanceof BindOptionRefused, String(err));
    return { kind: err.kind, message: err.message };
  }
  assert.fail('the options were accepted');
}

describe('agent endpoint options', () => {
  it('a Bind with no option asks for no module: its endpoint is served as it is', () => {
    assert.equal(agentEndpointModules(httpsBind({}), undefined), undefined);
    assert.equal(agentEndpointModules(streamBind('tcp', {}), undefined), undefined);
    assert.equal(agentEndpointModules(httpsBind({ IPRestriction: {}, RequestHeaders: {}, TrafficPolicy: ' ' }), undefined), undefined);
  });

  it('makes the Node SDK’s options into route module values', () => {
    const m = agentEndpointModules(
      httpsBind({
        Compression: {},
        CircuitBreaker: { error_threshold: 0.3 },
        IPRestriction: { allow_cidrs: ['10.0.0.0/8', '192.168.1.7'], deny_cidrs: ['10.1.0.0/16'] },
        RequestHeaders: { add: ['X-A:1', 'x-b: two words'], remove: ['x-secret'] },
        ResponseHeaders: { remove: ['server'] },
        UserAgentFilter: { allow: ['^curl/'] },
        WebsocketTCPConverter: {},
        TrafficPolicy: '{"on_http_request":[{"actions":[{"type":"deny"}]}]}',
      }),
      undefined,
    )!;
    assert.deepEqual(m.compression, { enabled: true });
    assert.deepEqual(m.websocketTcpConverter, { enabled: true });
    assert.equal(m.circuitBreaker?.error_threshold_percentage, 0.3);
    assert.equal(m.circuitBreaker?.volume_threshold, 20, 'the route module’s defaults otherwise');
    assert.deepEqual(m.ipRestriction, { allow: ['10.0.0.0/8', '192.168.1.7/32'], deny: ['10.1.0.0/16'] });
    assert.deepEqual(m.requestHeaders, { enabled: true, add: { 'x-a': '1', 'x-b': 'two words' }, remove: ['x-secret'] });
    assert.deepEqual(m.responseHeaders, { enabled: true, add: {}, remove: ['server'] });
    assert.deepEqual(m.userAgentFilter, { enabled: true, allow: ['^curl/'], deny: [] });
    assert.deepEqual(m.policy, { kind: 'traffic_policy', enabled: true, value: '{"on_http_request":[{"actions":[{"type":"deny"}]}]}' });
  });

  it('basic auth: the credentials and the Go agent’s older Auth string, each checked in constant time', () => {
    const m = agentEndpointModules(
      httpsBind({ Auth: 'old:an old password', BasicAuth: { credentials: [{ username: 'ünïcode', cleartext_password: 'pässwörd with : colon' }] } }),
      undefined,
    )!;
    const auth = m.basicAuth!;
    assert.equal(basicAuthAllowed(auth, basic('ünïcode', 'pässwörd with : colon')), true);
    assert.equal(basicAuthAllowed(auth, basic('old', 'an old password')), true);
    assert.equal(basicAuthAllowed(auth, `bAsIc   ${Buffer.from('old:an old password').toString('base64')}`), true, 'the scheme is case-insensitive');
    assert.equal(basicAuthAllowed(auth, basic('old', 'an old passwor')), false);
    assert.equal(basicAuthAllowed(auth, basic('ünïcode', 'an old password')), false, 'a password is its own user’s');
    assert.equal(basicAuthAllowed(auth, `Bearer ${Buffer.from('old:an old password').toString('base64')}`), false);
    assert.equal(basicAuthAllowed(auth, undefined), false);
    assert.equal(basicAuthAllowed(auth, 'Basic bm9jb2xvbg=='), false, 'no colon');
  });

  it('refuses a value that is not valid, naming the option and the problem', () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ IPRestriction: { deny_cidrs: ['10.0.0.1/8'] } }, /ip_restriction\.deny_cidrs\[0\].*did you mean 10\.0\.0\.0\/8/],
      [{ IPRestriction: { allow_cidrs: ['not an address'] } }, /ip_restriction\.allow_cidrs\[0\]/],
      [{ CircuitBreaker: { error_threshold: 1.5 } }, /circuit_breaker/],
      [{ UserAgentFilter: { deny: ['(a+)+$'] } }, /user_agent_filter/],
      [{ RequestHeaders: { add: ['no colon'] } }, /request_headers\.add\[0\]/],
      [{ ResponseHeaders: { add: ['bad name:1'] } }, /response_headers/],
      [{ Auth: 'nocolon' }, /\bauth\b/],
      [{ BasicAuth: { credentials: [{ username: 'a:b', cleartext_password: 'long enough' }] } }, /username/],
      [{ TrafficPolicy: '{"inbound":[]}' }, /traffic_policy/],
      [{ OAuth: { provider: 'github', client_id: 'id', client_secret: 's', allow_emails: ['not an email'] } }, /oauth/],
    ];
    for (const [opts, message] of cases) {
      const r = refused(httpsBind(opts));
      assert.equal(r.kind, 'invalid', `${JSON.stringify(opts)}: ${r.message}`);
      assert.match(r.message, message);
    }
  });

  it('refuses what edgeplane cannot serve, naming every such option', () => {
    const http = refused(
      httpsBind({ ProxyProto: 1, HostHeaderRewrite: true, MutualTLSCA: { mutual_tls_ca: 'LS0t' } }, EXTRA.replace('"IPPolicyRef":""', '"IPPolicyRef":"ipp_1"')),
    );
    assert.equal(http.kind, 'unserved');
    for (const name of ['proxy_proto', 'host_header_rewrite', 'mutual_tls', 'ip_policy']) assert.match(http.message, new RegExp(`\\b${name}\\b`));
    const tls = refused(streamBind('tls', { MutualTLSAtEdge: { mutual_tls_ca: 'LS0t' }, TLSTermination: { cert: 'Y2VydA==', key: 'a2V5' } }));
    assert.match(tls.message, /mutual_tls, tls_termination/);
    assert.match(refused(streamBind('tcp', { ProxyProto: 2 })).message, /proxy_proto/);
    assert.match(refused(httpsBind({ BasicAuth: { credentials: [{ username: 'u', hashed_password: 'aGFzaA==' }] } })).message, /hashed_password/);
    assert.match(refused(httpsBind({ OAuth: { provider: 'google' } })).message, /managed application/);
    assert.match(
      refused(
        httpsBind({
          TrafficPolicy: '{"on_http_request":[{"actions":[{"type":"restrict-ips","config":{"ip_policies":["ipp_2c35SKcQWmbsaTaVJNFFkbaKHUv"]}}]}]}',
        }),
      ).message,
      /restrict-ips ip_policies/,
    );
    // Without a sealer, no secret can be kept: refused by name, not stored in the clear.
    const oidc = httpsBind({ OIDC: { issuer_url: 'https://issuer.example.com', client_id: 'c', client_secret: 's' } });
    assert.match(refused(oidc, null).message, /\boidc\b.*cannot seal/);
  });

  it('a TCP or TLS Bind takes CIDRs and an on_tcp_connect policy', () => {
    const m = agentEndpointModules(
      streamBind('tcp', { IPRestriction: { deny_cidrs: ['::1/128'] }, TrafficPolicy: '{"on_tcp_connect":[{"actions":[{"type":"deny"}]}]}' }),
      undefined,
    )!;
    assert.deepEqual(m.ipRestriction, { allow: [], deny: ['::1/128'] });
    assert.equal(m.policy?.kind, 'traffic_policy');
    assert.equal(refused(streamBind('tls', { TrafficPolicy: '{"on_http_request":[]}' })).kind, 'invalid');
  });

  it('OAuth with no client: the server’s own application where the operator has one for the provider, refused otherwise', () => {
    const bind = httpsBind({ OAuth: { provider: 'GitHub', allow_emails: ['a@example.com'] } });
    assert.ok(bind.proto === 'https');
    const identity = identityModules(bind.opts, { sealer: SEALER, managedOAuthProviders: ['github'] });
    const github = oauthModule(SEALER).read(identity.oauth).provider.github!;
    assert.equal(github.client_id, null);
    assert.equal(github.client_secret_sealed, null);
    assert.deepEqual(github.email_addresses, ['a@example.com']);
    assert.throws(() => identityModules(bind.opts, { sealer: SEALER, managedOAuthProviders: ['google'] }), /managed application.*GitHub/);
  });
});
