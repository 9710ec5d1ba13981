// The agent protocol's messages (src/lib/agent-proto/messages.ts): what the agents send, byte for
// byte as their serializers write it (ngrok-rust's serde_json for the Node SDK: fields in struct
// order, None as null; ngrok-go's encoding/json: its own spellings, a newline at the end), read
// into typed values; what the server sends, checked against the names and required fields of
// ngrok-rust's proto.rs; and each refusal.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AgentProtoError, parseJsonObject } from '../../src/lib/agent-proto/json.js';
import {
  decodeAuth,
  decodeAuthResp,
  decodeBind,
  decodeBindResp,
  decodeCommandResp,
  decodeErrorResp,
  decodeStartTunnelWithLabel,
  decodeStartTunnelWithLabelResp,
  decodeStopTunnel,
  decodeUnbind,
  decodeUpdate,
  encodeAuthResp,
  encodeBindResp,
  encodeErrorResp,
  encodeRestart,
  encodeStartTunnelWithLabelResp,
  encodeStop,
  encodeStopTunnel,
  encodeUnbindResp,
  encodeUpdate,
  StreamType,
  type Bind,
} from '../../src/lib/agent-proto/messages.js';

const json = (text: string) => parseJsonObject(Buffer.from(text, 'utf8'), 'test');
const refused = (problem: string, pattern?: RegExp) => (error: unknown) => {
  assert.ok(error instanceof AgentProtoError, `not an AgentProtoError: ${String(error)}`);
  assert.equal(error.problem, problem, error.message);
  if (pattern) assert.match(error.message, pattern);
  return true;
};

// ngrok-rust's Auth as the Node SDK sends it (session.rs: heartbeats in nanoseconds, the
// unsupported-command errors from NOT_IMPLEMENTED, ClientType "ngrok-rust" replaced by the SDK).
const RUST_AUTH =
  '{"Version":["3","2"],"ClientId":"","Extra":{"OS":"linux","Arch":"x86_64","AuthToken":"2abcTOKEN","Version":"1.5.1",' +
  '"Hostname":"","UserAgent":"ngrok-nodejs/1.5.1 ngrok-rust/0.15.0","Metadata":"","Cookie":"","HeartbeatInterval":10000000000,' +
  '"HeartbeatTolerance":15000000000,"UpdateUnsupportedError":"the agent has no defined callback for this operation",' +
  '"StopUnsupportedError":"","RestartUnsupportedError":"the agent has no defined callback for this operation","ProxyType":"",' +
  '"MutualTLS":false,"ServiceRun":false,"ConfigVersion":"","CustomInterface":false,"CustomCAs":false,"ClientType":"ngrok-nodejs"}}';

// ngrok-go's Auth (msg.go): "Authtoken", a Fingerprint and LegNumber the Rust agent lacks, and the
// newline json.Encoder writes.
const GO_AUTH =
  '{"Version":["3","2"],"ClientId":"","Extra":{"OS":"linux","Arch":"amd64","Authtoken":"2abcTOKEN","Version":"2.0.0","Hostname":"h",' +
  '"UserAgent":"ngrok-go/2.0.0","Metadata":"m","Cookie":"c00kie","HeartbeatInterval":10000000000,"HeartbeatTolerance":15000000000,' +
  '"Fingerprint":null,"UpdateUnsupportedError":null,"StopUnsupportedError":"","RestartUnsupportedError":null,"ProxyType":"",' +
  '"MutualTLS":false,"ServiceRun":false,"ConfigVersion":"","CustomInterface":false,"CustomCAs":false,"ClientType":"ngrok-go","LegNumber":0}}\n';

// ngrok-rust's Bind<HttpEndpoint> for `session.http_endpoint().domain("app.example.com").listen()`:
// every Option written as null (no skip_serializing_if on HttpEndpoint).
const RUST_HTTP_BIND =
  '{"Id":"","Proto":"https","ForwardsTo":"localhost:8080","ForwardsProto":"","Opts":{"Domain":"app.example.com","Hostname":"",' +
  '"Auth":"","Subdomain":"","HostHeaderRewrite":false,"LocalUrlScheme":null,"ProxyProto":0,"Compression":{},"CircuitBreaker":null,' +
  '"IPRestriction":{"allow_cidrs":["10.0.0.0/8"]},"BasicAuth":{"credentials":[{"username":"u","cleartext_password":"p4ssw0rd!"}]},' +
  '"OAuth":null,"OIDC":null,"WebhookVerification":null,"MutualTLSCA":null,"RequestHeaders":{"add":["x-a:1"]},"ResponseHeaders":null,' +
  '"WebsocketTCPConverter":null,"UserAgentFilter":null,"TrafficPolicy":"{\\"on_http_request\\":[]}"},' +
  '"Extra":{"Token":"","IPPolicyRef":"","Metadata":"meta","Bindings":["public"],"PoolingEnabled":false}}';

const RUST_TCP_BIND =
  '{"Id":"","Proto":"tcp","ForwardsTo":"localhost:22","ForwardsProto":"","Opts":{"Addr":"1.tcp.example.com:20000","ProxyProto":2,' +
  '"IPRestriction":null,"TrafficPolicy":null},"Extra":{"Token":"tok-from-last-session","IPPolicyRef":"","Metadata":"","Bindings":[],"PoolingEnabled":false}}';

const RUST_TLS_BIND =
  '{"Id":"","Proto":"tls","ForwardsTo":"localhost:443","ForwardsProto":"","Opts":{"Domain":"tls.example.com","Hostname":"","Subdomain":"",' +
  '"ProxyProto":0,"MutualTLSAtAgent":false,"MutualTLSAtEdge":{"mutual_tls_ca":"LS0tLS1CRUdJTg=="},"TLSTermination":{"cert":"Y2VydA==","key":"a2V5"},' +
  '"IPRestriction":null,"TrafficPolicy":null},"Extra":{"Token":"","IPPolicyRef":"","Metadata":"","Bindings":[],"PoolingEnabled":false}}';

describe('agent protocol: stream types', () => {
  it('are the numbers of proto.rs and msg.go', () => {
    assert.deepEqual(
      { ...StreamType },
      { auth: 0, bind: 1, unbind: 2, proxy: 3, restart: 4, stop: 5, update: 6, startTunnelWithLabel: 7, stopTunnel: 9, heartbeat: 0xffffffff },
    );
  });
});

describe('agent protocol: what an agent sends', () => {
  it("reads the Node SDK's Auth", () => {
    const auth = decodeAuth(json(RUST_AUTH));
    assert.deepEqual(auth.version, ['3', '2']);
    assert.equal(auth.clientId, '');
    assert.equal(auth.extra.authToken, '2abcTOKEN');
    assert.equal(auth.extra.heartbeatInterval, 10_000_000_000);
    assert.equal(auth.extra.stopUnsupportedError, '');
    assert.equal(auth.extra.updateUnsupportedError, 'the agent has no defined callback for this operation');
    assert.equal(auth.extra.clientType, 'ngrok-nodejs');
    assert.equal(auth.extra.customCas, false);
  });

  it("reads the Go agent's Auth: its 'Authtoken', null for too old, unknown fields ignored, as Go's decoder does", () => {
    const auth = decodeAuth(json(GO_AUTH));
    assert.equal(auth.extra.authToken, '2abcTOKEN');
    assert.equal(auth.extra.cookie, 'c00kie');
    assert.equal(auth.extra.updateUnsupportedError, undefined);
    assert.equal(auth.extra.stopUnsupportedError, '');
    assert.equal('legNumber' in auth.extra, false);
  });

  it('gives missing or null fields their defaults, as Go does, unless the field is required', () => {
    const auth = decodeAuth(json('{"Version":["3"],"Extra":{"AuthToken":null}}'));
    assert.equal(auth.clientId, '');
    assert.equal(auth.extra.authToken, '');
    assert.equal(auth.extra.heartbeatTolerance, 0);
    assert.equal(auth.extra.mutualTls, false);
    // Of two spellings of one field, the later wins (Go's order); the exact spelling is not preferred.
    assert.equal(decodeAuth(json('{"Version":[],"Extra":{"AuthToken":"a","authtoken":"b"}}')).extra.authToken, 'b');
  });

  it("reads the Node SDK's HTTPS bind with its middleware (snake_case inside, nulls for unset)", () => {
    const bind = decodeBind(json(RUST_HTTP_BIND));
    assert.equal(bind.proto, 'https');
    assert.equal(bind.forwardsTo, 'localhost:8080');
    assert.deepEqual(bind.extra, { token: '', ipPolicyRef: '', metadata: 'meta', bindings: ['public'], poolingEnabled: false, name: '', description: '' });
    assert.ok(bind.proto === 'https');
    const { opts } = bind;
    assert.equal(opts.domain, 'app.example.com');
    assert.equal(opts.localUrlScheme, undefined);
    assert.deepEqual(opts.compression, {});
    assert.equal(opts.circuitBreaker, undefined);
    assert.deepEqual(opts.ipRestriction, { allowCidrs: ['10.0.0.0/8'], denyCidrs: [] });
    assert.equal(opts.basicAuth?.credentials[0]?.cleartextPassword, 'p4ssw0rd!');
    assert.deepEqual(opts.basicAuth?.credentials[0]?.hashedPassword, Buffer.alloc(0));
    assert.deepEqual(opts.requestHeaders?.add, ['x-a:1']);
    assert.equal(opts.trafficPolicy, '{"on_http_request":[]}');
  });

  it('reads TCP and TLS binds (base64 bytes decoded)', () => {
    const tcp = decodeBind(json(RUST_TCP_BIND));
    assert.equal(tcp.proto, 'tcp');
    assert.deepEqual(tcp.opts, { addr: '1.tcp.example.com:20000', proxyProto: 2 });
    assert.equal(tcp.extra.token, 'tok-from-last-session');
    const tls = decodeBind(json(RUST_TLS_BIND));
    assert.equal(tls.proto, 'tls');
    assert.ok(tls.proto === 'tls');
    assert.equal(tls.opts.mutualTlsAtEdge?.mutualTlsCa.toString(), '-----BEGIN');
    assert.deepEqual(tls.opts.tlsTermination, { cert: Buffer.from('cert'), key: Buffer.from('key'), sealedKey: Buffer.alloc(0) });
  });

  it('reads Unbind (the Go agent adds Extra), StartTunnelWithLabel and command replies', () => {
    assert.deepEqual(decodeUnbind(json('{"Id":"tun_1"}')), { id: 'tun_1' });
    assert.deepEqual(decodeUnbind(json('{"Id":"tun_1","Extra":null}\n')), { id: 'tun_1' });
    const labeled = decodeStartTunnelWithLabel(
      json('{"Labels":{"edge":"edghts_1","__proto__":"x"},"ForwardsTo":"localhost:80","ForwardsProto":"","Metadata":""}'),
    );
    assert.equal(labeled.labels.edge, 'edghts_1');
    assert.equal(labeled.labels['__proto__'], 'x');
    assert.deepEqual(Object.keys(labeled.labels), ['edge', '__proto__']);
    assert.deepEqual(decodeCommandResp(json('{}')), {});
    assert.deepEqual(decodeCommandResp(json('{"Error":""}')), {});
    assert.deepEqual(decodeCommandResp(json('{"Error":"the agent has no defined callback for this operation"}')), {
      error: 'the agent has no defined callback for this operation',
    });
  });

  it('refuses each malformed message with its reason, naming the member', () => {
    assert.throws(() => decodeAuth(json('{"ClientId":"","Extra":{}}')), refused('missing_field', /'Version' is required/));
    assert.throws(() => decodeAuth(json('{"Version":["3"]}')), refused('missing_field', /'Extra'/));
    assert.throws(() => decodeAuth(json('{"Version":"3","Extra":{}}')), refused('wrong_type', /'Version' must be an array of strings, not a string/));
    assert.throws(() => decodeAuth(json('{"Version":[3],"Extra":{}}')), refused('wrong_type', /'Version\[0\]' must be a string/));
    assert.throws(() => decodeAuth(json('{"Version":[],"ClientId":7,"Extra":{}}')), refused('wrong_type', /'ClientId' must be a string, not a number/));
    assert.throws(() => decodeAuth(json('{"Version":[],"Extra":[]}')), refused('wrong_type', /'Extra' must be an object, not an array/));
    assert.throws(
      () => decodeAuth(json('{"Version":[],"Extra":{"HeartbeatInterval":1.5}}')),
      refused('wrong_type', /'Extra.HeartbeatInterval' must be an integer/),
    );
    assert.throws(() => decodeAuth(json('{"Version":[],"Extra":{"MutualTLS":"true"}}')), refused('wrong_type', /a boolean/));
    assert.throws(() => decodeAuth(json('{"Version":[],"Extra":{"HeartbeatInterval":1e300}}')), refused('wrong_type'));

    const bind = (change: (b: Record<string, unknown> & { Opts: Record<string, unknown> }) => void) => {
      const b = JSON.parse(RUST_HTTP_BIND);
      change(b);
      return json(JSON.stringify(b));
    };
    assert.throws(() => decodeBind(bind((b) => (b.Proto = 'ssh'))), refused('bad_value', /'Proto' must be one of http, https, tcp, tls/));
    assert.throws(() => decodeBind(bind((b) => delete b.Proto)), refused('missing_field', /'Proto'/));
    assert.throws(() => decodeBind(bind((b) => delete (b as Partial<typeof b>).Opts)), refused('missing_field', /'Opts'/));
    assert.throws(() => decodeBind(bind((b) => (b.Opts.ProxyProto = 7))), refused('bad_value', /'Opts.ProxyProto' must be 0 \(none\), 1 or 2/));
    assert.throws(() => decodeBind(bind((b) => delete b.Opts.Hostname)), refused('missing_field', /'Opts.Hostname'/));
    assert.throws(
      () => decodeBind(bind((b) => (b.Opts.BasicAuth = { credentials: [{ cleartext_password: 'p' }] }))),
      refused('missing_field', /'Opts.BasicAuth.credentials\[0\].username'/),
    );
    assert.throws(() => decodeBind(bind((b) => (b.Opts.MutualTLSCA = { mutual_tls_ca: 'not base64!' }))), refused('bad_value', /not standard base64/));
    assert.throws(
      () => decodeBind(bind((b) => (b.Opts.TrafficPolicy = { on_http_request: [] }))),
      refused('wrong_type', /'Opts.TrafficPolicy' must be a string/),
    );
    assert.throws(
      () => decodeBind(json(RUST_HTTP_BIND.replace('"CircuitBreaker":null', '"CircuitBreaker":{"error_threshold":1e400}'))),
      refused('wrong_type', /'Opts.CircuitBreaker.error_threshold' must be a finite number/),
    );
    assert.throws(() => decodeUnbind(json('{}')), refused('missing_field', /Unbind: 'Id'/));
    assert.throws(() => decodeStartTunnelWithLabel(json('{"Labels":{"a":1}}')), refused('wrong_type', /'Labels.a' must be a string/));
    assert.throws(() => decodeStartTunnelWithLabel(json('{"Labels":["a"]}')), refused('wrong_type', /an object of strings/));
  });
});

describe('agent protocol: what the server sends', () => {
  it('AuthResp: Version and ClientId (which ngrok-rust requires), Extra with only what is set', () => {
    const text = encodeAuthResp({ version: '3', clientId: 'sess_1', extra: { cookie: 'ck', region: 'local', sessionDuration: 0 } });
    assert.equal(text, '{"Version":"3","ClientId":"sess_1","Extra":{"Region":"local","Cookie":"ck","SessionDuration":0}}');
    assert.deepEqual(decodeAuthResp(json(text)), { version: '3', clientId: 'sess_1', extra: { region: 'local', cookie: 'ck', sessionDuration: 0 } });
    assert.equal(encodeAuthResp({ version: '3', clientId: 's', extra: {} }), '{"Version":"3","ClientId":"s","Extra":{}}');
  });

  it("BindResp: every field ngrok-rust's HttpEndpoint requires, in its spelling, and what the agent sends again on reconnect", () => {
    const bind = decodeBind(json(RUST_HTTP_BIND));
    const text = encodeBindResp({ ...(bind as Bind & { proto: 'https' }), id: 'tun_1', url: 'https://app.example.com', extra: { token: 'tok' } });
    assert.equal(
      text,
      '{"Id":"tun_1","URL":"https://app.example.com","Proto":"https","Opts":{"Domain":"app.example.com",' +
        '"Hostname":"","Auth":"","Subdomain":"","HostHeaderRewrite":false,"ProxyProto":0,"Compression":{},' +
        '"IPRestriction":{"allow_cidrs":["10.0.0.0/8"]},"BasicAuth":{"credentials":[{"username":"u","cleartext_password":"p4ssw0rd!"}]},' +
        '"RequestHeaders":{"add":["x-a:1"]},"TrafficPolicy":"{\\"on_http_request\\":[]}"},"Extra":{"Token":"tok"}}',
    );
    const resp = decodeBindResp(json(text));
    assert.equal(resp.url, 'https://app.example.com');
    assert.equal(resp.extra.token, 'tok');
    // The agent binds again with the Opts it was given: they read back as what it first sent.
    const again = decodeBind(json(JSON.stringify({ Id: '', Proto: 'https', ForwardsTo: '', ForwardsProto: '', Opts: JSON.parse(text).Opts, Extra: {} })));
    assert.deepEqual(again.opts, bind.opts);
  });

  it('BindResp for TCP and TLS: bytes as standard base64, empty ones left out as ngrok-rust does', () => {
    const tcp = encodeBindResp({
      proto: 'tcp',
      id: 'tun_2',
      url: 'tcp://1.tcp.example.com:20000',
      opts: { addr: '1.tcp.example.com:20000', proxyProto: 0 },
      extra: { token: 't' },
    });
    assert.equal(
      tcp,
      '{"Id":"tun_2","URL":"tcp://1.tcp.example.com:20000","Proto":"tcp","Opts":{"Addr":"1.tcp.example.com:20000","ProxyProto":0},"Extra":{"Token":"t"}}',
    );
    const tls = decodeBind(json(RUST_TLS_BIND));
    const text = encodeBindResp({ ...(tls as Bind & { proto: 'tls' }), id: 'tun_3', url: 'tls://tls.example.com', extra: { token: 't', tunnelId: 'tn_3' } });
    assert.match(text, /"TLSTermination":\{"cert":"Y2VydA==","key":"a2V5"\}/);
    assert.match(text, /"Extra":\{"Token":"t","TunnelID":"tn_3"\}/);
    assert.deepEqual(decodeBindResp(json(text)).opts, tls.opts);
  });

  it('the other replies and the commands', () => {
    assert.equal(encodeUnbindResp(), '{}');
    assert.equal(encodeStartTunnelWithLabelResp({ id: 'tun_4' }), '{"Id":"tun_4"}');
    assert.deepEqual(decodeStartTunnelWithLabelResp(json('{"Id":"tun_4"}')), { id: 'tun_4' });
    assert.equal(encodeStop(), '{}');
    assert.equal(encodeRestart(), '{}');
    assert.equal(encodeUpdate({ version: '', permitMajorVersion: false }), '{"Version":"","PermitMajorVersion":false}');
    assert.deepEqual(decodeUpdate(json('{"Version":"","PermitMajorVersion":false}')), { version: '', permitMajorVersion: false });
    assert.equal(encodeStopTunnel({ id: 'tun_1', message: 'stopped by the operator' }), '{"Id":"tun_1","Message":"stopped by the operator"}');
    const stop = encodeStopTunnel({ id: 'tun_1', message: 'gone', errorCode: 'ERR_NGROK_3200' });
    assert.deepEqual(decodeStopTunnel(json(stop)), { id: 'tun_1', message: 'gone', errorCode: 'ERR_NGROK_3200' });
  });

  it('error replies: {"Error": …}, with the ngrok code on a line of its own as both agents split it out', () => {
    const text = encodeErrorResp('The authtoken you specified is invalid.', 'ERR_NGROK_107');
    assert.equal(text, '{"Error":"The authtoken you specified is invalid.\\n\\nERR_NGROK_107"}');
    assert.equal(decodeErrorResp(json(text)), 'The authtoken you specified is invalid.\n\nERR_NGROK_107');
    assert.equal(encodeErrorResp('no such tunnel'), '{"Error":"no such tunnel"}');
    // A success reply has no Error: the agent then reads the reply's own shape.
    assert.equal(decodeErrorResp(json(encodeAuthResp({ version: '3', clientId: 's', extra: {} }))), undefined);
  });
});
