// Traffic policies of HTTPS edge routes (protocol 'http'): the request and response CEL
// environments, the HTTP actions and their configs, and that TCP edges are unchanged.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { throwsApiError } from '../helpers/assertions.js';
import { newId } from '../../src/core/ids.js';
import { checkExpression, checkValueExpression, type CelEnvName } from '../../src/edge-config/traffic-policy/cel.js';
import {
  MAX_RESPONSE_CONTENT_BYTES,
  checkEndpointPolicy,
  checkTrafficPolicyDocument,
  documentPolicyIds,
  policyIdsOf,
} from '../../src/edge-config/traffic-policy/traffic-policy.js';

/** Runs `fn`, expects an ApiError with `code`, returns its message. */
const fails = (fn: () => unknown, code: number): string => throwsApiError(fn, code).message;

const valid = (expression: string, env: CelEnvName) => assert.deepEqual(checkExpression(expression, env), { ok: true }, `${env}: ${expression}`);
const reason = (expression: string, env: CelEnvName) => {
  const result = checkExpression(expression, env);
  assert.ok(!result.ok, `${env}: ${expression} was accepted`);
  return result.reason;
};

const action = (type: string, config: unknown = null) => ({ type, config });
const inbound = (...actions: unknown[]) => ({ inbound: [{ name: 'r1', expressions: [], actions }] });
const outbound = (...actions: unknown[]) => ({ outbound: [{ name: 'o1', expressions: [], actions }] });
const http = (body: unknown) => () => checkEndpointPolicy(body, 'http');
const tcp = (body: unknown) => () => checkEndpointPolicy(body, 'tcp');
const doc =
  (value: unknown, protocol: 'tcp' | 'http' = 'http') =>
  () =>
    checkTrafficPolicyDocument(typeof value === 'string' ? value : JSON.stringify(value), protocol);

/** The message of an HTTP inbound action whose config is refused (2203). */
const refused = (type: string, config: unknown) => fails(http(inbound(action(type, config))), 2203);
/** An HTTP inbound action whose config is accepted, returned as stored. */
const accepted = (type: string, config: unknown) => checkEndpointPolicy(inbound(action(type, config)), 'http').inbound[0]!.actions[0];

const ipp = newId('ipp');

const JWT = {
  issuer: { allow_list: [{ value: 'https://dev-1.okta.com/oauth2/default' }] },
  audience: { allow_list: [{ value: 'api://default' }] },
  http: { tokens: [{ type: 'at+jwt', method: 'header', name: 'Authorization', prefix: 'Bearer ' }] },
  jws: { allowed_algorithms: ['RS256', 'ES256'], keys: { sources: { additional_jkus: ['https://dev-1.okta.com/oauth2/default/v1/keys'] } } },
};
const jwt = (over: Record<string, unknown>) => ({ ...JWT, ...over });

describe('CEL environments for HTTP', () => {
  it('the request environment has the connection variables, req.* and the CIDR functions', () => {
    for (const expression of [
      'req.method == "POST" && req.content_length > 10000',
      'req.url.startsWith("https://") && req.host == "api.example.com" && req.path.startsWith("/v1/")',
      'req.query.contains("debug") || "page" in req.query_params || req.query_params["q"][0] == "x"',
      '"GPTBot" in req.headers["user-agent"] || req.user_agent.contains("curl")',
      'req.content_type == "application/json" && "gzip" in req.content_encoding && req.version == "HTTP/2.0"',
      'req.cookies["sid"].exists(c, c.value == "x") && req.cookies["sid"][0].name == "sid"',
      'has(req.trailers.grpc_status) && req.ts.header_received < time.now',
      'conn.geo.country_code in ["BR", "CN"] && endpoint.port == 443 && conn.ts.start < time.now',
      'inCidrRange(conn.client_ip, "10.0.0.0/8")',
      'inCidrRanges(conn.client_ip, ["10.0.0.0/8", "2001:db8::/32"])',
    ]) {
      valid(expression, 'http_request');
      valid(expression, 'policy_http_request');
    }
  });

  it('takes req.url as the published docs write it: a string and a URL with fields', () => {
    for (const expression of [
      "req.url.path.startsWith('/admin')",
      'req.url.host == "api.example.com" && req.url.scheme == "https" && req.url.query.contains("debug=1")',
      'req.url.startsWith("https://") || req.url.endsWith("/health") || req.url.contains("?q=")',
      'req.url == "https://example.com/" || "https://example.com/x" != req.url',
      'req.url.matches("^https://[a-z]+[.]example[.]com/") && req.url.size() < 2048 && size(req.url) > 8',
      'string(req.url).startsWith("https://") && (req.url + "#top").endsWith("#top") && ("see " + req.url).size() > 4',
    ]) {
      valid(expression, 'http_request');
      valid(expression, 'http_response');
    }
    assert.match(reason('req.url.port == 443', 'http_request'), /'req.url' has no field 'port'; its fields are scheme, host, path, query/);
    assert.match(reason('req.url.matches("(a")', 'http_request'), /the pattern '\(a' of matches/);
    assert.match(reason('req.url > 1', 'http_request'), /operator '>' does not apply to ngrok.URL and int/);
  });

  it('the response environment adds res.*', () => {
    for (const expression of [
      'res.status_code >= 500 && req.method == "GET"',
      'res.headers["content-type"][0].startsWith("text/") && res.content_type == "text/html"',
      'res.content_length > 1024 && !("br" in res.content_encoding) && res.location != ""',
      'inCidrRange(conn.client_ip, "192.168.0.0/16") && res.status_code == 404',
    ])
      valid(expression, 'http_response');
  });

  it('res is unknown in the request phase and req.* is unknown on TCP', () => {
    assert.match(reason('res.status_code == 200', 'http_request'), /unknown variable 'res'; the variables here are conn, endpoint, time, req$/);
    assert.match(reason('req.method == "GET"', 'tcp'), /unknown variable 'req'; the variables here are conn, endpoint, time$/);
  });

  it('refuses unknown fields of req and res, listing theirs, and type errors', () => {
    assert.match(reason('req.nope == 1', 'http_request'), /'req' has no field 'nope'; its fields are method, url, host, path, query, query_params, headers/);
    assert.match(reason('res.status == 1', 'http_response'), /'res' has no field 'status'; its fields are status_code, headers/);
    assert.match(reason('req.content_length == "10"', 'http_request'), /int and string/);
    assert.match(reason('req.headers["accept"] == "x"', 'http_request'), /list<string> and string/);
    assert.match(reason('res.status_code', 'http_response'), /type int.*must give a bool/);
    assert.match(reason('inCidrRange(req.content_length, "10.0.0.0/8")', 'http_request'), /inCidrRange\(string, string\)/);
  });

  it("the policy module's environments also take the spellings of its early-2024 examples; documents do not", () => {
    for (const expression of [
      'req.Method == "POST" && req.ContentLength > 10000',
      'req.URL.contains("v0/")',
      '"BadActor" in req.Headers["User-Agent"]',
      'conn.Geo.CountryCode in ["BR", "CN"]',
    ])
      valid(expression, 'policy_http_request');
    valid('res.StatusCode >= 500 && res.ContentLength < 500000 && "x" in res.Headers["X"]', 'policy_http_response');
    assert.match(reason('req.Method == "POST"', 'http_request'), /'req' has no field 'Method'; its fields are method, url/);
    assert.match(reason('res.StatusCode == 500', 'http_response'), /'res' has no field 'StatusCode'/);
    assert.match(reason('conn.Geo.CountryCode == "BR"', 'http_request'), /'conn' has no field 'Geo'/);
    // The aliases have the types of the names they stand for.
    assert.match(reason('req.ContentLength == "10"', 'policy_http_request'), /int and string/);
    assert.match(reason("res.StatusCode < '200'", 'policy_http_response'), /int and string/);
  });

  it('checkValueExpression takes a value of any type, and still type-checks it', () => {
    assert.deepEqual(checkValueExpression('req.headers["x-api-key"]', 'http_request'), { ok: true });
    assert.deepEqual(checkValueExpression('conn.client_ip', 'tcp'), { ok: true });
    const result = checkValueExpression('req.nope', 'http_request');
    assert.ok(!result.ok);
    assert.equal(result.position, 'line 1, column 5');
    assert.equal(checkValueExpression('req.Method', 'http_request').ok, false);
    assert.equal(checkValueExpression('req.Method', 'policy_http_request').ok, true);
  });
});

describe('checkEndpointPolicy for HTTP (the policy module)', () => {
  it('accepts every inbound and outbound action with a valid config, inbound on requests and outbound on responses', () => {
    const body = {
      inbound: [
        {
          name: 'everything',
          expressions: ['req.method == "POST"', 'inCidrRange(conn.client_ip, "10.0.0.0/8")'],
          actions: [
            action('custom-response', { status_code: 401, content: 'denied', headers: { 'x-reason': 'policy' }, content_type: 'text/plain' }),
            action('deny', { status_code: 403 }),
            action('jwt-validation', JWT),
            action('log', { metadata: { team: 'ops' } }),
            action('rate-limit', { name: 'per-ip', algorithm: 'sliding_window', capacity: 100, rate: '60s', bucket_key: ['conn.client_ip'] }),
            action('url-rewrite', { from: 'v0/user/([0-9]+).*', to: 'v1/user?id=$1', format: 'nginx' }),
            action('add-headers', { headers: { 'x-client-ip': '${conn.client_ip}' } }),
            action('remove-headers', { headers: ['x-internal'] }),
            action('redirect', { to: 'https://example.com/', status_code: 308 }),
            action('restrict-ips', { allow: ['10.0.0.0/8'], ip_policies: [ipp] }),
          ],
        },
      ],
      outbound: [
        {
          name: 'responses',
          expressions: ['res.status_code >= 500'],
          actions: [
            action('custom-response', { status_code: 503, content: 'try later' }),
            action('log'),
            action('add-headers', { headers: { 'x-served-by': 'edge' } }),
            action('remove-headers', { headers: ['server'] }),
            action('compress-response', { algorithms: ['br', 'gzip'] }),
          ],
        },
      ],
    };
    const checked = checkEndpointPolicy(body, 'http');
    assert.deepEqual(checked, { enabled: true, ...body });
    assert.deepEqual(policyIdsOf(checked), [ipp]);
  });

  it('accepts the early-2024 example of the HTTPS edge route policy module (its old spellings)', () => {
    const body = {
      enabled: true,
      inbound: [
        {
          name: 'Block POST Requests With Large Content Length From Specific Countries',
          expressions: ["req.Method == 'POST' && req.ContentLength > 10000", "conn.Geo.CountryCode in ['BR', 'CN', 'CU', 'IR']"],
          actions: [action('custom-response', { content: 'access denied', content_type: 'text/plain', status_code: 401 })],
        },
        {
          name: 'Block AI Crawler Bots',
          expressions: ["'ChatGPT' in req.Headers['User-Agent'] || 'GPTBot' in req.Headers['User-Agent']", "req.URL.contains('v0/')"],
          actions: [action('deny', { status_code: 400 })],
        },
      ],
      outbound: [{ name: 'Log large responses', expressions: ['res.ContentLength > 500000 || res.StatusCode >= 500'], actions: [action('log')] }],
    };
    assert.deepEqual(checkEndpointPolicy(body, 'http'), body);
  });

  it('2200: res is unknown inbound (requests have no response yet), naming the rule', () => {
    const message = fails(http({ inbound: [{ name: 'early', expressions: ['res.status_code == 200'], actions: [action('log')] }] }), 2200);
    assert.match(message, /^inbound, rule 'early': expression 'res\.status_code == 200' is invalid at line 1, column 1: unknown variable 'res'/);
  });

  it('2201: an unknown action type lists every HTTP type', () => {
    assert.match(
      fails(http(inbound(action('basic-auth'))), 2201),
      /action type 'basic-auth' does not exist; the types here are add-headers, compress-response, custom-response, deny, forward-internal, jwt-validation, log, rate-limit, redirect, remove-headers, restrict-ips, url-rewrite\.$/,
    );
  });

  it('2202: forward-internal is an action of a document only, not of the policy module', () => {
    assert.match(fails(http(inbound(action('forward-internal', { url: 'https://svc.internal' }))), 2202), /action 'forward-internal' is not allowed here/);
  });

  it('2202: request actions outbound and response actions inbound are not allowed', () => {
    const outboundOnly = 'the actions allowed here are add-headers, compress-response, custom-response, log, remove-headers.';
    for (const type of ['deny', 'jwt-validation', 'rate-limit', 'url-rewrite', 'redirect', 'restrict-ips']) {
      const message = fails(http(outbound(action(type))), 2202);
      assert.ok(message.endsWith(`action '${type}' is not allowed here; ${outboundOnly}`), message);
    }
    assert.match(fails(http(inbound(action('compress-response'))), 2202), /^inbound, rule 'r1': action 'compress-response' is not allowed here/);
  });
});

describe('HTTP action configs', () => {
  it('custom-response: status_code required (100-999), content up to 64 KiB, headers, content_type', () => {
    assert.deepEqual(accepted('custom-response', { status_code: 200 }), action('custom-response', { status_code: 200 }));
    accepted('custom-response', { status_code: 999, content: 'é'.repeat(MAX_RESPONSE_CONTENT_BYTES / 2), headers: {} });
    assert.match(refused('custom-response', null), /the config of action 'custom-response' is required: give status_code\.$/);
    assert.match(refused('custom-response', { content: 'x' }), /is missing 'status_code', which is required/);
    assert.match(refused('custom-response', { status_code: 99 }), /has 'status_code' 99, which is not an integer from 100 to 999/);
    assert.match(refused('custom-response', { status_code: 1000 }), /'status_code' 1000, which is not an integer from 100 to 999/);
    assert.match(refused('custom-response', { status_code: 200.5 }), /'status_code' 200\.5, which is not an integer/);
    assert.match(refused('custom-response', { status_code: '200' }), /'status_code' of type a string; it must be an integer from 100 to 999/);
    const big = 'é'.repeat(MAX_RESPONSE_CONTENT_BYTES / 2 + 1);
    assert.match(refused('custom-response', { status_code: 200, content: big }), /has 'content' of 65538 bytes; at most 65536 are allowed/);
    assert.match(refused('custom-response', { status_code: 200, content: { a: 1 } }), /'content' of type an object; it must be a string/);
    assert.match(
      refused('custom-response', { status_code: 200, headers: ['x'] }),
      /'headers' of type a list; it must be an object mapping header names to values/,
    );
    assert.match(refused('custom-response', { status_code: 200, content_type: '' }), /has 'content_type' empty/);
    assert.match(refused('custom-response', { status_code: 200, body: 'x' }), /unknown key 'body'; the keys are status_code, content, headers, content_type/);
  });

  it('deny: on HTTP an optional status_code; on TCP still no config at all', () => {
    accepted('deny', null);
    accepted('deny', {});
    accepted('deny', { status_code: 403 });
    assert.match(refused('deny', { status_code: 42 }), /'status_code' 42, which is not an integer from 100 to 999/);
    assert.match(refused('deny', { status_code: 'forbidden' }), /'status_code' of type a string/);
    assert.match(refused('deny', { message: 'no' }), /the config of action 'deny' has unknown key 'message'; the keys are status_code\.$/);
    assert.match(
      fails(tcp(inbound(action('deny', { status_code: 403 }))), 2203),
      /the config of action 'deny' must be empty on a TCP edge; got key 'status_code'/,
    );
    checkEndpointPolicy(inbound(action('deny', {})), 'tcp');
  });

  it('log: metadata, an object, as on TCP', () => {
    accepted('log', { metadata: { edge: 'x' } });
    assert.match(refused('log', { metadata: 'x' }), /'metadata' of type a string; it must be an object/);
    assert.match(refused('log', { Metadata: {} }), /unknown key 'Metadata'; the keys are metadata/);
  });

  it('rate-limit: capacity and rate required, sliding_window, rate a multiple of 10s from 60s to 24h, up to 10 bucket keys', () => {
    for (const rate of ['60s', '90s', '1m', '1m30s', '1.5h', '24h', '86400s']) accepted('rate-limit', { capacity: 1, rate });
    accepted('rate-limit', { capacity: 2_000_000_000, rate: '1h', algorithm: 'sliding_window', name: 'api', bucket_key: ['req.headers["x-api-key"]'] });
    const limit = (over: Record<string, unknown>) => refused('rate-limit', { capacity: 10, rate: '60s', ...over });
    assert.match(refused('rate-limit', null), /is required: give capacity, rate\.$/);
    assert.match(refused('rate-limit', { rate: '60s' }), /is missing 'capacity', which is required/);
    assert.match(refused('rate-limit', { capacity: 10 }), /is missing 'rate', which is required/);
    assert.match(limit({ capacity: 0 }), /'capacity' 0, which is not an integer from 1 to 2000000000/);
    assert.match(limit({ capacity: 2_000_000_001 }), /'capacity' 2000000001, which is not an integer from 1 to 2000000000/);
    assert.match(limit({ algorithm: 'fixed_window' }), /'algorithm' "fixed_window", which is not one of sliding_window/);
    assert.match(limit({ rate: '50s' }), /'rate' '50s', which is not from 60s to 24h/);
    assert.match(limit({ rate: '24h10s' }), /'rate' '24h10s', which is not from 60s to 24h/);
    assert.match(limit({ rate: '65s' }), /'rate' '65s', which is not a multiple of 10s/);
    assert.match(limit({ rate: 'hourly' }), /'rate' 'hourly', which is not a duration such as 60s/);
    assert.match(limit({ rate: '60000ms' }), /'rate' '60000ms', which is not a duration/);
    assert.match(limit({ rate: 60 }), /'rate' of type a number; it must be a string/);
    assert.match(limit({ name: 1 }), /'name' of type a number; it must be a string/);
    assert.match(limit({ bucket_key: 'conn.client_ip' }), /'bucket_key' of type a string; it must be a list of CEL expressions/);
    assert.match(limit({ bucket_key: Array(11).fill('conn.client_ip') }), /'bucket_key' with 11 items; at most 10 are allowed/);
    assert.match(limit({ bucket_key: [' '] }), /'bucket_key\[0\]' empty/);
    assert.match(
      limit({ bucket_key: ['conn.client_ip', 'conn.nope'] }),
      /'bucket_key\[1\]' 'conn\.nope', which is not a valid expression here: 'conn' has no field 'nope'.*\(line 1, column 6\)/,
    );
    assert.match(limit({ burst: 5 }), /unknown key 'burst'; the keys are name, algorithm, capacity, rate, bucket_key/);
  });

  it('url-rewrite: from (a regular expression RE2 takes) and to required, format optional', () => {
    accepted('url-rewrite', { from: '^/v0/(.*)$', to: '/v1/$1' });
    // RE2 syntax that JavaScript spells differently: flags and named groups.
    accepted('url-rewrite', { from: '(?i)^/api/(?P<id>[0-9]+)(?s:.*)', to: '/v2/$id' });
    assert.match(refused('url-rewrite', { to: '/x' }), /is missing 'from', which is required/);
    assert.match(refused('url-rewrite', { from: '/x' }), /is missing 'to', which is required/);
    assert.match(
      refused('url-rewrite', { from: '^/v0/(.*', to: '/x' }),
      /'from' '\^\/v0\/\(\.\*', which is not a valid regular expression: Unterminated group/,
    );
    assert.match(refused('url-rewrite', { from: '[z-a]', to: '/x' }), /which is not a valid regular expression/);
    assert.match(
      refused('url-rewrite', { from: '^/a(?!b)', to: '/x' }),
      /'from' '\^\/a\(\?!b\)', which uses a lookaround; the edge's regular expressions \(RE2\) have none/,
    );
    assert.match(refused('url-rewrite', { from: '(a)\\1', to: '/x' }), /which uses a backreference \(\\1\)/);
    accepted('url-rewrite', { from: '\\\\1', to: '/x' }); // an escaped backslash, then a 1
    assert.match(refused('url-rewrite', { from: '', to: '/x' }), /'from' empty/);
    assert.match(refused('url-rewrite', { from: 'a', to: '/x', format: 3 }), /'format' of type a number; it must be a string/);
  });

  it('add-headers: headers required, not empty, names that are tokens, values without CR, LF or NUL', () => {
    accepted('add-headers', { headers: { 'X-Client-IP': '${conn.client_ip}', "x!#$%&'*+-.^_`|~1": '' } });
    assert.match(refused('add-headers', null), /is required: give headers/);
    assert.match(refused('add-headers', {}), /is missing 'headers', which is required/);
    assert.match(refused('add-headers', { headers: {} }), /has 'headers' empty; give at least one entry/);
    assert.match(refused('add-headers', { headers: { 'x y': 'a' } }), /'headers' key 'x y', which is not a header name/);
    assert.match(refused('add-headers', { headers: { 'x:y': 'a' } }), /'headers' key 'x:y', which is not a header name/);
    assert.match(refused('add-headers', { headers: { 'x-a': 'a\r\nset-cookie: b' } }), /'headers\.x-a' with a control character \(such as CR, LF or NUL\)/);
    assert.match(refused('add-headers', { headers: { 'x-a': 'a\u0000' } }), /'headers\.x-a' with a control character \(such as CR, LF or NUL\)/);
    assert.match(refused('add-headers', { headers: { 'x-a': 1 } }), /'headers\.x-a' of type a number; it must be a string/);
  });

  it('remove-headers: a non-empty list of header names', () => {
    accepted('remove-headers', { headers: ['server', 'X-Powered-By'] });
    assert.match(refused('remove-headers', null), /is required: give headers/);
    assert.match(refused('remove-headers', { headers: [] }), /'headers' with 0 items; give at least 1/);
    assert.match(refused('remove-headers', { headers: { server: '' } }), /'headers' of type an object; it must be a list of header names/);
    assert.match(refused('remove-headers', { headers: ['server', 'bad name'] }), /'headers\[1\]' 'bad name', which is not a header name/);
    assert.match(refused('remove-headers', { headers: [1] }), /'headers\[0\]' of type a number; it must be a string/);
  });

  it('redirect: to required, from a regular expression, status_code a redirect code, headers', () => {
    accepted('redirect', { to: 'https://example.com/$1', from: '^http://example\\.com/(.*)', status_code: 301, headers: { 'x-from': 'edge' } });
    for (const status_code of [302, 303, 307, 308]) accepted('redirect', { to: '/x', status_code });
    assert.match(refused('redirect', { from: '.*' }), /is missing 'to', which is required/);
    assert.match(refused('redirect', { to: '' }), /'to' empty/);
    assert.match(refused('redirect', { to: '/x', status_code: 300 }), /'status_code' 300, which is not one of 301, 302, 303, 307, 308/);
    assert.match(refused('redirect', { to: '/x', status_code: '301' }), /'status_code' "301", which is not one of 301/);
    assert.match(refused('redirect', { to: '/x', from: '(' }), /'from' '\(', which is not a valid regular expression/);
    assert.match(refused('redirect', { to: '/x', headers: { 'a b': 'c' } }), /'headers' key 'a b', which is not a header name/);
  });

  it('compress-response (outbound): algorithms from gzip, deflate, br, compress', () => {
    const outbound1 = (config: unknown) => http(outbound(action('compress-response', config)));
    outbound1(null)();
    outbound1({})();
    outbound1({ algorithms: ['gzip', 'deflate', 'br', 'compress'] })();
    assert.match(
      fails(outbound1({ algorithms: ['gzip', 'zstd'] }), 2203),
      /^outbound, rule 'o1': the config of action 'compress-response' has 'algorithms\[1\]' "zstd", which is not one of gzip, deflate, br, compress\.$/,
    );
    assert.match(fails(outbound1({ algorithms: 'gzip' }), 2203), /'algorithms' of type a string; it must be a list of algorithm names/);
    assert.match(fails(outbound1({ level: 9 }), 2203), /unknown key 'level'; the keys are algorithms/);
  });

  it('jwt-validation: the shape of issuer, audience, http.tokens and jws', () => {
    assert.deepEqual(accepted('jwt-validation', JWT), action('jwt-validation', JWT));
    accepted('jwt-validation', jwt({ jws: { allowed_algorithms: ['RS256'] }, http: { tokens: [{ type: 'jwt', method: 'body', name: 'token' }] } }));
    assert.match(refused('jwt-validation', null), /is required: give issuer, audience, http, jws\.$/);
    for (const key of ['issuer', 'audience', 'http', 'jws'])
      assert.match(refused('jwt-validation', jwt({ [key]: undefined })), new RegExp(`is missing '${key}', which is required`));
    assert.match(refused('jwt-validation', jwt({ issuer: { allow_list: [] } })), /'issuer\.allow_list' with 0 items; give at least 1/);
    assert.match(refused('jwt-validation', jwt({ audience: {} })), /is missing 'audience\.allow_list', which is required/);
    assert.match(refused('jwt-validation', jwt({ audience: { allow_list: [{}] } })), /is missing 'audience\.allow_list\[0\]\.value', which is required/);
    assert.match(refused('jwt-validation', jwt({ issuer: { allow_list: [{ value: '' }] } })), /'issuer\.allow_list\[0\]\.value' empty/);
    assert.match(refused('jwt-validation', jwt({ issuer: { allow_list: ['https://x'] } })), /'issuer\.allow_list\[0\]' of type a string; it must be an object/);
    assert.match(refused('jwt-validation', jwt({ http: { tokens: [] } })), /'http\.tokens' with 0 items; give at least 1/);
    const token = (over: Record<string, unknown>) => jwt({ http: { tokens: [{ ...JWT.http.tokens[0], ...over }] } });
    assert.match(refused('jwt-validation', token({ method: 'query' })), /'http\.tokens\[0\]\.method' "query", which is not one of header, body/);
    assert.match(refused('jwt-validation', token({ type: 'saml' })), /'http\.tokens\[0\]\.type' "saml", which is not one of access_token, at\+jwt, id_token/);
    assert.match(refused('jwt-validation', token({ name: undefined })), /is missing 'http\.tokens\[0\]\.name', which is required/);
    assert.match(
      refused('jwt-validation', token({ header: 'x' })),
      /unknown key 'http\.tokens\[0\]\.header'; the keys of 'http\.tokens\[0\]' are type, method, name, prefix/,
    );
    assert.match(refused('jwt-validation', jwt({ jws: { allowed_algorithms: [] } })), /'jws\.allowed_algorithms' with 0 items; give at least 1/);
    assert.match(
      refused('jwt-validation', jwt({ jws: { allowed_algorithms: ['RS256', 'none'] } })),
      /'jws\.allowed_algorithms\[1\]' 'none'; unsigned tokens cannot be allowed/,
    );
    assert.match(
      refused('jwt-validation', jwt({ jws: { allowed_algorithms: ['RS256'], keys: { sources: { additional_jkus: 'https://x' } } } })),
      /'jws\.keys\.sources\.additional_jkus' of type a string; it must be a list of URLs/,
    );
    assert.match(
      refused('jwt-validation', jwt({ jws: { allowed_algorithms: ['RS256'], keys: { jwks: [] } } })),
      /unknown key 'jws\.keys\.jwks'; the keys of 'jws\.keys' are sources/,
    );
    assert.match(refused('jwt-validation', jwt({ enabled: true })), /unknown key 'enabled'; the keys are issuer, audience, http, jws/);
  });

  it('restrict-ips: as on TCP', () => {
    accepted('restrict-ips', { deny: ['192.0.2.0/24'] });
    assert.match(refused('restrict-ips', { allow: ['10.1.2.3/8'] }), /did you mean '10\.0\.0\.0\/8'/);
    assert.match(refused('restrict-ips', {}), /at least one of allow, deny or ip_policies/);
  });
});

describe('checkTrafficPolicyDocument for HTTP', () => {
  const yamlDoc = `
on_http_request:
  - name: api keys only
    expressions:
      - "req.path.startsWith('/api/') && !('x-api-key' in req.headers)"
    actions:
      - type: custom-response
        config:
          status_code: 401
          content: missing key
  - actions:
      - type: rate-limit
        config:
          name: per key
          algorithm: sliding_window
          capacity: 100
          rate: 60s
          bucket_key:
            - req.headers['x-api-key']
      - type: restrict-ips
        config:
          ip_policies: [${ipp}]
on_http_response:
  - expressions: ["res.status_code == 200 && res.content_type == 'application/json'"]
    actions:
      - type: compress-response
`;

  it('accepts a document with both phases, and documentPolicyIds reads it', () => {
    checkTrafficPolicyDocument(yamlDoc, 'http');
    checkTrafficPolicyDocument('{}', 'http');
    checkTrafficPolicyDocument(JSON.stringify({ on_http_response: [{ actions: [{ type: 'remove-headers', config: { headers: ['server'] } }] }] }), 'http');
    assert.deepEqual(documentPolicyIds(yamlDoc), [ipp]);
  });

  it('2200: each phase has its own variables, and documents take only the snake_case names', () => {
    assert.match(
      fails(doc({ on_http_request: [{ expressions: ['res.status_code == 500'], actions: [{ type: 'log' }] }] }), 2200),
      /^on_http_request, rule '#1': .*unknown variable 'res'; the variables here are conn, endpoint, time, req\.$/,
    );
    assert.match(
      fails(doc({ on_http_response: [{ expressions: ['res.StatusCode == 500'], actions: [{ type: 'log' }] }] }), 2200),
      /'res' has no field 'StatusCode'/,
    );
    assert.match(fails(doc({ on_http_request: [{ expressions: ['req.Method == "GET"'], actions: [{ type: 'log' }] }] }), 2200), /'req' has no field 'Method'/);
  });

  it("2203: a bucket key is checked in its rule's environment", () => {
    const limited = (key: string) => ({ actions: [{ type: 'rate-limit', config: { capacity: 5, rate: '60s', bucket_key: [key] } }] });
    assert.match(
      fails(doc({ on_http_request: [limited('req.Method')] }), 2203),
      /^on_http_request, rule '#1': the config of action 'rate-limit' has 'bucket_key\[0\]' 'req\.Method'/,
    );
    checkEndpointPolicy({ inbound: [{ name: 'r', ...limited('req.Method') }] }, 'http');
  });

  it('2202: the request actions are not allowed on responses, nor compress-response on requests', () => {
    assert.match(
      fails(doc({ on_http_response: [{ actions: [{ type: 'deny' }] }] }), 2202),
      /^on_http_response, rule '#1': action 'deny' is not allowed here; the actions allowed here are add-headers, compress-response, custom-response, log, remove-headers\.$/,
    );
    assert.match(fails(doc({ on_http_request: [{ actions: [{ type: 'compress-response' }] }] }), 2202), /action 'compress-response' is not allowed here/);
  });

  it('2213: on_tcp_connect is not a phase of HTTP, and the HTTP phases are not phases of TCP', () => {
    assert.match(
      fails(doc('on_tcp_connect: []'), 2213),
      /traffic policy phase 'on_tcp_connect' does not exist on this resource; the phases here are on_http_request, on_http_response\.$/,
    );
    assert.match(
      fails(doc('on_http_request: []', 'tcp'), 2213),
      /phase 'on_http_request' does not exist on this resource; the phases here are on_tcp_connect\.$/,
    );
    assert.match(fails(doc('on_http_response: []', 'tcp'), 2213), /phase 'on_http_response' does not exist/);
  });
});

describe('TCP keeps its own actions and variables', () => {
  it('knows only close-connection, deny, forward-internal, log and restrict-ips, in the tcp environment', () => {
    for (const type of ['custom-response', 'compress-response', 'rate-limit'])
      assert.match(
        fails(tcp(inbound(action(type))), 2201),
        new RegExp(`action type '${type}' does not exist; the types here are close-connection, deny, forward-internal, log, restrict-ips\\.$`),
      );
    assert.match(fails(tcp({ inbound: [{ name: 'r', expressions: ['req.method == "GET"'], actions: [action('deny')] }] }), 2200), /unknown variable 'req'/);
    assert.match(
      fails(tcp({ inbound: [{ name: 'r', expressions: ['conn.Geo.CountryCode == "BR"'], actions: [action('deny')] }] }), 2200),
      /'conn' has no field 'Geo'/,
    );
    assert.match(
      fails(doc({ on_tcp_connect: [{ actions: [{ type: 'deny', config: { status_code: 403 } }] }] }, 'tcp'), 2203),
      /must be empty on a TCP edge; got key 'status_code'/,
    );
  });
});
