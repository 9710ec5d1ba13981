// What a route's backend resolves to at connection time (src/edges/backends.ts): the candidates in
// the order to try them, a weighted backend's one drawn by weight (with the random number given),
// and the bound on nesting.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TunnelTarget } from '../../src/core/live-agents.js';
import { candidates, drawByWeight, type BackendResolver } from '../../src/edges/backends.js';
import type { Backend } from '../../src/edges/edge-config.js';

/** Every grid point k / n, k = 0 … n - 1, drawn once: how often each id came out. */
function drawGrid(choices: { id: string; weight: number }[], n: number): Map<string | undefined, number> {
  const counts = new Map<string | undefined, number>();
  for (let k = 0; k < n; k++) {
    const id = drawByWeight(choices, () => k / n);
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

describe('drawByWeight', () => {
  it('draws each id in proportion to its weight, exactly over a grid of random values', () => {
    // Weights summing to a power of two and a power-of-two grid: every product is exact.
    const choices = [
      { id: 'a', weight: 1 },
      { id: 'b', weight: 3 },
      { id: 'c', weight: 4 },
    ];
    const counts = drawGrid(choices, 1024);
    assert.deepEqual(Object.fromEntries(counts), { a: 128, b: 384, c: 512 });
  });

  it('gives each id the contiguous stretch of [0, 1) its weight covers, in order', () => {
    const choices = [
      { id: 'a', weight: 1 },
      { id: 'b', weight: 3 },
      { id: 'c', weight: 4 },
    ];
    for (const [r, id] of [
      [0, 'a'],
      [0.124, 'a'],
      [0.125, 'b'],
      [0.499, 'b'],
      [0.5, 'c'],
      [0.999, 'c'],
    ] as const)
      assert.equal(
        drawByWeight(choices, () => r),
        id,
        `random ${r}`,
      );
  });

  it('never draws an id of weight 0, wherever it is listed', () => {
    const choices = [
      { id: 'zero-first', weight: 0 },
      { id: 'a', weight: 2 },
      { id: 'zero-middle', weight: 0 },
      { id: 'b', weight: 2 },
      { id: 'zero-last', weight: 0 },
    ];
    const counts = drawGrid(choices, 256);
    assert.deepEqual(Object.fromEntries(counts), { a: 128, b: 128 });
  });

  it('treats a negative weight as 0: it is never drawn and takes nothing from the others', () => {
    const choices = [
      { id: 'a', weight: 2 },
      { id: 'negative', weight: -5 },
      { id: 'c', weight: 6 },
    ];
    const counts = drawGrid(choices, 512);
    assert.deepEqual(Object.fromEntries(counts), { a: 128, c: 384 });
  });

  it('draws nothing when every weight is 0 or below, or there is no choice', () => {
    const never = () => assert.fail('random is not needed');
    assert.equal(drawByWeight([], never), undefined);
    assert.equal(
      drawByWeight(
        [
          { id: 'a', weight: 0 },
          { id: 'b', weight: 0 },
        ],
        never,
      ),
      undefined,
    );
    assert.equal(
      drawByWeight(
        [
          { id: 'a', weight: 0 },
          { id: 'b', weight: -1 },
        ],
        never,
      ),
      undefined,
    );
  });

  it('draws the only weighted id whatever the random number', () => {
    const choices = [
      { id: 'off', weight: 0 },
      { id: 'on', weight: 7 },
    ];
    for (const r of [0, 0.25, 0.5, 0.999999])
      assert.equal(
        drawByWeight(choices, () => r),
        'on',
      );
  });

  it('lands on the last weighted id, not a zero-weight one after it, at the very top', () => {
    const choices = [
      { id: 'a', weight: 1 },
      { id: 'b', weight: 2 },
      { id: 'z', weight: 0 },
    ];
    assert.equal(
      drawByWeight(choices, () => 1 - 2 ** -53),
      'b',
    );
    // A random source at its limit (1 itself, out of contract) still draws a weighted id.
    assert.equal(
      drawByWeight(choices, () => 1),
      'b',
    );
  });
});

const ACCOUNT = 'acct_1';

function tunnel(tunnelId: string): TunnelTarget {
  return {
    tunnelId,
    accountId: ACCOUNT,
    proto: 'https',
    connect: () => assert.fail('not connected in these tests'),
  };
}

/** A directory with one online tunnel per `role` label value; records what it was asked. */
function directory(online: Record<string, TunnelTarget>) {
  const asked: { accountId: string; labels: Readonly<Record<string, string>> }[] = [];
  return {
    asked,
    labeled(accountId: string, labels: Readonly<Record<string, string>>): TunnelTarget | undefined {
      asked.push({ accountId, labels });
      return accountId === ACCOUNT && labels.role !== undefined ? online[labels.role] : undefined;
    },
  };
}

function resolver(
  list: Backend[],
  online: Record<string, TunnelTarget> = {},
  random?: () => number,
): BackendResolver & { directory: ReturnType<typeof directory> } {
  return { backends: new Map(list.map((b) => [b.id, b])), directory: directory(online), accountId: ACCOUNT, ...(random && { random }) };
}

const group = (id: string, role: string): Backend => ({ kind: 'tunnel_group', id, labels: { role } });
const stat = (id: string, host: string, port = 443, tls = true): Backend => ({ kind: 'static_address', id, host, port, tls });
const response = (id: string, status: number, body = ''): Backend => ({ kind: 'http_response', id, status, headers: { 'x-from': id }, body });
const failover = (id: string, backends: string[]): Backend => ({ kind: 'failover', id, backends });
const weighted = (id: string, backends: { id: string; weight: number }[]): Backend => ({ kind: 'weighted', id, backends });

/** The ids of candidates in order, with their kind. */
const ids = (list: ReturnType<typeof candidates>) => list.map((c) => `${c.kind}:${c.backendId}`);

describe('candidates', () => {
  it('resolves a tunnel group with an online tunnel to that tunnel, asking for its labels in its account', () => {
    const web = tunnel('tn_web');
    const r = resolver([{ kind: 'tunnel_group', id: 'bkdtg_1', labels: { role: 'web', env: 'prod' } }], { web });
    assert.deepEqual(candidates(r, 'bkdtg_1'), [{ kind: 'tunnel', backendId: 'bkdtg_1', target: web }]);
    assert.deepEqual(r.directory.asked, [{ accountId: ACCOUNT, labels: { role: 'web', env: 'prod' } }]);
  });

  it('resolves a tunnel group with no tunnel online to an offline candidate with its labels', () => {
    const r = resolver([group('bkdtg_1', 'db')], { web: tunnel('tn_web') });
    assert.deepEqual(candidates(r, 'bkdtg_1'), [{ kind: 'offline', backendId: 'bkdtg_1', labels: { role: 'db' } }]);
  });

  it('resolves a static address to a direct connection', () => {
    const r = resolver([stat('bkdsa_1', '2001:db8::1', 8443, false)]);
    assert.deepEqual(candidates(r, 'bkdsa_1'), [{ kind: 'static', backendId: 'bkdsa_1', host: '2001:db8::1', port: 8443, tls: false }]);
    assert.equal(r.directory.asked.length, 0);
  });

  it('resolves an HTTP response to its own answer', () => {
    const r = resolver([response('bkdhr_1', 503, 'down for maintenance')]);
    assert.deepEqual(candidates(r, 'bkdhr_1'), [
      { kind: 'response', backendId: 'bkdhr_1', status: 503, headers: { 'x-from': 'bkdhr_1' }, body: 'down for maintenance' },
    ]);
  });

  it('resolves an id that names nothing to no candidate', () => {
    const r = resolver([stat('bkdsa_1', 'a.example')]);
    assert.deepEqual(candidates(r, 'bkdsa_gone'), []);
  });

  it('flattens a failover backend into its backends in order, offline groups included', () => {
    const r = resolver(
      [
        group('bkdtg_down', 'db'),
        group('bkdtg_up', 'web'),
        stat('bkdsa_1', 'a.example'),
        response('bkdhr_1', 502),
        failover('bkdfo_1', ['bkdtg_down', 'bkdsa_1', 'bkdtg_up', 'bkdhr_1']),
      ],
      { web: tunnel('tn_web') },
    );
    assert.deepEqual(ids(candidates(r, 'bkdfo_1')), ['offline:bkdtg_down', 'static:bkdsa_1', 'tunnel:bkdtg_up', 'response:bkdhr_1']);
  });

  it('flattens nested failovers depth first, skipping ids that name nothing', () => {
    const r = resolver([
      stat('bkdsa_1', 'a.example'),
      stat('bkdsa_2', 'b.example'),
      stat('bkdsa_3', 'c.example'),
      failover('bkdfo_inner', ['bkdsa_2', 'bkdsa_gone', 'bkdsa_3']),
      failover('bkdfo_outer', ['bkdsa_1', 'bkdfo_inner', 'bkdsa_1']),
    ]);
    assert.deepEqual(ids(candidates(r, 'bkdfo_outer')), ['static:bkdsa_1', 'static:bkdsa_2', 'static:bkdsa_3', 'static:bkdsa_1']);
    assert.deepEqual(candidates(resolver([failover('bkdfo_empty', [])]), 'bkdfo_empty'), []);
  });

  it('resolves a weighted backend to the one backend the random number draws', () => {
    const list = [
      stat('bkdsa_a', 'a.example'),
      stat('bkdsa_b', 'b.example'),
      stat('bkdsa_off', 'off.example'),
      weighted('bkdwt_1', [
        { id: 'bkdsa_a', weight: 1 },
        { id: 'bkdsa_off', weight: 0 },
        { id: 'bkdsa_b', weight: 3 },
      ]),
    ];
    assert.deepEqual(
      ids(
        candidates(
          resolver(list, {}, () => 0),
          'bkdwt_1',
        ),
      ),
      ['static:bkdsa_a'],
    );
    assert.deepEqual(
      ids(
        candidates(
          resolver(list, {}, () => 0.2),
          'bkdwt_1',
        ),
      ),
      ['static:bkdsa_a'],
    );
    assert.deepEqual(
      ids(
        candidates(
          resolver(list, {}, () => 0.25),
          'bkdwt_1',
        ),
      ),
      ['static:bkdsa_b'],
    );
    assert.deepEqual(
      ids(
        candidates(
          resolver(list, {}, () => 0.99),
          'bkdwt_1',
        ),
      ),
      ['static:bkdsa_b'],
    );
  });

  it('asks the random source once per weighted backend resolved', () => {
    let calls = 0;
    const list = [stat('bkdsa_a', 'a.example'), weighted('bkdwt_1', [{ id: 'bkdsa_a', weight: 1 }])];
    const r = resolver(list, {}, () => {
      calls++;
      return 0.5;
    });
    candidates(r, 'bkdwt_1');
    assert.equal(calls, 1);
  });

  it('resolves a weighted backend whose weights are all 0 to no candidate', () => {
    const r = resolver(
      [
        stat('bkdsa_a', 'a.example'),
        weighted('bkdwt_1', [
          { id: 'bkdsa_a', weight: 0 },
          { id: 'bkdsa_a', weight: 0 },
        ]),
      ],
      {},
      () => 0,
    );
    assert.deepEqual(candidates(r, 'bkdwt_1'), []);
  });

  it('resolves a weighted draw of a deleted backend to no candidate', () => {
    const r = resolver([weighted('bkdwt_1', [{ id: 'bkdsa_gone', weight: 1 }])], {}, () => 0);
    assert.deepEqual(candidates(r, 'bkdwt_1'), []);
  });

  it('flattens a failover drawn by a weighted backend', () => {
    const list = [
      group('bkdtg_1', 'web'),
      stat('bkdsa_1', 'a.example'),
      response('bkdhr_1', 503),
      failover('bkdfo_1', ['bkdtg_1', 'bkdsa_1']),
      weighted('bkdwt_1', [
        { id: 'bkdfo_1', weight: 1 },
        { id: 'bkdhr_1', weight: 1 },
      ]),
    ];
    assert.deepEqual(
      ids(
        candidates(
          resolver(list, {}, () => 0.25),
          'bkdwt_1',
        ),
      ),
      ['offline:bkdtg_1', 'static:bkdsa_1'],
    );
    assert.deepEqual(
      ids(
        candidates(
          resolver(list, { web: tunnel('tn_web') }, () => 0.25),
          'bkdwt_1',
        ),
      ),
      ['tunnel:bkdtg_1', 'static:bkdsa_1'],
    );
    assert.deepEqual(
      ids(
        candidates(
          resolver(list, {}, () => 0.75),
          'bkdwt_1',
        ),
      ),
      ['response:bkdhr_1'],
    );
  });

  it('draws afresh for each weighted backend a failover lists', () => {
    const draws = [0.1, 0.9];
    const list = [
      stat('bkdsa_a', 'a.example'),
      stat('bkdsa_b', 'b.example'),
      weighted('bkdwt_1', [
        { id: 'bkdsa_a', weight: 1 },
        { id: 'bkdsa_b', weight: 1 },
      ]),
      failover('bkdfo_1', ['bkdwt_1', 'bkdwt_1']),
    ];
    const r = resolver(list, {}, () => draws.shift() ?? assert.fail('drawn too often'));
    assert.deepEqual(ids(candidates(r, 'bkdfo_1')), ['static:bkdsa_a', 'static:bkdsa_b']);
  });

  /** `count` failovers, each naming the next, the last naming a static address. */
  function chain(count: number): Backend[] {
    const list: Backend[] = [stat('bkdsa_end', 'end.example')];
    for (let i = 0; i < count; i++) list.push(failover(`bkdfo_${i}`, [i === count - 1 ? 'bkdsa_end' : `bkdfo_${i + 1}`]));
    return list;
  }

  it('resolves a chain nested 16 deep', () => {
    assert.deepEqual(ids(candidates(resolver(chain(16)), 'bkdfo_0')), ['static:bkdsa_end']);
  });

  it('resolves a chain nested deeper than 16 to no candidate', () => {
    assert.deepEqual(candidates(resolver(chain(17)), 'bkdfo_0'), []);
    assert.deepEqual(candidates(resolver(chain(40)), 'bkdfo_0'), []);
    // The same chain entered below the bound resolves.
    assert.deepEqual(ids(candidates(resolver(chain(17)), 'bkdfo_1')), ['static:bkdsa_end']);
  });

  it('bounds a cycle the API should have refused instead of recursing forever', () => {
    const r = resolver([failover('bkdfo_a', ['bkdfo_b']), failover('bkdfo_b', ['bkdfo_a'])]);
    assert.deepEqual(candidates(r, 'bkdfo_a'), []);
    const w = resolver([weighted('bkdwt_self', [{ id: 'bkdwt_self', weight: 1 }])], {}, () => 0);
    assert.deepEqual(candidates(w, 'bkdwt_self'), []);
  });
});
