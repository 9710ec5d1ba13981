import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import { throwsApiError } from '../helpers/assertions.js';
import { newId } from '../../src/core/ids.js';
import { checkExpression } from '../../src/edge-config/traffic-policy/cel.js';
import {
  DOCUMENT_LIMITS,
  LIMITS,
  MAX_DOCUMENT_BYTES,
  checkEndpointPolicy,
  checkTrafficPolicyDocument,
  documentPolicyIds,
  policyIdsOf,
} from '../../src/edge-config/traffic-policy/traffic-policy.js';

const rule = (over: Record<string, unknown> = {}) => ({ name: 'r1', expressions: [] as unknown[], actions: [{ type: 'deny' }] as unknown[], ...over });
const inbound = (...rules: unknown[]) => ({ inbound: rules });
const policy = (body: unknown) => () => checkEndpointPolicy(body, 'tcp');
const doc = (value: string) => () => checkTrafficPolicyDocument(value, 'tcp');
const ippA = newId('ipp');
const ippB = newId('ipp');

describe('checkExpression (tcp)', () => {
  it('accepts boolean expressions over the declared variables and functions', () => {
    for (const expression of [
      'conn.client_ip == "10.0.0.1"',
      'conn.client_port > 1024 && conn.server_port == 443',
      'conn.geo.country_code in ["DE", "FR"] || conn.geo.latitude > 45.5',
      'conn.ts.start < time.now',
      'endpoint.port == 22 && endpoint.protocol == "tcp" && endpoint.host.endsWith(".example.com")',
      'inCidrRange(conn.client_ip, "10.0.0.0/8")',
      'inCidrRanges(conn.client_ip, ["10.0.0.0/8", "192.168.0.0/16"])',
      '!inCidrRange(conn.server_ip, "fd00::/8")',
    ])
      assert.deepEqual(checkExpression(expression, 'tcp'), { ok: true }, expression);
  });

  it('refuses an unknown field, naming the fields there are, at its column', () => {
    const result = checkExpression('conn.nope == 1', 'tcp');
    assert.equal(result.ok, false);
    assert.ok(!result.ok);
    assert.equal(result.position, 'line 1, column 6');
    assert.match(result.reason, /'conn' has no field 'nope'/);
    assert.match(result.reason, /client_ip/);
  });

  it('refuses thousands of unary operators in a row with a reason a user can act on', () => {
    for (const expression of [`${'!'.repeat(4000)}true`, `${'-'.repeat(4000)}1 == 1`]) {
      const result = checkExpression(expression, 'tcp');
      assert.ok(!result.ok);
      assert.match(result.reason, /nests operators too deeply/);
    }
  });

  it('refuses an unknown variable', () => {
    const result = checkExpression('req.method == "GET"', 'tcp');
    assert.ok(!result.ok);
    assert.match(result.reason, /unknown variable 'req'; the variables here are conn, endpoint, time/);
  });

  it('refuses type errors, syntax errors and results that are not bool', () => {
    const typeError = checkExpression('conn.client_port == "x"', 'tcp');
    assert.ok(!typeError.ok);
    assert.match(typeError.reason, /int and string/);
    const syntax = checkExpression('conn.client_ip ==', 'tcp');
    assert.ok(!syntax.ok);
    assert.equal(syntax.position, 'line 1, column 18');
    const notBool = checkExpression('conn.client_port + 1', 'tcp');
    assert.ok(!notBool.ok);
    assert.match(notBool.reason, /type int.*must give a bool/);
  });

  it('refuses a CIDR function called with the wrong types', () => {
    const result = checkExpression('inCidrRange(conn.client_port, "x")', 'tcp');
    assert.ok(!result.ok);
    assert.match(result.reason, /inCidrRange\(string, string\)/);
    assert.equal(checkExpression('inCidrRanges(conn.client_ip, "10.0.0.0/8")', 'tcp').ok, false);
  });

  it('counts lines and columns from 1', () => {
    const result = checkExpression('conn.client_ip == "a" &&\n  conn.geo.cty == "x"', 'tcp');
    assert.ok(!result.ok);
    assert.equal(result.position, 'line 2, column 12');
  });
});

describe('checkEndpointPolicy (the policy module)', () => {
  it('normalizes a valid policy: enabled true, config null, outbound null, inbound []', () => {
    assert.deepEqual(checkEndpointPolicy({}, 'tcp'), { enabled: true, inbound: [], outbound: null });
    assert.deepEqual(checkEndpointPolicy({ enabled: false, inbound: null, outbound: null }, 'tcp'), { enabled: false, inbound: [], outbound: null });
    const body = {
      inbound: [
        { name: 'only-office', expressions: ['!inCidrRange(conn.client_ip, "203.0.113.0/24")'], actions: [{ type: 'deny' }] },
        { name: 'log-all', actions: [{ type: 'log', config: { metadata: { team: 'ops' } } }] },
        {
          name: 'ips',
          expressions: ['conn.server_port == 22'],
          actions: [{ type: 'restrict-ips', config: { enforce: true, allow: ['10.0.0.0/8', '2001:db8::/32'], deny: ['10.9.0.0/16'], ip_policies: [ippA] } }],
        },
      ],
      outbound: [{ name: 'log-out', expressions: [], actions: [{ type: 'log', config: null }] }],
    };
    assert.deepEqual(checkEndpointPolicy(body, 'tcp'), {
      enabled: true,
      inbound: [
        { name: 'only-office', expressions: ['!inCidrRange(conn.client_ip, "203.0.113.0/24")'], actions: [{ type: 'deny', config: null }] },
        { name: 'log-all', expressions: [], actions: [{ type: 'log', config: { metadata: { team: 'ops' } } }] },
        body.inbound[2],
      ],
      outbound: [{ name: 'log-out', expressions: [], actions: [{ type: 'log', config: null }] }],
    });
  });

  it('accepts deny with an empty config and restrict-ips with only ip_policies', () => {
    checkEndpointPolicy(inbound(rule({ actions: [{ type: 'deny', config: {} }] })), 'tcp');
    checkEndpointPolicy(inbound(rule({ actions: [{ type: 'restrict-ips', config: { ip_policies: [ippA] } }] })), 'tcp');
  });

  it('returns the IP policies that restrict-ips actions name, each once', () => {
    const checked = checkEndpointPolicy(
      {
        inbound: [
          rule({ actions: [{ type: 'restrict-ips', config: { ip_policies: [ippA, ippB] } }] }),
          rule({ name: 'r2', actions: [{ type: 'restrict-ips', config: { allow: ['10.0.0.0/8'], ip_policies: [ippA] } }] }),
        ],
      },
      'tcp',
    );
    assert.deepEqual(policyIdsOf(checked), [ippA, ippB]);
    assert.deepEqual(policyIdsOf(checkEndpointPolicy({}, 'tcp')), []);
  });

  it('2200: an unknown variable, naming the rule, the expression and the position', () => {
    const error = throwsApiError(policy(inbound(rule({ name: 'block-bad', expressions: ['conn.nope == 1'] }))), 2200);
    assert.match(error.message, /^inbound, rule 'block-bad': expression 'conn\.nope == 1' is invalid at line 1, column 6: 'conn' has no field 'nope'/);
  });

  it('2200: a type error, a syntax error and a non-bool expression', () => {
    assert.match(throwsApiError(policy(inbound(rule({ expressions: ['conn.client_port == "x"'] }))), 2200).message, /line 1, column 1: .*int and string/);
    assert.match(
      throwsApiError(policy(inbound(rule({ expressions: ['conn.client_ip =='] }))), 2200).message,
      /'conn\.client_ip ==' is invalid at line 1, column 18/,
    );
    assert.match(throwsApiError(policy(inbound(rule({ expressions: ['conn.client_port + 1'] }))), 2200).message, /must give a bool/);
    assert.match(throwsApiError(policy(inbound(rule({ expressions: ['inCidrRange(conn.client_port, "x")'] }))), 2200).message, /inCidrRange/);
  });

  it('2200: a long expression is cut in the message', () => {
    const expression = `${'conn.client_port == 1 && '.repeat(10)}conn.nope`;
    const error = throwsApiError(policy(inbound(rule({ expressions: [expression] }))), 2200);
    const shown = /expression '(.*)' is invalid/.exec(error.message)?.[1] ?? '';
    assert.equal(shown.length, 80);
    assert.ok(shown.endsWith('...'));
  });

  it('2201: an unknown action type, listing the TCP types', () => {
    const error = throwsApiError(policy(inbound(rule({ actions: [{ type: 'custom-response' }] }))), 2201);
    assert.match(
      error.message,
      /rule 'r1': action type 'custom-response' does not exist; the types here are close-connection, deny, forward-internal, log, restrict-ips/,
    );
  });

  it('2202: deny is not allowed outbound', () => {
    const error = throwsApiError(policy({ outbound: [rule({ name: 'no-out' })] }), 2202);
    assert.match(error.message, /^outbound, rule 'no-out': action 'deny' is not allowed here; the actions allowed here are log\.$/);
  });

  it('2203: configs that do not fit their action', () => {
    const config = (type: string, value: unknown) => throwsApiError(policy(inbound(rule({ actions: [{ type, config: value }] }))), 2203).message;
    assert.match(config('restrict-ips', { allow: ['10.0.0/8'] }), /allow\[0\] '10\.0\.0\/8', which is not a valid IPv4 or IPv6 CIDR/);
    assert.match(
      config('restrict-ips', { deny: ['10.1.2.3/8'] }),
      /deny\[0\] '10\.1\.2\.3\/8', which is not the lowest address of its range; did you mean '10\.0\.0\.0\/8'/,
    );
    assert.match(config('restrict-ips', { allow: ['192.0.2.7'] }), /allow\[0\] '192\.0\.2\.7' with no mask; add one, e\.g\. '192\.0\.2\.7\/32'/);
    assert.match(config('restrict-ips', { allow: [] }), /at least one of allow, deny or ip_policies/);
    assert.match(config('restrict-ips', null), /at least one of allow, deny or ip_policies/);
    assert.match(config('restrict-ips', { ip_policies: ['ipr_1'] }), /ip_policies\[0\] 'ipr_1', which is not an IP policy id/);
    assert.match(config('restrict-ips', { allow: ['10.0.0.0/8'], enforce: 'yes' }), /'enforce'.*true or false/);
    assert.match(config('restrict-ips', { allow: '10.0.0.0/8' }), /'allow' of type a string; it must be a list of CIDRs/);
    assert.match(config('restrict-ips', { allow: ['10.0.0.0/8'], block: [] }), /unknown key 'block'; the keys are enforce, allow, deny, ip_policies/);
    assert.match(config('deny', { status_code: 403 }), /the config of action 'deny' must be empty on a TCP edge; got key 'status_code'/);
    assert.match(config('log', { metadata: 'x' }), /'metadata' of type a string; it must be an object/);
    assert.match(config('log', { format: 'json' }), /unknown key 'format'; the keys are metadata/);
  });

  it('2206: a rule without actions', () => {
    assert.match(throwsApiError(policy(inbound(rule({ actions: [] }))), 2206).message, /^inbound, rule 'r1' has no action/);
    throwsApiError(policy(inbound({ name: 'bare' })), 2206);
  });

  it('2208: a rule without a name', () => {
    assert.match(throwsApiError(policy(inbound(rule(), rule({ name: '' }))), 2208).message, /^inbound, rule 2 has no name/);
    throwsApiError(policy(inbound({ actions: [{ type: 'deny' }] })), 2208);
    throwsApiError(policy({ outbound: [rule({ name: '   ', actions: [{ type: 'log' }] })] }), 2208);
  });

  it('2209: more rules than the limit', () => {
    const rules = Array.from({ length: 1000 }, (_, i) => rule({ name: `r${i}` }));
    assert.match(throwsApiError(policy({ inbound: rules }), 2209).message, /^inbound has 1000 rules; at most 100 are allowed\.$/);
    checkEndpointPolicy({ inbound: rules.slice(0, LIMITS.rulesPerPhase) }, 'tcp');
  });

  it('2210: more expressions or actions than the limit', () => {
    const expressions = Array.from({ length: LIMITS.expressionsPerRule + 1 }, () => 'true');
    assert.match(throwsApiError(policy(inbound(rule({ expressions }))), 2210).message, /has 33 expressions; at most 32/);
    const actions = Array.from({ length: LIMITS.actionsPerRule + 1 }, () => ({ type: 'log' }));
    assert.match(throwsApiError(policy(inbound(rule({ actions }))), 2210).message, /has 33 actions; at most 32/);
  });

  it('2211: an expression longer than the limit', () => {
    const expression = `conn.client_ip == "${'a'.repeat(10_000 - 20)}"`;
    assert.equal(expression.length, 10_000);
    assert.match(
      throwsApiError(policy(inbound(rule({ expressions: [expression] }))), 2211).message,
      /rule 'r1': an expression has 10000 characters; at most 4096/,
    );
  });

  it('215: wrong shapes name the field', () => {
    assert.match(throwsApiError(policy([]), 215).message, /'policy' must be an object/);
    assert.match(throwsApiError(policy({ enabled: 'yes' }), 215).message, /'policy\.enabled'/);
    assert.match(throwsApiError(policy({ inbound: {} }), 215).message, /'policy\.inbound' must be a list of rules/);
    assert.match(throwsApiError(policy({ rules: [] }), 215).message, /'policy\.rules' is not a field of a policy/);
    assert.match(throwsApiError(policy(inbound('deny')), 215).message, /'policy\.inbound\[0\]' must be an object/);
    assert.match(throwsApiError(policy(inbound(rule({ actions: 'deny' }))), 215).message, /'policy\.inbound\[0\]\.actions' must be a list/);
    assert.match(throwsApiError(policy(inbound(rule({ expressions: [1] }))), 215).message, /'policy\.inbound\[0\]\.expressions\[0\]' must be a string/);
    assert.match(
      throwsApiError(policy(inbound(rule({ actions: [{ kind: 'deny' }] }))), 215).message,
      /'policy\.inbound\[0\]\.actions\[0\]\.kind' is not a field/,
    );
    assert.match(throwsApiError(policy(inbound(rule({ actions: [{}] }))), 215).message, /'policy\.inbound\[0\]\.actions\[0\]\.type' is required/);
    assert.match(throwsApiError(policy(inbound(rule({ actions: [{ type: 'log', config: [] }] }))), 215).message, /config' must be an object/);
  });
});

describe('checkTrafficPolicyDocument (the traffic_policy module)', () => {
  const yamlDoc = `
on_tcp_connect:
  - name: office only
    expressions:
      - "!inCidrRange(conn.client_ip, '203.0.113.0/24')"
    actions:
      - type: deny
  - actions:
      - type: log
        config:
          metadata: { team: ops }
      - type: restrict-ips
        config:
          allow: [10.0.0.0/8]
          ip_policies: [${ippA}]
`;

  it('accepts a YAML document and a JSON one', () => {
    checkTrafficPolicyDocument(yamlDoc, 'tcp');
    const json = JSON.stringify({
      on_tcp_connect: [
        {
          expressions: ['inCidrRanges(conn.client_ip, ["10.0.0.0/8"])'],
          actions: [{ type: 'restrict-ips', config: { deny: ['10.1.0.0/16'], ip_policies: [ippB] } }],
        },
      ],
    });
    checkTrafficPolicyDocument(`  \n${json}`, 'tcp');
    checkTrafficPolicyDocument('{}', 'tcp');
    checkTrafficPolicyDocument('on_tcp_connect: []', 'tcp');
  });

  it('returns the IP policies the document names', () => {
    assert.deepEqual(documentPolicyIds(yamlDoc), [ippA]);
    assert.deepEqual(
      documentPolicyIds(JSON.stringify({ on_tcp_connect: [{ actions: [{ type: 'restrict-ips', config: { ip_policies: [ippB, ippA, ippB] } }] }] })),
      [ippB, ippA],
    );
    assert.deepEqual(documentPolicyIds('on_tcp_connect: []'), []);
  });

  it('2200 in a phase: names the phase, the rule (or its number) and the position', () => {
    const error = throwsApiError(doc('on_tcp_connect:\n  - expressions: ["conn.client_port == \\"x\\""]\n    actions: [{type: deny}]'), 2200);
    assert.match(error.message, /^on_tcp_connect, rule '#1': expression 'conn\.client_port == "x"' is invalid at line 1, column 1/);
    const named = throwsApiError(doc(JSON.stringify({ on_tcp_connect: [{ name: 'n', expressions: ['conn.nope'], actions: [{ type: 'deny' }] }] })), 2200);
    assert.match(named.message, /^on_tcp_connect, rule 'n': .*line 1, column 6/);
  });

  it('2201 and 2203 in a phase', () => {
    assert.match(
      throwsApiError(doc('on_tcp_connect: [{actions: [{type: redirect}]}]'), 2201).message,
      /^on_tcp_connect, rule '#1': action type 'redirect' does not exist/,
    );
    throwsApiError(doc('on_tcp_connect: [{actions: [{type: restrict-ips, config: {allow: [10.0.0.1/8]}}]}]'), 2203);
  });

  it('2206, 2209, 2210 and 2211 in a phase', () => {
    throwsApiError(doc('on_tcp_connect: [{name: x}]'), 2206);
    const many = JSON.stringify({ on_tcp_connect: Array.from({ length: LIMITS.rulesPerPhase + 1 }, () => ({ actions: [{ type: 'log' }] })) });
    assert.match(throwsApiError(doc(many), 2209).message, /^on_tcp_connect has 101 rules/);
    throwsApiError(doc(JSON.stringify({ on_tcp_connect: [{ expressions: Array(33).fill('true'), actions: [{ type: 'deny' }] }] })), 2210);
    throwsApiError(doc(JSON.stringify({ on_tcp_connect: [{ expressions: ['x'.repeat(5000)], actions: [{ type: 'deny' }] }] })), 2211);
  });

  it('2213: an unknown phase, listing the valid ones', () => {
    const error = throwsApiError(doc('on_http_request:\n  - actions: [{type: deny}]'), 2213);
    assert.match(error.message, /phase 'on_http_request' does not exist on this resource; the phases here are on_tcp_connect/);
  });

  it('2212: documents that are not policy documents', () => {
    assert.match(throwsApiError(doc('on_tcp_connect:\n  - actions: [\n'), 2212).message, /is not valid YAML at line \d+, column \d+/);
    assert.match(throwsApiError(doc('{"on_tcp_connect": [}'), 2212).message, /is not valid JSON/);
    assert.match(throwsApiError(doc('- a\n- b'), 2212).message, /must be a mapping of phases/);
    assert.match(throwsApiError(doc(''), 2212).message, /must be a mapping of phases/);
    assert.match(throwsApiError(doc('"just a string"'), 2212).message, /must be a mapping of phases/);
    assert.match(throwsApiError(doc('on_tcp_connect: {}'), 2212).message, /at on_tcp_connect must be a list of rules/);
    assert.match(
      throwsApiError(doc('on_tcp_connect: [{actions: [{type: deny}], id: 1}]'), 2212).message,
      /at on_tcp_connect\[0\]\.id is not a field of a rule/,
    );
    assert.match(throwsApiError(doc('on_tcp_connect: [{actions: [{type: deny, conf: {}}]}]'), 2212).message, /actions\[0\]\.conf is not a field of an action/);
    assert.match(throwsApiError(doc('on_tcp_connect: [{actions: deny}]'), 2212).message, /at on_tcp_connect\[0\]\.actions must be a list of actions/);
    assert.match(throwsApiError(doc('on_tcp_connect: [{name: 1, actions: [{type: deny}]}]'), 2212).message, /name must be a string/);
    assert.match(throwsApiError(doc('a: 1\na: 2'), 2212).message, /not valid YAML/);
    assert.match(throwsApiError(() => checkTrafficPolicyDocument(42 as unknown as string, 'tcp'), 2212).message, /must be a string/);
    const big = `on_tcp_connect: []\n#${'x'.repeat(MAX_DOCUMENT_BYTES)}`;
    assert.match(throwsApiError(doc(big), 2212).message, /bytes long; at most 262144/);
  });

  it('2212: a JSON document with a key given twice (JSON.parse would check only the last), and one over 256 KiB of UTF-8', () => {
    const phase = '"on_tcp_connect":[{"actions":[{"type":"restrict-ips","config":{"ip_policies":["ipp_' + '0'.repeat(27) + '"]}}]}]';
    assert.match(throwsApiError(() => checkTrafficPolicyDocument(`{${phase},"on_tcp_connect":[]}`, 'tcp'), 2212).message, /key given twice at line 1/);
    throwsApiError(() => checkTrafficPolicyDocument('{"on_tcp_connect":[{"actions":[{"type":"drop"}],"actions":[{"type":"log"}]}]}', 'tcp'), 2212);
    checkTrafficPolicyDocument(`{${phase}}`, 'tcp');
    const big = `{"on_tcp_connect":[{"name":"${'é'.repeat(140_000)}","actions":[{"type":"log"}]}]}`;
    assert.match(throwsApiError(() => checkTrafficPolicyDocument(big, 'tcp'), 2212).message, /bytes long/);
  });
});

describe("the bounds of a policy (1970 for a document's shape, 1971 for its CEL)", () => {
  const http = (value: string) => () => checkTrafficPolicyDocument(value, 'http');
  const tooComplex = (value: string, message: RegExp) => assert.match(throwsApiError(doc(value), 1970).message, message);
  const keys = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `k${i + from}: 0`).join(', ');
  const logWith = (metadata: string) => `on_tcp_connect: [{actions: [{type: log, config: {metadata: ${metadata}}}]}]\n`;

  it('accepts the largest policy of ordinary shape: both HTTP phases of 100 rules, as YAML and as indented JSON', () => {
    const rule = (i: number) => ({
      name: `rule ${i}`,
      expressions: [`req.path.startsWith('/api/${i}') && req.method == 'GET'`],
      actions: [{ type: 'add-headers', config: { headers: { 'x-a': '1', 'x-b': '2' } } }],
    });
    const rules = Array.from({ length: LIMITS.rulesPerPhase }, (_, i) => rule(i));
    const json = JSON.stringify({ on_http_request: rules, on_http_response: rules.map(({ name, actions }) => ({ name, actions })) }, null, 2);
    checkTrafficPolicyDocument(json, 'http');
    const yaml = stringify(JSON.parse(json));
    assert.ok(yaml.split('\n').length > 1500);
    checkTrafficPolicyDocument(yaml, 'http');
  });

  it(`tokens: more than ${DOCUMENT_LIMITS.tokens} are refused before the document is parsed (the review's 31,000 keys)`, () => {
    const short = Array.from({ length: 31_000 }, (_, i) => `${i.toString(36)}: 0`).join(', ');
    tooComplex(
      logWith(`{${short}}`),
      /^traffic_policy value has more than 20000 tokens \(keys, values, punctuation, indentation, comments and line breaks each count\)/,
    );
    tooComplex(`${'\n'.repeat(20_001)}on_tcp_connect: []`, /more than 20000 tokens/);
    tooComplex(
      `{"on_tcp_connect": [{"actions": [{"type": "log", "config": {"metadata": {${Array.from({ length: 6000 }, (_, i) => `"k${i}":0`).join(',')}}}}]}]}`,
      /more than 20000 tokens/,
    );
  });

  it(`nesting: more than ${DOCUMENT_LIMITS.depth} levels of lists and mappings, in flow or block style, at the place`, () => {
    tooComplex(logWith(`${'['.repeat(40)}${']'.repeat(40)}`), /nests lists and mappings more than 32 levels deep at line 1, column \d+/);
    const block = Array.from({ length: 40 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n');
    tooComplex(`on_tcp_connect: []\nx:\n${block} 1\n`, /nests lists and mappings more than 32 levels deep at line 3\d, column \d+/);
    // Told from the tokens, before the parser recurses once per level (and overflows at some thousands).
    tooComplex(`on_tcp_connect:\n${'- '.repeat(9000)}x\n`, /more than 32 levels deep at line 2, column 6\d/);
    tooComplex(`on_tcp_connect:\n${'? '.repeat(9000)}x\n`, /more than 32 levels deep at line 2/);
    // 32 levels, the document's mapping the first, are fine as far as the shape goes.
    const metadata = `${'['.repeat(25)}${']'.repeat(25)}`;
    checkTrafficPolicyDocument(logWith(`{a: ${metadata}}`), 'tcp');
  });

  it(`anchors, aliases and tags: at most ${DOCUMENT_LIMITS.anchors} of each, the one too many named by its place`, () => {
    const list = (item: (i: number) => string) => logWith(`{a: [${Array.from({ length: 101 }, (_, i) => item(i)).join(', ')}]}`);
    tooComplex(
      list((i) => `&a${i} x`),
      /more than 100 anchors \(&name\); the one at line 1, column \d+ is one too many/,
    );
    tooComplex(`x: &a 1\n${list(() => '*a')}`, /more than 100 aliases \(\*name\)/);
    tooComplex(
      list(() => '!!str x'),
      /more than 100 tags \(!tag\)/,
    );
    tooComplex(`on_tcp_connect: ${'&a '.repeat(12_000)}[]`, /more than 100 anchors/);
  });

  it(`values: more than ${DOCUMENT_LIMITS.values}, counting again each one an alias repeats`, () => {
    const items = Array.from({ length: 200 }, () => '0').join(', ');
    const value = `x: &big [${items}]\n${logWith(`{a: [${Array(60).fill('*big').join(', ')}]}`)}`;
    tooComplex(value, /has more than 10000 values \(keys, scalars, lists and mappings, and again each one an alias repeats\) at line 2, column \d+/);
  });

  it(`keys per mapping: more than ${DOCUMENT_LIMITS.keysPerMapping}, and a key given twice in a large mapping found at its place`, () => {
    tooComplex(logWith(`{${keys(1001)}}`), /has a mapping of 1001 keys at line 1, column \d+; at most 1000 are allowed in one/);
    const twice = logWith(`{${keys(999)}, k0: 1}`);
    const column = twice.lastIndexOf('k0:') + 1;
    assert.match(throwsApiError(doc(twice), 2212).message, new RegExp(`not valid YAML at line 1, column ${column}: Map keys must be unique`));
  });

  it(`1971: the CEL of one policy, rule expressions and bucket keys together, is at most ${LIMITS.expressionsLength} characters`, () => {
    const long = `conn.client_port > 0${' && conn.client_port > 0'.repeat(160)}`;
    assert.ok(long.length < LIMITS.expressionLength && long.length * 9 > LIMITS.expressionsLength);
    const rules = Array.from({ length: 9 }, (_, i) => rule({ name: `r${i}`, expressions: [long] }));
    assert.match(
      throwsApiError(policy(inbound(...rules)), 1971).message,
      /^inbound, rule 'r8': here the CEL expressions of the policy .* go over 32768 characters together; at most 32768 are allowed in one policy\.$/,
    );
    checkEndpointPolicy(inbound(...rules.slice(0, 8)), 'tcp');
    // The budget is the policy's: both directions, and every phase of a document, draw on it.
    assert.equal(
      throwsApiError(policy({ inbound: rules.slice(0, 5), outbound: rules.slice(5).map((r) => ({ ...r, actions: [{ type: 'log' }] })) }), 1971).code,
      1971,
    );
    const key = `req.headers['x'][0]${" + req.headers['x'][0]".repeat(170)}`;
    const rateLimit = { type: 'rate-limit', config: { capacity: 10, rate: '60s', bucket_key: Array(10).fill(key) } };
    const document = JSON.stringify({ on_http_request: [{ actions: [rateLimit] }] });
    assert.match(throwsApiError(http(document), 1971).message, /^on_http_request, rule '#1': here the CEL expressions/);
  });

  it(`1972: the action configs of one policy hold at most ${LIMITS.configValues} values together, counting keys`, () => {
    const cidrs = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `10.${(i + from) >> 16}.${((i + from) >> 8) & 255}.${(i + from) & 255}/32`);
    const restrict = (n: number, from = 0) => ({ type: 'restrict-ips', config: { allow: cidrs(n, from) } });
    // One config of 9,000 CIDRs is 9,003 values (the object, its key, the list and the items).
    assert.equal(checkEndpointPolicy(inbound(rule({ actions: [restrict(9_000)] })), 'tcp').inbound[0]!.actions[0]!.type, 'restrict-ips');
    assert.match(
      throwsApiError(policy(inbound(rule({ actions: [restrict(10_000)] }))), 1972).message,
      /^inbound, rule 'r1': here the action configs of the policy go over 10000 values together \(keys, strings, numbers, booleans, lists and objects\); at most 10000 are allowed in one policy/,
    );
    // Drawn from by every rule of both directions (a document is bounded before, by its values: 1970).
    const rules = Array.from({ length: 3 }, (_, i) => rule({ name: `in${i}`, actions: [restrict(2_000, i * 2_000)] }));
    const metadata = Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`k${i}`, i]));
    const outbound = Array.from({ length: 3 }, (_, i) => rule({ name: `out${i}`, actions: [{ type: 'log', config: { metadata } }] }));
    assert.match(throwsApiError(policy({ inbound: rules, outbound }), 1972).message, /^outbound, rule 'out0': /);
  });

  it('2203: a bucket key longer than an expression may be', () => {
    const key = `req.method${' + req.method'.repeat(400)}`;
    const document = JSON.stringify({ on_http_request: [{ actions: [{ type: 'rate-limit', config: { capacity: 10, rate: '60s', bucket_key: [key] } }] }] });
    assert.match(throwsApiError(http(document), 2203).message, /has 'bucket_key\[0\]' of 5210 characters; at most 4096 are allowed/);
  });
});
