// Traffic policies of TCP edges through the API, on both stores: the `policy` module set by create,
// PATCH and PUT (bare and wrapped) and echoed normalized; the `traffic_policy` module's JSON and YAML
// documents echoed byte for byte; every kind of invalid policy refused through create, PUT and PATCH
// with its status, its code and a message naming the direction or phase, the rule, the expression
// and its position, with nothing stored; the IP policies that restrict-ips names checked against the
// account and held against deletion; and the two modules excluding each other. The validator's own
// corner cases are unit-tested in test/unit/traffic-policy.test.ts.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachStore, type Api } from '../helpers/harness.js';
import { assertError, created } from '../helpers/assertions.js';

type Module = 'policy' | 'traffic_policy';
const EDGES = '/edges/tcp';
const count = async (api: Api) => (await api.get(EDGES)).json.tcp_edges.length as number;
const deny = [{ type: 'deny' }];
const rule = (name: string, expressions: string[], actions: unknown[] = deny) => ({ name, expressions, actions });
const ipPolicy = async (api: Api) => (await created(api, '/ip_policies', {})).id as string;

/** The error, and every part its message must mention. */
function assertRefused(res: Parameters<typeof assertError>[0], status: number, code: string, mentions: (string | RegExp)[]) {
  assertError(res, status, code);
  for (const m of mentions) {
    if (typeof m === 'string') assert.ok(res.json.msg.includes(m), `${res.json.msg} should mention ${m}`);
    else assert.match(res.json.msg, m);
  }
}

/**
 * `value` as the `module` of a create, of a PUT on an edge without the module, and of a PATCH on an
 * edge that has a valid one (`baseline`): each refused alike, and nothing written by any of them.
 */
async function refusedEverywhere(api: Api, module: Module, value: unknown, baseline: unknown, status: number, code: string, mentions: (string | RegExp)[]) {
  const before = await count(api);
  assertRefused(await api.post(EDGES, { description: 'x', [module]: value }), status, code, mentions);
  assert.equal(await count(api), before, 'no edge created');

  const bare = await created(api, EDGES, {});
  assertRefused(await api.put(`${EDGES}/${bare.id}/${module}`, value), status, code, mentions);
  assertError(await api.get(`${EDGES}/${bare.id}/${module}`), 404, 'ERR_EP_7200', module);

  const set = await created(api, EDGES, { [module]: baseline });
  assertRefused(await api.patch(`${EDGES}/${set.id}`, { description: 'changed', [module]: value }), status, code, mentions);
  assert.deepEqual((await api.get(`${EDGES}/${set.id}`)).json, set, 'the edge and its module are unchanged');
}

const BASE_POLICY = { inbound: [rule('base', [], [{ type: 'log' }])] };
const BASE_DOCUMENT = { value: 'on_tcp_connect: []\n' };
const YAML = [
  '# office rules',
  'on_tcp_connect:',
  '  - expressions:',
  '      - "conn.server_port == 22"   # ssh only',
  "      - time.now - conn.ts.start < duration('5s')",
  '    actions:',
  '      - type: restrict-ips',
  '        config: {allow: [10.0.0.0/8], enforce: true}',
  '      - type: log',
  '        config:',
  '          metadata: {team: "edge"}',
  '',
].join('\n');
// Spacing, key order and a \u escape that a re-serialization would change.
const JSON_DOC = `{\n  "on_tcp_connect" : [ {"actions":[{"type":"deny"}], "name":"B\\u00fcro",\n   "expressions":["!inCidrRange(conn.client_ip, '203.0.113.0/24')"]} ]\n}\n`;

describeEachStore('traffic policies of TCP edges', (h) => {
  it('policy: set by create, PATCH and PUT (bare and wrapped), echoed normalized and read back the same', async () => {
    const api = await h().newAccount();
    const office = rule('office only', ["!inCidrRange(conn.client_ip, '203.0.113.0/24')"]);
    const edge = await created(api, EDGES, { policy: { inbound: [office] } });
    const first = { enabled: true, inbound: [{ ...office, actions: [{ type: 'deny', config: null }] }], outbound: null };
    assert.deepEqual(edge.policy, first);
    assert.equal(edge.traffic_policy, null);
    assert.deepEqual((await api.get(`${EDGES}/${edge.id}/policy`)).json, first);

    const patched = await api.patch(`${EDGES}/${edge.id}`, {
      policy: {
        enabled: false,
        inbound: [{ name: 'log all', actions: [{ type: 'log', config: { metadata: { team: 'edge', n: 1 } } }] }],
        outbound: [rule('log out', ['conn.server_port == 22'], [{ type: 'log' }])],
      },
    });
    assert.equal(patched.status, 200, patched.text);
    const second = {
      enabled: false,
      inbound: [{ name: 'log all', expressions: [], actions: [{ type: 'log', config: { metadata: { team: 'edge', n: 1 } } }] }],
      outbound: [{ name: 'log out', expressions: ['conn.server_port == 22'], actions: [{ type: 'log', config: null }] }],
    };
    assert.deepEqual(patched.json.policy, second);
    const untouched = await api.patch(`${EDGES}/${edge.id}`, { description: 'only this', policy: null });
    assert.deepEqual(untouched.json.policy, second, 'absent or null in a PATCH: unchanged');

    const ips = rule('ips', [], [{ type: 'restrict-ips', config: { allow: ['10.0.0.0/8'], deny: ['2001:db8::/32'] } }]);
    const put = await api.put(`${EDGES}/${edge.id}/policy`, { inbound: [ips] });
    assert.equal(put.status, 200, put.text);
    const third = { enabled: true, inbound: [ips], outbound: null };
    assert.deepEqual(put.json, third, 'replaced whole: enabled is true again and outbound null');
    assert.deepEqual((await api.get(`${EDGES}/${edge.id}`)).json.policy, third);

    const wrapped = await api.put(`${EDGES}/${edge.id}/policy`, { id: edge.id, module: { outbound: null } });
    assert.equal(wrapped.status, 200, wrapped.text);
    assert.deepEqual(wrapped.json, { enabled: true, inbound: [], outbound: null });
    assert.deepEqual((await api.get(`${EDGES}/${edge.id}/policy`)).json, wrapped.json);
  });

  it('traffic_policy: JSON and YAML documents are stored and echoed byte for byte, a rule there needs no name', async () => {
    const api = await h().newAccount();
    const edge = await created(api, EDGES, { traffic_policy: { value: JSON_DOC } });
    assert.deepEqual(edge.traffic_policy, { enabled: true, value: JSON_DOC });
    assert.equal(edge.policy, null);
    assert.deepEqual((await api.get(`${EDGES}/${edge.id}/traffic_policy`)).json, { enabled: true, value: JSON_DOC });

    const patched = await api.patch(`${EDGES}/${edge.id}`, { traffic_policy: { enabled: false, value: YAML } });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.json.traffic_policy, { enabled: false, value: YAML });
    const listed = (await api.get(EDGES)).json.tcp_edges.find((e: { id: string }) => e.id === edge.id);
    assert.equal(listed.traffic_policy.value, YAML);

    const crlf = YAML.replace(/\n/g, '\r\n');
    const put = await api.put(`${EDGES}/${edge.id}/traffic_policy`, { value: crlf });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.json, { enabled: true, value: crlf });
    assert.equal((await api.get(`${EDGES}/${edge.id}/traffic_policy`)).json.value, crlf);
    const empty = await api.put(`${EDGES}/${edge.id}/traffic_policy`, { id: edge.id, module: { value: '{}' } });
    assert.deepEqual(empty.json, { enabled: true, value: '{}' }, 'no phase: a valid, empty policy');
  });

  it('refuses each invalid policy module with its code and a message naming where, storing nothing', async () => {
    const api = await h().newAccount();
    const theirs = await ipPolicy(await h().newAccount());
    const long = `conn.client_ip == '${'a'.repeat(10_000 - 20)}'`;
    assert.equal(long.length, 10_000);
    const cases: [string, unknown, number, string, (string | RegExp)[]][] = [
      ['syntax', { inbound: [rule('syntax', ['conn.client_ip == '])] }, 400, '2200', ["inbound, rule 'syntax'", "'conn.client_ip == '", 'line 1, column 19']],
      [
        'unknown variable',
        { inbound: [rule('nope', ['true', "conn.nope == 'x'"])] },
        400,
        '2200',
        ["inbound, rule 'nope'", "expression 'conn.nope == 'x''", 'line 1, column 6', "'conn' has no field 'nope'"],
      ],
      ['type', { inbound: [rule('typed', ['conn.client_port == "x"'])] }, 400, '2200', ["rule 'typed'", 'line 1, column 1', /'==' .*int and string/]],
      // The edge compiles a literal matches pattern with RE2.
      [
        'matches pattern',
        { inbound: [rule('re', ["conn.client_ip.matches('(')"])] },
        400,
        '2200',
        ["inbound, rule 're'", 'line 1, column 24', "the pattern '(' of matches is not a valid regular expression"],
      ],
      ['too long', { inbound: [rule('long', [long])] }, 400, '2211', ["inbound, rule 'long'", '10000 characters', '4096']],
      ['1000 rules', { inbound: Array.from({ length: 1000 }, (_, i) => rule(`r${i}`, [], [{ type: 'log' }])) }, 400, '2209', ['inbound has 1000 rules', '100']],
      ['outbound deny', { outbound: [rule('out', [])] }, 400, '2202', ["outbound, rule 'out'", "'deny'", 'allowed here are log']],
      [
        'unknown action',
        { inbound: [rule('drop', [], [{ type: 'drop' }])] },
        400,
        '2201',
        ["'drop'", 'close-connection, deny, forward-internal, log, restrict-ips'],
      ],
      ['no actions', { inbound: [rule('idle', [], [])] }, 400, '2206', ["inbound, rule 'idle' has no action"]],
      ['no name', { inbound: [rule('named', []), { actions: deny }] }, 400, '2208', ['inbound, rule 2 has no name']],
      [
        'bad CIDR',
        { inbound: [rule('cidr', [], [{ type: 'restrict-ips', config: { allow: ['10.1.2.3/8'] } }])] },
        400,
        '2203',
        ["rule 'cidr'", "'restrict-ips'", "'10.1.2.3/8'", "'10.0.0.0/8'"],
      ],
      ['foreign IP policy', { inbound: [rule('ipp', [], [{ type: 'restrict-ips', config: { ip_policies: [theirs] } }])] }, 400, '1402', [theirs]],
    ];
    for (const [what, value, status, code, mentions] of cases) {
      await refusedEverywhere(api, 'policy', value, BASE_POLICY, status, `ERR_EP_${code}`, mentions).catch((e: Error) => {
        throw new Error(`${what}: ${e.message}`);
      });
    }
  });

  it('refuses each invalid traffic_policy document with its code and a message naming where, storing nothing', async () => {
    const api = await h().newAccount();
    const theirs = await ipPolicy(await h().newAccount());
    const doc = (actions: string) => ({ value: `on_tcp_connect:\n  - actions:\n${actions}` });
    const multiLine = [
      'on_tcp_connect:',
      '  - name: first',
      '    actions: [{type: log}]',
      '  - expressions:',
      '      - |-',
      "        conn.client_ip == '10.0.0.1'",
      '          && conn.nope',
      '    actions: [{type: deny}]',
    ].join('\n');
    const cases: [string, unknown, number, string, (string | RegExp)[]][] = [
      ['unknown phase', { value: 'on_http_request:\n  - actions: [{type: deny}]\n' }, 400, '2213', ["'on_http_request'", 'on_tcp_connect']],
      ['not JSON', { value: '{"on_tcp_connect": [' }, 400, '2212', ['not valid JSON']],
      ['not YAML', { value: 'on_tcp_connect: [\n  a: b: c' }, 400, '2212', ['not valid YAML at line 2']],
      ['not a mapping', { value: 'deny everyone' }, 400, '2212', ['must be a mapping']],
      ['expression on line 2', { value: multiLine }, 400, '2200', ["on_tcp_connect, rule '#2'", 'line 2, column 11', "no field 'nope'"]],
      ['type', doc('      - type: deny\n    expressions: [\'conn.client_port == "x"\']\n'), 400, '2200', ["on_tcp_connect, rule '#1'", 'int and string']],
      [
        'matches pattern',
        doc('      - type: deny\n    expressions: ["conn.client_ip.matches(\'(a{2}){501}\')"]\n'),
        400,
        '2200',
        ["on_tcp_connect, rule '#1'", '{2} inside {501}'],
      ],
      [
        'unknown action',
        doc('      - type: drop\n'),
        400,
        '2201',
        ["on_tcp_connect, rule '#1'", "'drop'", 'close-connection, deny, forward-internal, log, restrict-ips'],
      ],
      ['no actions', { value: 'on_tcp_connect:\n  - name: idle\n    actions: []\n' }, 400, '2206', ["on_tcp_connect, rule 'idle' has no action"]],
      ['bad CIDR', doc('      - type: restrict-ips\n        config: {deny: [nope]}\n'), 400, '2203', ['on_tcp_connect', "'nope'"]],
      ['foreign IP policy', doc(`      - type: restrict-ips\n        config: {ip_policies: [${theirs}]}\n`), 400, '1402', ['traffic_policy', theirs]],
    ];
    for (const [what, value, status, code, mentions] of cases) {
      await refusedEverywhere(api, 'traffic_policy', value, BASE_DOCUMENT, status, `ERR_EP_${code}`, mentions).catch((e: Error) => {
        throw new Error(`${what}: ${e.message}`);
      });
    }
  });

  it('restrict-ips names IP policies of the account: accepted, and the IP policy cannot be deleted while a module names it', async () => {
    const api = await h().newAccount();
    const [a, b] = [await ipPolicy(api), await ipPolicy(api)];
    const restrict = (ids: string[]) => [{ type: 'restrict-ips', config: { ip_policies: ids } }];
    const edge = await created(api, EDGES, { policy: { inbound: [rule('ips', [], restrict([a]))] } });
    assert.deepEqual(edge.policy.inbound[0].actions, [{ type: 'restrict-ips', config: { ip_policies: [a] } }]);
    assertError(await api.delete(`/ip_policies/${a}`), 409, 'ERR_EP_1420', edge.id);

    const other = await created(api, EDGES, {});
    const put = await api.put(`${EDGES}/${other.id}/traffic_policy`, doc(b));
    assert.equal(put.status, 200, put.text);
    assertError(await api.delete(`/ip_policies/${b}`), 409, 'ERR_EP_1420', other.id);
    assert.equal((await api.get(`/ip_policies/${b}`)).status, 200, 'still there');

    // Once nothing names them, they go.
    assert.equal((await api.delete(`${EDGES}/${edge.id}/policy`)).status, 204);
    assert.equal((await api.delete(`/ip_policies/${a}`)).status, 204);
    assert.equal((await api.delete(`${EDGES}/${other.id}`)).status, 204);
    assert.equal((await api.delete(`/ip_policies/${b}`)).status, 204);

    function doc(id: string) {
      return { value: JSON.stringify({ on_tcp_connect: [{ actions: restrict([id]) }] }) };
    }
  });

  it('policy and traffic_policy exclude each other: 7201 on an edge with the other set, 7202 in one request', async () => {
    const api = await h().newAccount();
    const withPolicy = await created(api, EDGES, { policy: BASE_POLICY });
    const withDocument = await created(api, EDGES, { traffic_policy: BASE_DOCUMENT });

    assertError(await api.put(`${EDGES}/${withPolicy.id}/traffic_policy`, BASE_DOCUMENT), 409, 'ERR_EP_7201', withPolicy.id);
    assertError(await api.patch(`${EDGES}/${withPolicy.id}`, { traffic_policy: BASE_DOCUMENT, policy: null }), 409, 'ERR_EP_7201', 'policy module');
    assertError(await api.put(`${EDGES}/${withDocument.id}/policy`, BASE_POLICY), 409, 'ERR_EP_7201', 'traffic_policy module');
    assertError(await api.patch(`${EDGES}/${withDocument.id}`, { policy: BASE_POLICY }), 409, 'ERR_EP_7201', withDocument.id);
    assert.deepEqual((await api.get(`${EDGES}/${withPolicy.id}`)).json, withPolicy, 'unchanged');
    assert.deepEqual((await api.get(`${EDGES}/${withDocument.id}`)).json, withDocument, 'unchanged');

    const before = await count(api);
    const both = { policy: BASE_POLICY, traffic_policy: BASE_DOCUMENT };
    assertError(await api.post(EDGES, both), 400, 'ERR_EP_7202', 'exclude each other');
    assert.equal(await count(api), before);
    const bare = await created(api, EDGES, {});
    assertError(await api.patch(`${EDGES}/${bare.id}`, both), 400, 'ERR_EP_7202');
    assert.deepEqual((await api.get(`${EDGES}/${bare.id}`)).json, bare);

    // Deleting one makes room for the other.
    assert.equal((await api.delete(`${EDGES}/${withPolicy.id}/policy`)).status, 204);
    const swapped = await api.put(`${EDGES}/${withPolicy.id}/traffic_policy`, BASE_DOCUMENT);
    assert.equal(swapped.status, 200, swapped.text);
    const after = (await api.get(`${EDGES}/${withPolicy.id}`)).json;
    assert.equal(after.policy, null);
    assert.deepEqual(after.traffic_policy, { enabled: true, ...BASE_DOCUMENT });
  });
});
