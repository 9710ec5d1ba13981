// The edge's traffic policy evaluator (src/edges/traffic-policy/): each action in each phase, what
// the decision is and how the request or response is changed, expressions true, false and failing,
// order and termination, the old policy module with its spellings, TCP connections, rate limits
// over a sliding window, jwt-validation against a JWKS served here, RE2 for matches, and policies
// as ngrok's documentation publishes them.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Environment } from '@marcbachmann/cel-js';
import { SignJWT, exportJWK, generateKeyPair, type JWK } from 'jose';
import { newId } from '../../src/core/ids.js';
import type { EndpointPolicy } from '../../src/edge-config/traffic-policy/traffic-policy.js';
import {
  compileHttpPolicy,
  compileTcpPolicy,
  type HeaderField,
  type HttpPolicy,
  type PolicyConnection,
  type PolicyDeps,
  type PolicyRequest,
  type PolicyResponse,
  type RequestDecision,
} from '../../src/edges/traffic-policy/index.js';
import { SlidingWindow } from '../../src/edges/traffic-policy/rate-limit.js';

const T0 = Date.UTC(2024, 0, 1, 12, 0, 0);

function connection(clientIp = '203.0.113.7', protocol: PolicyConnection['endpoint']['protocol'] = 'https'): PolicyConnection {
  return {
    clientIp,
    clientPort: 51234,
    serverIp: '192.0.2.1',
    serverPort: 443,
    startedAt: new Date(T0 - 1000),
    endpoint: { id: 'ep_1', host: 'app.example.com', port: 443, url: 'https://app.example.com', addr: 'app.example.com:443', protocol },
  };
}

function request(url = '/', headers: HeaderField[] = [], extra: Partial<PolicyRequest> = {}): PolicyRequest {
  return { method: 'GET', scheme: 'https', host: 'app.example.com', url, headers: [...headers], version: 'HTTP/1.1', receivedAt: new Date(T0), ...extra };
}

const response = (status = 200, headers: HeaderField[] = [['content-type', 'text/html']]): PolicyResponse => ({ status, headers: [...headers] });

interface Harness {
  deps: PolicyDeps;
  logs: { line: Record<string, unknown>; msg: string }[];
  clock: { now: number };
}

function harness(over: Partial<PolicyDeps> = {}): Harness {
  const logs: Harness['logs'] = [];
  const clock = { now: T0 };
  const deps: PolicyDeps = { ipPolicy: () => undefined, log: (line, msg) => logs.push({ line, msg }), now: () => new Date(clock.now), ...over };
  return { deps, logs, clock };
}

const doc = (value: unknown, enabled = true) => ({
  kind: 'traffic_policy' as const,
  enabled,
  value: typeof value === 'string' ? value : JSON.stringify(value),
});
const old = (value: Partial<EndpointPolicy>) => ({
  kind: 'policy' as const,
  value: { enabled: true, inbound: [], outbound: null, ...value } as EndpointPolicy,
});

function http(value: unknown, h: Harness = harness()): HttpPolicy {
  const policy = compileHttpPolicy(doc(value), h.deps);
  assert.ok(policy, 'the policy compiled to nothing');
  return policy;
}

/** An on_http_request phase of one rule. */
const onRequest = (actions: unknown[], expressions: string[] = []) => ({ on_http_request: [{ name: 'r', expressions, actions }] });
const onResponse = (actions: unknown[], expressions: string[] = []) => ({ on_http_response: [{ name: 'r', expressions, actions }] });

const headerValues = (headers: HeaderField[], name: string) => headers.filter(([n]) => n.toLowerCase() === name).map(([, v]) => v);

function responded(decision: RequestDecision | ReturnType<HttpPolicy['onResponse']>) {
  assert.equal(decision.kind, 'respond', JSON.stringify(decision));
  return (decision as Extract<RequestDecision, { kind: 'respond' }>).response;
}

describe('compiling', () => {
  it('gives nothing for a disabled or empty module', () => {
    const { deps } = harness();
    assert.equal(compileHttpPolicy(doc(onRequest([{ type: 'deny' }]), false), deps), undefined);
    assert.equal(compileHttpPolicy(doc({}), deps), undefined);
    assert.equal(
      compileHttpPolicy(old({ enabled: false, inbound: [{ name: 'x', expressions: [], actions: [{ type: 'deny', config: null }] }] }), deps),
      undefined,
    );
    assert.equal(compileHttpPolicy(old({}), deps), undefined);
    assert.equal(compileTcpPolicy(doc({ on_tcp_connect: [] }), deps), undefined);
  });

  it('refuses a module the control plane would not store', () => {
    assert.throws(() => compileHttpPolicy(doc({ on_tcp_connect: [{ actions: [{ type: 'deny' }] }] }), harness().deps));
    assert.throws(() => compileHttpPolicy(doc(onRequest([{ type: 'deny' }], ['req.nope == 1'])), harness().deps));
  });

  it('compiles expressions once, not per request', async () => {
    const policy = http(onRequest([{ type: 'deny' }], ["req.method == 'DELETE'"]));
    const start = performance.now();
    for (let i = 0; i < 2000; i++) await policy.onRequest(connection(), request());
    assert.ok(performance.now() - start < 2000);
  });
});

describe('expressions', () => {
  it('runs the actions when every expression is true, and not when one is false', async () => {
    const policy = http(onRequest([{ type: 'deny' }], ["req.method == 'POST'", "req.url.path.startsWith('/admin')"]));
    assert.equal(responded(await policy.onRequest(connection(), request('/admin/x', [], { method: 'POST' }))).status, 403);
    assert.deepEqual(await policy.onRequest(connection(), request('/admin/x')), { kind: 'continue' });
    assert.deepEqual(await policy.onRequest(connection(), request('/public', [], { method: 'POST' })), { kind: 'continue' });
  });

  it("req.url.path.startsWith('/admin') holds on /admin/x, and req.url is the full URL as a string", async () => {
    const policy = http(
      onRequest([{ type: 'deny' }], ["req.url.path.startsWith('/admin')", "req.url.startsWith('https://app.example.com/admin')", "req.url.query == 'a=1'"]),
    );
    assert.equal(responded(await policy.onRequest(connection(), request('/admin/x?a=1'))).rule, 'r');
    assert.equal((await policy.onRequest(connection(), request('/administrators?a=2'))).kind, 'continue');
  });

  it('an expression that fails is an error decision naming the rule and the problem', async () => {
    const policy = http({ on_http_request: [{ name: 'needs header', expressions: ["req.headers['x-missing'][0] == 'yes'"], actions: [{ type: 'deny' }] }] });
    const decision = await policy.onRequest(connection(), request('/'));
    assert.equal(decision.kind, 'error');
    assert.equal((decision as { rule: string }).rule, 'needs header');
    assert.match((decision as { problem: string }).problem, /x-missing/);
    // Written safely, the same test is false.
    const safe = http(onRequest([{ type: 'deny' }], ["'x-missing' in req.headers && req.headers['x-missing'][0] == 'yes'"]));
    assert.deepEqual(await safe.onRequest(connection(), request('/')), { kind: 'continue' });
  });

  it('sees every variable: connection, endpoint, time, request, cookies, query parameters', async () => {
    const expressions = [
      "conn.client_ip == '203.0.113.7' && conn.client_port == 51234 && conn.server_port == 443 && conn.server_ip == '192.0.2.1'",
      "endpoint.host == 'app.example.com' && endpoint.port == 443 && endpoint.protocol == 'https' && endpoint.id == 'ep_1'",
      "conn.geo.country_code == '' && conn.geo.latitude == 0.0",
      'time.now > conn.ts.start && time.now - conn.ts.start == duration("1s") && req.ts.header_received == time.now',
      "req.method == 'PUT' && req.host == 'app.example.com' && req.path == '/a/b' && req.query == 'x=1&x=2&y=%20z'",
      "req.query_params['x'] == ['1', '2'] && req.query_params['y'][0] == ' z'",
      "req.headers['x-token'] == ['t1', 't2'] && req.user_agent == 'curl/8' && req.content_type == 'application/json'",
      "req.content_length == 12 && req.content_encoding == ['gzip'] && req.version == 'HTTP/1.1'",
      "req.cookies['sid'][0].value == 'abc' && req.cookies['theme'][0].value == 'dark'",
      "inCidrRange(conn.client_ip, '203.0.113.0/24') && inCidrRanges(conn.client_ip, ['10.0.0.0/8', '203.0.113.0/24'])",
      "!inCidrRange(conn.client_ip, '2001:db8::/32') && string(req.url) == 'https://app.example.com/a/b?x=1&x=2&y=%20z' && size(req.url) > 10",
    ];
    const policy = http(onRequest([{ type: 'custom-response', config: { status_code: 200, content: 'all true' } }], expressions));
    const headers: HeaderField[] = [
      ['X-Token', 't1'],
      ['x-token', 't2'],
      ['User-Agent', 'curl/8'],
      ['Content-Type', 'application/json'],
      ['Content-Length', '12'],
      ['Content-Encoding', 'gzip'],
      ['Cookie', 'sid=abc; theme="dark"'],
    ];
    const req = request('/a/b?x=1&x=2&y=%20z', headers, { method: 'PUT' });
    const decision = await policy.onRequest(connection(), req);
    assert.equal(responded(decision).body, 'all true');
  });

  it('content_length is -1 without a Content-Length header', async () => {
    const policy = http(onRequest([{ type: 'deny' }], ['req.content_length == -1']));
    assert.equal((await policy.onRequest(connection(), request('/'))).kind, 'respond');
  });
});

describe('matches runs on RE2', () => {
  it('a pattern that backtracks exponentially in JavaScript answers at once, and rightly', async () => {
    const policy = http(onRequest([{ type: 'deny' }], ["req.path.matches('(a+)+$')"]));
    const start = performance.now();
    const slow = await policy.onRequest(connection(), request(`/${'a'.repeat(5000)}!`));
    assert.ok(performance.now() - start < 1000, `took ${performance.now() - start} ms`);
    assert.equal(slow.kind, 'continue');
    assert.equal((await policy.onRequest(connection(), request(`/${'a'.repeat(50)}`))).kind, 'respond');
  });

  it("ngrok.URL's matches too, and inside macros", async () => {
    const policy = http(
      onRequest([{ type: 'deny' }], ["req.url.matches('^https://app[.]example[.]com/(a+)+$')", "req.headers['x'].exists(v, v.matches('^(b+)+$'))"]),
    );
    const start = performance.now();
    const decision = await policy.onRequest(connection(), request(`/${'a'.repeat(3000)}`, [['x', `${'b'.repeat(3000)}c`]]));
    assert.ok(performance.now() - start < 1000);
    assert.equal(decision.kind, 'continue');
    assert.equal((await policy.onRequest(connection(), request('/aaa', [['x', 'bbb']]))).kind, 'respond');
  });

  it('a pattern RE2 refuses, built at run time, is an error; the library outside the edge keeps its own matches', async () => {
    const policy = http(onRequest([{ type: 'deny' }], ["req.path.matches(req.headers['x-pattern'][0])"]));
    const decision = await policy.onRequest(connection(), request('/abc', [['x-pattern', '(?=a)']]));
    assert.equal(decision.kind, 'error');
    assert.match((decision as { problem: string }).problem, /invalid regular expression \(RE2\) `\(\?=a\)`/);
    assert.equal(new Environment().evaluate('"abc".matches("(?=a)")'), true);
  });
});

describe('order and termination', () => {
  it('runs rules in order; an answering action ends the phase', async () => {
    const h = harness();
    const policy = http(
      {
        on_http_request: [
          {
            name: 'first',
            actions: [
              { type: 'add-headers', config: { headers: { 'x-first': '1' } } },
              { type: 'log', config: { metadata: { step: 1 } } },
            ],
          },
          {
            name: 'stop',
            expressions: ["req.url.path == '/stop'"],
            actions: [{ type: 'custom-response', config: { status_code: 418, content: 'stopped' } }, { type: 'log' }],
          },
          { name: 'last', actions: [{ type: 'add-headers', config: { headers: { 'x-last': '1' } } }] },
        ],
      },
      h,
    );
    const through = request('/go');
    assert.deepEqual(await policy.onRequest(connection(), through), { kind: 'continue' });
    assert.deepEqual(headerValues(through.headers, 'x-first'), ['1']);
    assert.deepEqual(headerValues(through.headers, 'x-last'), ['1']);

    const stopped = request('/stop');
    const refusal = responded(await policy.onRequest(connection(), stopped));
    assert.deepEqual(
      { status: refusal.status, body: refusal.body, rule: refusal.rule, action: refusal.action },
      { status: 418, body: 'stopped', rule: 'stop', action: 'custom-response' },
    );
    assert.deepEqual(headerValues(stopped.headers, 'x-last'), []);
    assert.equal(h.logs.length, 2, 'the log after custom-response did not run');
  });

  it('later rules see the request as earlier actions changed it', async () => {
    const policy = http({
      on_http_request: [
        { actions: [{ type: 'url-rewrite', config: { from: '/old/(.*)', to: '/new/$1' } }] },
        { expressions: ["req.url.path == '/new/page' && req.headers['x-added'][0] == 'yes'"], actions: [{ type: 'deny', config: { status_code: 451 } }] },
      ],
    });
    const first = await policy.onRequest(connection(), request('/old/page'));
    assert.equal(first.kind, 'error', 'x-added is not there yet');
    const policy2 = http({
      on_http_request: [
        {
          actions: [
            { type: 'url-rewrite', config: { from: '/old/(.*)', to: '/new/$1' } },
            { type: 'add-headers', config: { headers: { 'x-added': 'yes' } } },
          ],
        },
        {
          name: 'check',
          expressions: ["req.url.path == '/new/page' && req.headers['x-added'][0] == 'yes'"],
          actions: [{ type: 'deny', config: { status_code: 451 } }],
        },
      ],
    });
    assert.equal(responded(await policy2.onRequest(connection(), request('/old/page'))).status, 451);
  });

  it('an unnamed rule is named by its number', async () => {
    const policy = http({ on_http_request: [{ expressions: ['false'], actions: [{ type: 'deny' }] }, { actions: [{ type: 'deny' }] }] });
    assert.equal(responded(await policy.onRequest(connection(), request())).rule, '#2');
  });
});

describe('actions of the request phase', () => {
  it('forward-internal: ends the phase with the internal URL (scheme and lower-case name), after earlier actions ran', async () => {
    const policy = http({
      on_http_request: [
        { name: 'tag', actions: [{ type: 'add-headers', config: { headers: { 'x-tag': 'a' } } }] },
        {
          name: 'to svc',
          expressions: ["req.url.path.startsWith('/api')"],
          actions: [{ type: 'forward-internal', config: { url: 'https://SVC.internal:443' } }],
        },
        { name: 'after', actions: [{ type: 'deny' }] },
      ],
    });
    const req = request('/api/x');
    assert.deepEqual(await policy.onRequest(connection(), req), { kind: 'continue', forwardInternal: { url: 'https://svc.internal', rule: 'to svc' } });
    assert.deepEqual(headerValues(req.headers, 'x-tag'), ['a']);
    // Its rule does not apply: the phase goes on, and the next rule answers.
    assert.equal(responded(await policy.onRequest(connection(), request('/other'))).action, 'deny');
  });

  it('deny: 403 by default, or its status', async () => {
    const r = responded(await http(onRequest([{ type: 'deny' }])).onRequest(connection(), request()));
    assert.equal(r.status, 403);
    assert.equal(r.action, 'deny');
    assert.match(r.body, /^403 Forbidden/);
    assert.equal(responded(await http(onRequest([{ type: 'deny', config: { status_code: 404 } }])).onRequest(connection(), request())).status, 404);
  });

  it('custom-response: status, content and headers, with ${} interpolations', async () => {
    const policy = http(
      onRequest([
        {
          type: 'custom-response',
          config: { status_code: 200, content: 'Hello ${req.url.path} from ${conn.client_ip}', headers: { 'x-path': '${req.url.path}', 'x-fixed': 'f' } },
        },
      ]),
    );
    const r = responded(await policy.onRequest(connection(), request('/hi')));
    assert.equal(r.status, 200);
    assert.equal(r.body, 'Hello /hi from 203.0.113.7');
    assert.deepEqual(headerValues(r.headers, 'x-path'), ['/hi']);
    assert.deepEqual(headerValues(r.headers, 'x-fixed'), ['f']);
    assert.deepEqual(headerValues(r.headers, 'content-type'), ['text/plain; charset=utf-8']);
    const typed = http(
      onRequest([
        { type: 'custom-response', config: { status_code: 503, content: '<p>down</p>', content_type: 'text/html', headers: { 'Content-Type': 'x/y' } } },
      ]),
    );
    assert.deepEqual(headerValues(responded(await typed.onRequest(connection(), request())).headers, 'content-type'), ['text/html']);
  });

  it('an interpolation that fails is an error; one that does not compile is logged and an error', async () => {
    const policy = http(onRequest([{ type: 'custom-response', config: { status_code: 200, content: "${req.headers['x-none'][0]}" } }]));
    const decision = await policy.onRequest(connection(), request());
    assert.equal(decision.kind, 'error');
    assert.match((decision as { problem: string }).problem, /x-none/);
    const h = harness();
    const broken = http(onRequest([{ type: 'custom-response', config: { status_code: 200, content: '${req.nope}' } }]), h);
    assert.equal(h.logs.length, 1);
    assert.equal((await broken.onRequest(connection(), request())).kind, 'error');
  });

  it('add-headers appends to the request; values are interpolated and checked for CR/LF', async () => {
    const policy = http(onRequest([{ type: 'add-headers', config: { headers: { 'x-client-ip': '${conn.client_ip}', 'x-tag': 'a' } } }]));
    const req = request('/', [['X-Tag', 'original']]);
    assert.deepEqual(await policy.onRequest(connection(), req), { kind: 'continue' });
    assert.deepEqual(headerValues(req.headers, 'x-client-ip'), ['203.0.113.7']);
    assert.deepEqual(headerValues(req.headers, 'x-tag'), ['original', 'a']);
    const injecting = http(onRequest([{ type: 'add-headers', config: { headers: { 'x-q': "${req.query_params['q'][0]}" } } }]));
    const bad = request('/?q=a%0d%0aSet-Cookie:%20x=1');
    const decision = await injecting.onRequest(connection(), bad);
    assert.equal(decision.kind, 'error');
    assert.match((decision as { problem: string }).problem, /control character/);
    assert.deepEqual(headerValues(bad.headers, 'x-q'), []);
  });

  it('remove-headers removes every field of the names, in any case, in place', async () => {
    const policy = http(onRequest([{ type: 'remove-headers', config: { headers: ['X-Secret', 'cookie'] } }]));
    const headers: HeaderField[] = [
      ['x-secret', '1'],
      ['Accept', '*/*'],
      ['X-SECRET', '2'],
      ['Cookie', 'a=b'],
    ];
    const req = request('/', headers);
    const list = req.headers;
    await policy.onRequest(connection(), req);
    assert.equal(req.headers, list);
    assert.deepEqual(req.headers, [['Accept', '*/*']]);
  });

  it('restrict-ips: allow and deny CIDRs, IP policies, deny winning, enforce false only logging', async () => {
    const ipp = newId('ipp');
    const ippObject = { allow: ['198.51.100.0/24'], deny: ['198.51.100.66/32'] };
    const h = harness({ ipPolicy: (id) => (id === ipp ? ippObject : undefined) });
    const policy = http(onRequest([{ type: 'restrict-ips', config: { allow: ['203.0.113.0/24'], deny: ['203.0.113.9/32'], ip_policies: [ipp] } }]), h);
    const at = async (ip: string) => (await policy.onRequest(connection(ip), request())).kind;
    assert.equal(await at('203.0.113.7'), 'continue');
    assert.equal(await at('198.51.100.5'), 'continue');
    assert.equal(await at('::ffff:203.0.113.7'), 'continue');
    assert.equal(await at('203.0.113.9'), 'respond');
    assert.equal(await at('198.51.100.66'), 'respond');
    assert.equal(await at('192.0.2.1'), 'respond');
    assert.equal(await at('2001:db8::1'), 'respond');
    assert.equal(responded(await policy.onRequest(connection('192.0.2.1'), request())).status, 403);

    const denyOnly = http(onRequest([{ type: 'restrict-ips', config: { deny: ['192.0.2.0/24'] } }]));
    assert.equal((await denyOnly.onRequest(connection('203.0.113.7'), request())).kind, 'continue');
    assert.equal((await denyOnly.onRequest(connection('192.0.2.7'), request())).kind, 'respond');

    const dry = harness();
    const notEnforced = http(onRequest([{ type: 'restrict-ips', config: { enforce: false, allow: ['10.0.0.0/8'] } }]), dry);
    assert.equal((await notEnforced.onRequest(connection('192.0.2.7'), request())).kind, 'continue');
    assert.equal(dry.logs.length, 1);
    assert.equal(dry.logs[0]!.line.client_ip, '192.0.2.7');

    const missing = http(onRequest([{ type: 'restrict-ips', config: { ip_policies: [newId('ipp')] } }]));
    assert.equal((await missing.onRequest(connection(), request())).kind, 'error');
  });

  it('redirect: from on the full URL, to with $1, status 302 by default, headers', async () => {
    const policy = http(
      onRequest([
        {
          type: 'redirect',
          config: { from: '^https://app.example.com/blog/(.*)$', to: 'https://blog.example.com/$1?from=${conn.client_ip}', headers: { 'x-r': '1' } },
        },
      ]),
    );
    const r = responded(await policy.onRequest(connection(), request('/blog/post?id=3')));
    assert.equal(r.status, 302);
    assert.deepEqual(headerValues(r.headers, 'location'), ['https://blog.example.com/post?id=3?from=203.0.113.7']);
    assert.deepEqual(headerValues(r.headers, 'x-r'), ['1']);
    assert.equal((await policy.onRequest(connection(), request('/shop'))).kind, 'continue', 'from does not match: no redirect');

    const always = http(onRequest([{ type: 'redirect', config: { to: 'https://example.org${req.url.path}', status_code: 301 } }]));
    const a = responded(await always.onRequest(connection(), request('/x')));
    assert.equal(a.status, 301);
    assert.deepEqual(headerValues(a.headers, 'location'), ['https://example.org/x']);

    const named = http(onRequest([{ type: 'redirect', config: { from: '/u/(?P<user>[a-z]+)', to: '/users/${user}' } }]));
    assert.deepEqual(headerValues(responded(await named.onRequest(connection(), request('/u/ann'))).headers, 'location'), [
      'https://app.example.com/users/ann',
    ]);
  });

  it('url-rewrite: from on the full URL, to replacing the match; the path and query of the request change', async () => {
    const policy = http(onRequest([{ type: 'url-rewrite', config: { from: '/products/([0-9]+)', to: '/items?id=$1' } }]));
    const req = request('/products/42');
    assert.deepEqual(await policy.onRequest(connection(), req), { kind: 'continue' });
    assert.equal(req.url, '/items?id=42');
    assert.equal(req.host, 'app.example.com');
    const other = request('/about?x=1');
    await policy.onRequest(connection(), other);
    assert.equal(other.url, '/about?x=1');
    // A value interpolated into `to` cannot add group references.
    const values = http(onRequest([{ type: 'url-rewrite', config: { from: '^(.*)/v1/(.*)$', to: "$1/v2/$2?by=${req.headers['x-by'][0]}" } }]));
    const v = request('/api/v1/things', [['x-by', '$1']]);
    await values.onRequest(connection(), v);
    assert.equal(v.url, '/api/v2/things?by=$1');
  });

  it('rate-limit: capacity per window by client IP, 429 with Retry-After, buckets by key, the window sliding', async () => {
    const h = harness();
    const policy = http(onRequest([{ type: 'rate-limit', config: { name: 'two a minute', algorithm: 'sliding_window', capacity: 2, rate: '60s' } }]), h);
    const at = async (ip = '203.0.113.7') => policy.onRequest(connection(ip), request());
    assert.equal((await at()).kind, 'continue');
    assert.equal((await at()).kind, 'continue');
    const refused = responded(await at());
    assert.equal(refused.status, 429);
    assert.equal(refused.action, 'rate-limit');
    assert.ok(Number(headerValues(refused.headers, 'retry-after')[0]) >= 1);
    assert.equal((await at('198.51.100.1')).kind, 'continue', 'another client has its own bucket');
    h.clock.now += 60_000;
    assert.equal((await at()).kind, 'respond', 'the previous window still counts fully at its end');
    h.clock.now += 30_000;
    assert.equal((await at()).kind, 'continue', 'half of it has slid out');
    assert.equal((await at()).kind, 'respond');
    h.clock.now += 120_000;
    assert.equal((await at()).kind, 'continue');
    assert.equal((await at()).kind, 'continue');

    const keyed = http(onRequest([{ type: 'rate-limit', config: { capacity: 1, rate: '60s', bucket_key: ["req.headers['x-api-key']"] } }]), harness());
    assert.equal((await keyed.onRequest(connection(), request('/', [['x-api-key', 'a']]))).kind, 'continue');
    assert.equal((await keyed.onRequest(connection(), request('/', [['x-api-key', 'b']]))).kind, 'continue');
    assert.equal((await keyed.onRequest(connection(), request('/', [['x-api-key', 'a']]))).kind, 'respond');
    assert.equal((await keyed.onRequest(connection(), request('/'))).kind, 'error', 'a bucket key that fails');
  });

  it('the sliding window: its Retry-After, and its bound on buckets', () => {
    const w = new SlidingWindow(10, 60_000, 3);
    for (let i = 0; i < 10; i++) assert.ok(w.take('k', T0).allowed);
    const no = w.take('k', T0 + 15_000);
    assert.ok(!no.allowed);
    // 10 in this window: the next window must slide 1/10 of the way (6s) past its start (45s away).
    assert.equal(no.retryAfterMs, 45_000 + 6_000);
    assert.ok(!w.take('k', T0 + 60_000 + 5_999).allowed);
    assert.ok(w.take('k', T0 + 60_000 + 6_000).allowed);
    for (const key of ['a', 'b', 'c', 'd']) w.take(key, T0);
    assert.equal(w.size, 3);
  });

  it('log: the rule, its metadata (interpolated), the request', async () => {
    const h = harness();
    const policy = http(
      { on_http_request: [{ name: 'audit', actions: [{ type: 'log', config: { metadata: { path: '${req.url.path}', n: 1, tags: ['a'] } } }] }] },
      h,
    );
    assert.deepEqual(await policy.onRequest(connection(), request('/p')), { kind: 'continue' });
    assert.equal(h.logs.length, 1);
    const { line } = h.logs[0]!;
    assert.equal(line.policy_rule, 'audit');
    assert.equal(line.phase, 'on_http_request');
    assert.deepEqual(line.metadata, { path: '/p', n: 1, tags: ['a'] });
    assert.equal(line.url, 'https://app.example.com/p');
  });
});

describe('actions of the response phase', () => {
  it('add-headers and remove-headers change the response, conditions on res', async () => {
    const policy = http(
      onResponse(
        [
          { type: 'add-headers', config: { headers: { 'x-status': '${res.status_code}' } } },
          { type: 'remove-headers', config: { headers: ['server'] } },
        ],
        ['res.status_code >= 200 && res.content_type.startsWith("text/")'],
      ),
    );
    const res = response(200, [
      ['Server', 'nginx'],
      ['Content-Type', 'text/html'],
    ]);
    assert.deepEqual(policy.onResponse(connection(), request(), res), { kind: 'continue' });
    assert.deepEqual(res.headers, [
      ['Content-Type', 'text/html'],
      ['x-status', '200'],
    ]);
    const json = response(200, [['content-type', 'application/json']]);
    policy.onResponse(connection(), request(), json);
    assert.deepEqual(json.headers, [['content-type', 'application/json']]);
  });

  it('custom-response replaces the response', () => {
    const policy = http(
      onResponse([{ type: 'custom-response', config: { status_code: 502, content: 'upstream said ${res.status_code}' } }], ['res.status_code >= 500']),
    );
    const r = responded(policy.onResponse(connection(), request(), response(503)));
    assert.deepEqual([r.status, r.body], [502, 'upstream said 503']);
    assert.equal(policy.onResponse(connection(), request(), response(200)).kind, 'continue');
  });

  it('compress-response gives its algorithms, or all of them', () => {
    assert.deepEqual(
      http(onResponse([{ type: 'compress-response', config: { algorithms: ['br', 'gzip'] } }])).onResponse(connection(), request(), response()),
      {
        kind: 'continue',
        compress: ['br', 'gzip'],
      },
    );
    assert.deepEqual(http(onResponse([{ type: 'compress-response' }])).onResponse(connection(), request(), response()), {
      kind: 'continue',
      compress: ['gzip', 'deflate', 'br', 'compress'],
    });
  });

  it('an expression that fails is an error', () => {
    const decision = http(onResponse([{ type: 'log' }], ["res.headers['x-nope'][0] == ''"])).onResponse(connection(), request(), response());
    assert.equal(decision.kind, 'error');
  });

  it('a request-only policy leaves responses alone, and the other way round', async () => {
    assert.deepEqual(http(onRequest([{ type: 'deny' }], ['false'])).onResponse(connection(), request(), response()), { kind: 'continue' });
    assert.deepEqual(await http(onResponse([{ type: 'log' }])).onRequest(connection(), request()), { kind: 'continue' });
  });
});

describe('the policy module', () => {
  it('inbound on requests, outbound on responses, with the old spellings', async () => {
    const h = harness();
    const policy = compileHttpPolicy(
      old({
        inbound: [
          {
            name: 'big posts',
            expressions: ["req.Method == 'POST' && req.ContentLength > 10000", "req.Headers['User-Agent'][0] == 'curl/8' && req.URL.startsWith('https://')"],
            actions: [{ type: 'deny', config: { status_code: 413 } }],
          },
          { name: 'geo', expressions: ["conn.Geo.CountryCode in ['CN', 'RU']"], actions: [{ type: 'deny', config: null }] },
        ],
        outbound: [
          {
            name: 'errors',
            expressions: ["res.StatusCode >= 500 && res.Headers['Content-Type'][0] == 'text/html'"],
            actions: [{ type: 'custom-response', config: { status_code: 500, content: 'sorry' } }],
          },
        ],
      }),
      h.deps,
    );
    assert.ok(policy);
    const post = request('/upload', [
      ['user-agent', 'curl/8'],
      ['content-length', '20000'],
    ]);
    post.method = 'POST';
    const r = responded(await policy.onRequest(connection(), post));
    assert.deepEqual([r.status, r.rule], [413, 'big posts']);
    assert.deepEqual(await policy.onRequest(connection(), request('/')), { kind: 'continue' }, 'no geo database: the country is empty');
    assert.equal(responded(policy.onResponse(connection(), request(), response(500, [['content-type', 'text/html']]))).body, 'sorry');
    assert.equal(policy.onResponse(connection(), request(), response(200)).kind, 'continue');
  });
});

describe('TCP', () => {
  it('on_tcp_connect: restrict-ips, deny, log', () => {
    const ipp = newId('ipp');
    const h = harness({ ipPolicy: (id) => (id === ipp ? { allow: [], deny: ['10.9.0.0/16'] } : undefined) });
    const policy = compileTcpPolicy(
      doc(
        [
          'on_tcp_connect:',
          '  - name: audit',
          '    actions:',
          '      - type: log',
          '        config: { metadata: { ip: "${conn.client_ip}" } }',
          '  - name: office',
          '    actions:',
          '      - type: restrict-ips',
          '        config:',
          '          allow: [10.0.0.0/8]',
          `          ip_policies: [${ipp}]`,
          '  - name: no port 22',
          '    expressions: ["conn.client_port == 22"]',
          '    actions: [{ type: deny }]',
        ].join('\n'),
      ),
      h.deps,
    );
    assert.ok(policy);
    const tcp = (ip: string) => ({ ...connection(ip, 'tcp'), endpoint: { ...connection(ip, 'tcp').endpoint, protocol: 'tcp' as const } });
    assert.deepEqual(policy.onConnect(tcp('10.1.2.3')), { kind: 'allow' });
    assert.deepEqual(policy.onConnect(tcp('10.9.2.3')), { kind: 'deny', rule: 'office', action: 'restrict-ips' });
    assert.deepEqual(policy.onConnect(tcp('192.0.2.1')), { kind: 'deny', rule: 'office', action: 'restrict-ips' });
    assert.deepEqual(policy.onConnect({ ...tcp('10.1.2.3'), clientPort: 22 }), { kind: 'deny', rule: 'no port 22', action: 'deny' });
    assert.equal(h.logs.length, 4);
    assert.deepEqual(h.logs[0]!.line.metadata, { ip: '10.1.2.3' });
  });

  it('the policy module: inbound on connect; an expression error', () => {
    const policy = compileTcpPolicy(
      old({ inbound: [{ name: 'office only', expressions: ["!inCidrRange(conn.client_ip, '203.0.113.0/24')"], actions: [{ type: 'deny', config: null }] }] }),
      harness().deps,
    );
    assert.ok(policy);
    assert.deepEqual(policy.onConnect(connection('203.0.113.5', 'tcp')), { kind: 'allow' });
    assert.deepEqual(policy.onConnect(connection('198.51.100.5', 'tcp')), { kind: 'deny', rule: 'office only', action: 'deny' });
    const failing = compileTcpPolicy(
      doc({ on_tcp_connect: [{ expressions: ['inCidrRange(conn.client_ip, endpoint.host)'], actions: [{ type: 'deny' }] }] }),
      harness().deps,
    );
    const decision = failing!.onConnect(connection('203.0.113.5', 'tcp'));
    assert.equal(decision.kind, 'error');
    assert.match((decision as { problem: string }).problem, /not a CIDR/);
  });

  it('the policy module’s outbound on TCP: its log rules run when the connection ends, not before', () => {
    const h = harness();
    const policy = compileTcpPolicy(
      old({
        outbound: [{ name: 'closed', expressions: ["conn.client_ip == '203.0.113.5'"], actions: [{ type: 'log', config: { metadata: { event: 'closed' } } }] }],
      }),
      h.deps,
    );
    assert.ok(policy, 'outbound rules alone are a policy to run');
    assert.deepEqual(policy.onConnect(connection('203.0.113.5', 'tcp')), { kind: 'allow' });
    assert.equal(h.logs.length, 0);
    policy.onClose(connection('198.51.100.1', 'tcp'));
    assert.equal(h.logs.length, 0, 'the rule’s expression is false for this connection');
    policy.onClose(connection('203.0.113.5', 'tcp'));
    assert.equal(h.logs.length, 1);
    assert.deepEqual(h.logs[0]!.line.metadata, { event: 'closed' });
  });
});

describe('jwt-validation', () => {
  let server: Server;
  let base: string;
  let fetches = 0;
  let keys: { keys: JWK[] } = { keys: [] };
  let privateKey: CryptoKey;
  let otherKey: CryptoKey;
  let ecKey: CryptoKey;
  const issuer = 'https://issuer.example.com/';
  const audience = 'api://default';

  before(async () => {
    const pair = await generateKeyPair('RS256', { extractable: true });
    privateKey = pair.privateKey;
    otherKey = (await generateKeyPair('RS256')).privateKey;
    ecKey = (await generateKeyPair('ES256')).privateKey;
    keys = { keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] };
    server = createServer((req, res) => {
      fetches++;
      if (req.url === '/jwks.json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(keys));
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const policyYaml = (jku: string, algorithms = ['RS256']) =>
    [
      'on_http_request:',
      '  - actions:',
      '      - type: jwt-validation',
      '        config:',
      '          issuer:',
      '            allow_list:',
      `              - value: ${issuer}`,
      '          audience:',
      '            allow_list:',
      `              - value: ${audience}`,
      '          http:',
      '            tokens:',
      '              - type: jwt',
      '                method: header',
      '                name: Authorization',
      '                prefix: "Bearer "',
      '          jws:',
      '            allowed_algorithms:',
      ...algorithms.map((alg) => `              - ${alg}`),
      '            keys:',
      '              sources:',
      '                additional_jkus:',
      `                  - ${jku}`,
    ].join('\n');

  const sign = (claims: Record<string, unknown> = {}, { alg = 'RS256', key = privateKey, kid = 'k1', exp = T0 / 1000 + 3600 } = {}) =>
    new SignJWT({ ...claims })
      .setProtectedHeader({ alg, kid, typ: 'JWT' })
      .setIssuer((claims.iss as string) ?? issuer)
      .setAudience((claims.aud as string) ?? audience)
      .setIssuedAt(T0 / 1000 - 10)
      .setExpirationTime(exp)
      .sign(key);

  const bearer = (token: string) => request('/api', [['Authorization', `Bearer ${token}`]]);

  it('lets a valid token through and refuses the others with 401 and WWW-Authenticate', async () => {
    fetches = 0;
    const policy = http(policyYaml(`${base}/jwks.json`));
    assert.deepEqual(await policy.onRequest(connection(), bearer(await sign())), { kind: 'continue' });

    const refusal = async (req: PolicyRequest) => {
      const r = responded(await policy.onRequest(connection(), req));
      assert.equal(r.status, 401);
      assert.equal(r.action, 'jwt-validation');
      return headerValues(r.headers, 'www-authenticate')[0]!;
    };
    assert.equal(await refusal(request('/api')), 'Bearer', 'missing token');
    assert.equal(await refusal(request('/api', [['Authorization', 'Basic abc']])), 'Bearer', 'no Bearer prefix');
    assert.match(await refusal(bearer(await sign({ iss: 'https://evil.example.com/' }))), /invalid_token.*issuer/);
    assert.match(await refusal(bearer(await sign({ aud: 'api://other' }))), /invalid_token.*audience/);
    assert.match(await refusal(bearer(await sign({}, { exp: T0 / 1000 - 60 }))), /invalid_token.*expired/);
    assert.match(await refusal(bearer(await sign({}, { alg: 'ES256', key: ecKey }))), /invalid_token.*algorithm/);
    assert.match(await refusal(bearer(await sign({}, { key: otherKey }))), /invalid_token.*signature/);
    assert.match(await refusal(bearer('not.a.jwt')), /invalid_token/);
    assert.equal(fetches, 1, 'the JWKS is fetched once and cached');
  });

  it('fetches the JWKS again for a key id it does not have, past the cooldown', async () => {
    fetches = 0;
    const h = harness();
    const policy = http(policyYaml(`${base}/jwks.json`), h);
    assert.equal((await policy.onRequest(connection(), bearer(await sign()))).kind, 'continue');
    const rotated = await generateKeyPair('RS256', { extractable: true });
    keys = { keys: [...keys.keys, { ...(await exportJWK(rotated.publicKey)), kid: 'k2', alg: 'RS256' }] };
    h.clock.now += 31_000;
    assert.equal((await policy.onRequest(connection(), bearer(await sign({}, { key: rotated.privateKey, kid: 'k2' })))).kind, 'continue');
    assert.equal(fetches, 2);
  });

  it('keys that cannot be fetched are an error decision', async () => {
    const policy = http(policyYaml(`${base}/missing.json`));
    const decision = await policy.onRequest(connection(), bearer(await sign()));
    assert.equal(decision.kind, 'error');
    assert.match((decision as { problem: string }).problem, /404/);
  });

  it('uses deps.fetch', async () => {
    let called = 0;
    const h = harness({
      fetch: async (input) => {
        called++;
        assert.equal(String(input), 'https://keys.example.com/jwks.json');
        return new Response(JSON.stringify(keys), { status: 200, headers: { 'content-type': 'application/json' } });
      },
    });
    const policy = http(policyYaml('https://keys.example.com/jwks.json'), h);
    assert.deepEqual(await policy.onRequest(connection(), bearer(await sign())), { kind: 'continue' });
    assert.equal(called, 1);
  });

  it('reads a token from a buffered form body', async () => {
    const yaml = policyYaml(`${base}/jwks.json`)
      .replace('method: header', 'method: body')
      .replace('name: Authorization', 'name: access_token')
      .replace('prefix: "Bearer "', 'prefix: ""');
    const policy = http(yaml);
    assert.equal(policy.needsRequestBody, true);
    const token = await sign();
    const form = request('/api', [['content-type', 'application/x-www-form-urlencoded']], { method: 'POST', body: `access_token=${token}&x=1` });
    assert.deepEqual(await policy.onRequest(connection(), form), { kind: 'continue' });
    assert.equal((await policy.onRequest(connection(), request('/api', [], { method: 'POST' }))).kind, 'respond');
  });
});

describe("policies from ngrok's documentation, as written", () => {
  it('blocks bots by user agent, with the agent in the answer', async () => {
    const policy = http(
      [
        'on_http_request:',
        '  - expressions:',
        '      - "req.user_agent.matches(\'(?i).*(bot|crawler|spider|closer).*\')"',
        '    actions:',
        '      - type: custom-response',
        '        config:',
        '          content: ${req.user_agent} is not allowed',
        '          status_code: 403',
      ].join('\n'),
    );
    const r = responded(await policy.onRequest(connection(), request('/', [['user-agent', 'Googlebot/2.1']])));
    assert.deepEqual([r.status, r.body], [403, 'Googlebot/2.1 is not allowed']);
    assert.equal((await policy.onRequest(connection(), request('/', [['user-agent', 'Mozilla/5.0']]))).kind, 'continue');
  });

  it('rate limits by API key', async () => {
    const policy = http(
      [
        'on_http_request:',
        '  - actions:',
        '      - type: rate-limit',
        '        config:',
        '          name: Only allow 30 requests per minute',
        '          algorithm: sliding_window',
        '          capacity: 30',
        '          rate: 60s',
        '          bucket_key:',
        "            - req.headers['x-api-key']",
      ].join('\n'),
    );
    const key = (k: string) => request('/', [['x-api-key', k]]);
    for (let i = 0; i < 30; i++) assert.equal((await policy.onRequest(connection(), key('k1'))).kind, 'continue');
    assert.equal(responded(await policy.onRequest(connection(), key('k1'))).status, 429);
    assert.equal((await policy.onRequest(connection(), key('k2'))).kind, 'continue');
  });

  it('adds headers, rewrites product URLs, and compresses responses', async () => {
    const policy = http(
      [
        'on_http_request:',
        '  - actions:',
        '      - type: add-headers',
        '        config:',
        '          headers:',
        '            is-ngrok: "1"',
        '            country: ${conn.geo.country_code}',
        '  - expressions:',
        '      - "req.url.path.startsWith(\'/products/\')"',
        '    actions:',
        '      - type: url-rewrite',
        '        config:',
        '          from: /products/([0-9]+)',
        '          to: /items?id=$1',
        'on_http_response:',
        '  - actions:',
        '      - type: compress-response',
        '        config:',
        '          algorithms:',
        '            - gzip',
        '            - br',
      ].join('\n'),
    );
    const req = request('/products/7');
    assert.deepEqual(await policy.onRequest(connection(), req), { kind: 'continue' });
    assert.equal(req.url, '/items?id=7');
    assert.deepEqual(headerValues(req.headers, 'is-ngrok'), ['1']);
    assert.deepEqual(headerValues(req.headers, 'country'), ['']);
    assert.deepEqual(policy.onResponse(connection(), req, response()), { kind: 'continue', compress: ['gzip', 'br'] });
  });

  it('restricts by IP and sends a maintenance page for /admin', async () => {
    const policy = http(
      [
        'on_http_request:',
        '  - actions:',
        '      - type: restrict-ips',
        '        config:',
        '          enforce: true',
        '          allow:',
        '            - 110.0.0.0/8',
        '            - 220.12.0.0/16',
        '  - expressions: ["req.url.path.startsWith(\'/admin\')"]',
        '    actions:',
        '      - type: custom-response',
        '        config:',
        '          status_code: 503',
        '          content: "<html><body><h1>Down for maintenance</h1></body></html>"',
        '          headers:',
        '            content-type: text/html',
      ].join('\n'),
    );
    assert.equal(responded(await policy.onRequest(connection('203.0.113.7'), request('/'))).status, 403);
    assert.equal((await policy.onRequest(connection('110.1.2.3'), request('/'))).kind, 'continue');
    const page = responded(await policy.onRequest(connection('220.12.9.9'), request('/admin/users')));
    assert.deepEqual([page.status, headerValues(page.headers, 'content-type')], [503, ['text/html']]);
  });
});
