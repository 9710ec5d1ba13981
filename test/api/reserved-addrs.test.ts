// Reserved TCP addresses: the fields of one, how an address is allocated from the operator's pool
// (lowest free port, freed ports given again, ranges in order, exhaustion), unique addresses
// under 50 concurrent creates of several accounts, regions, PATCH, endpoint configurations
// (tcp only, attach, detach, in use), deletion while an edge serves the address, and read-only users.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import { describeEachStore, type Api, type Harness } from '../helpers/harness.js';
import { assertError, created } from '../helpers/assertions.js';

const ra = (api: Api, body: Record<string, unknown> = {}) => created(api, '/reserved_addrs', body);
const count = async (api: Api) => (await api.get('/reserved_addrs')).json.reserved_addrs.length as number;
const ec = async (api: Api, type: string) => (await created(api, '/endpoint_configurations', { type })).id as string;
const KEYS = 'addr created_at description endpoint_configuration id metadata region uri'.split(' ');

/** Addresses held more than once in the whole store (across accounts). */
async function duplicateAddrs(h: Harness): Promise<unknown[]> {
  return h.deps.store.db
    .selectFrom('reserved_addrs')
    .select(['addr', sql<number>`count(*)`.as('n')])
    .groupBy('addr')
    .having(sql`count(*)`, '>', 1)
    .execute();
}
const storeCount = async (h: Harness) =>
  Number(
    (
      await h.deps.store.db
        .selectFrom('reserved_addrs')
        .select(sql<number>`count(*)`.as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describeEachStore('reserved addresses', (h) => {
  it('creates an address from the default pool with every key present, shown alike by GET and the list', async () => {
    const api = await h().newAccount();
    const a = await ra(api, { description: 'db', metadata: '{"env":"prod"}', region: 'eu' });
    assert.match(a.id, /^ra_/);
    assert.deepEqual(Object.keys(a).sort(), KEYS);
    assert.equal(a.uri, `${h().baseUrl}/reserved_addrs/${a.id}`);
    assert.match(a.addr, /^1\.tcp\.edgeplane\.app:\d+$/);
    const port = Number(a.addr.split(':')[1]);
    assert.ok(port >= 10000 && port <= 65535, a.addr);
    assert.equal(a.description, 'db');
    assert.equal(a.metadata, '{"env":"prod"}');
    assert.equal(a.region, 'eu');
    assert.equal(a.endpoint_configuration, null);
    assert.deepEqual((await api.get(`/reserved_addrs/${a.id}`)).json, a);
    const list = (await api.get('/reserved_addrs')).json;
    assert.deepEqual(list.reserved_addrs, [a]);
    const b = await ra(api);
    assert.notEqual(b.addr, a.addr);
    assert.equal(b.description, '');
    assert.equal(b.metadata, '');
  });

  it('region: us by default and for "", a configured one echoed, another refused (400) with nothing written', async () => {
    const api = await h().newAccount();
    assert.equal((await ra(api)).region, 'us');
    assert.equal((await ra(api, { region: '' })).region, 'us');
    assert.equal((await ra(api, { region: 'jp' })).region, 'jp');
    const before = await storeCount(h());
    await assertError(await api.post('/reserved_addrs', { region: 'mars' }), 400, 'ERR_EP_400', 'mars');
    assert.equal(await count(api), 3);
    assert.equal(await storeCount(h()), before, 'no address was allocated');
  });

  it('PATCH changes description and metadata, leaves what is absent or null, and refuses region and addr (251)', async () => {
    const api = await h().newAccount();
    const a = await ra(api, { description: 'one', metadata: 'm1' });
    const patched = (await api.patch(`/reserved_addrs/${a.id}`, { description: 'two' })).json;
    assert.deepEqual(patched, { ...a, description: 'two' });
    const again = await api.patch(`/reserved_addrs/${a.id}`, { metadata: 'm2', description: null, endpoint_configuration_id: null });
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(again.json, { ...a, description: 'two', metadata: 'm2' });
    await assertError(await api.patch(`/reserved_addrs/${a.id}`, { region: 'eu' }), 400, 'ERR_EP_251', 'region');
    await assertError(await api.patch(`/reserved_addrs/${a.id}`, { addr: '1.tcp.edgeplane.app:10000' }), 400, 'ERR_EP_251', 'addr');
    await assertError(await api.patch(`/reserved_addrs/${a.id}`, { description: 'x', region: 'eu' }), 400, 'ERR_EP_251', 'region');
    await assertError(await api.patch(`/reserved_addrs/${a.id}`, {}), 400, 'ERR_EP_250');
    assert.deepEqual((await api.get(`/reserved_addrs/${a.id}`)).json, again.json);
  });

  it('attaches a tcp endpoint configuration by PATCH, refuses others (428, 1600), detaches it, and keeps an attached one (1619)', async () => {
    const api = await h().newAccount();
    const other = await h().newAccount();
    const tcp = await ec(api, 'tcp');
    const a = await ra(api);
    const bad: [string, string][] = [
      [await ec(api, 'http'), 'ERR_EP_428'],
      [await ec(api, 'https'), 'ERR_EP_428'],
      ['ec_000000000000000000000000000', 'ERR_EP_1600'],
      [await ec(other, 'tcp'), 'ERR_EP_1600'],
    ];
    for (const [id, code] of bad) {
      await assertError(await api.patch(`/reserved_addrs/${a.id}`, { endpoint_configuration_id: id }), 400, code, id);
      assert.deepEqual((await api.get(`/reserved_addrs/${a.id}`)).json, a, id);
    }
    const attached = (await api.patch(`/reserved_addrs/${a.id}`, { endpoint_configuration_id: tcp })).json;
    assert.deepEqual(attached, { ...a, endpoint_configuration: { id: tcp, uri: `${h().baseUrl}/endpoint_configurations/${tcp}` } });
    assert.deepEqual((await api.get(`/reserved_addrs/${a.id}`)).json, attached);
    assert.equal((await api.patch(`/reserved_addrs/${a.id}`, { description: 'kept' })).json.endpoint_configuration.id, tcp);

    await assertError(await api.delete(`/endpoint_configurations/${tcp}`), 409, 'ERR_EP_1619', a.id);
    assert.equal((await api.get(`/endpoint_configurations/${tcp}`)).status, 200);

    assert.equal((await api.delete(`/reserved_addrs/${a.id}/endpoint_configuration`)).status, 204);
    assert.equal((await api.get(`/reserved_addrs/${a.id}`)).json.endpoint_configuration, null);
    assert.equal((await api.delete(`/reserved_addrs/${a.id}/endpoint_configuration`)).status, 204, 'detaching nothing is a 204 too');
    assert.equal((await api.delete(`/endpoint_configurations/${tcp}`)).status, 204);
  });

  it('refuses deleting an address an edge serves, or giving it an endpoint configuration (520, naming the edge), until the edge is deleted', async () => {
    const api = await h().newAccount();
    const a = await ra(api);
    const tcp = await ec(api, 'tcp');
    const edge = await created(api, '/edges/tcp', { hostports: [a.addr] });
    await assertError(await api.delete(`/reserved_addrs/${a.id}`), 409, 'ERR_EP_520', edge.id);
    await assertError(await api.patch(`/reserved_addrs/${a.id}`, { endpoint_configuration_id: tcp }), 409, 'ERR_EP_520', edge.id);
    assert.deepEqual((await api.get(`/reserved_addrs/${a.id}`)).json, a);
    assert.deepEqual((await api.get(`/edges/tcp/${edge.id}`)).json.hostports, [a.addr]);
    assert.equal((await api.delete(`/edges/tcp/${edge.id}`)).status, 204);
    assert.equal((await api.patch(`/reserved_addrs/${a.id}`, { endpoint_configuration_id: tcp })).json.endpoint_configuration.id, tcp);
    assert.equal((await api.delete(`/reserved_addrs/${a.id}`)).status, 204);
    assert.equal((await api.get(`/reserved_addrs/${a.id}`)).status, 404);
    assert.equal(await count(api), 0);
    assert.equal((await api.delete(`/endpoint_configurations/${tcp}`)).status, 204, 'the deleted address no longer holds it');
  });

  it('50 creates at once in three accounts get 50 distinct addresses, on both stores', async () => {
    const accounts = [await h().newAccount(), await h().newAccount(), await h().newAccount()];
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => accounts[i % 3]!.post('/reserved_addrs', {})));
    for (const res of results) assert.equal(res.status, 201, res.text);
    const addrs = results.map((r) => r.json.addr as string);
    assert.equal(new Set(addrs).size, 50, addrs.join(' '));
    assert.deepEqual((await Promise.all(accounts.map(count))).sort(), [16, 17, 17]);
    const stored = await h()
      .deps.store.db.selectFrom('reserved_addrs')
      .select('addr')
      .where(
        'account_id',
        'in',
        accounts.map((a) => a.info.accountId),
      )
      .execute();
    assert.deepEqual(stored.map((r) => r.addr).sort(), [...addrs].sort());
    assert.deepEqual(await duplicateAddrs(h()), []);
  });

  it('a read_only user may read but not create, change, detach or delete (403 635)', async () => {
    const api = await h().newAccount();
    const reader = await api.asNewUser('read_only');
    const a = await ra(api);
    const tcp = await ec(api, 'tcp');
    const withEc = (await api.patch(`/reserved_addrs/${a.id}`, { endpoint_configuration_id: tcp })).json;
    assert.deepEqual((await reader.get(`/reserved_addrs/${a.id}`)).json, withEc);
    assert.equal((await reader.get('/reserved_addrs')).json.reserved_addrs.length, 1);
    await assertError(await reader.post('/reserved_addrs', {}), 403, 'ERR_EP_635');
    await assertError(await reader.patch(`/reserved_addrs/${a.id}`, { description: 'x' }), 403, 'ERR_EP_635');
    await assertError(await reader.delete(`/reserved_addrs/${a.id}/endpoint_configuration`), 403, 'ERR_EP_635');
    await assertError(await reader.delete(`/reserved_addrs/${a.id}`), 403, 'ERR_EP_635');
    assert.equal(await count(api), 1);
    assert.deepEqual((await api.get(`/reserved_addrs/${a.id}`)).json, withEc);
  });
});

// Two small ranges: x.tcp.test:40000-40003 first, then y.tcp.test:41000-41001; six addresses in all.
const SMALL_POOL = [
  { host: 'x.tcp.test', from: 40000, to: 40003 },
  { host: 'y.tcp.test', from: 41000, to: 41001 },
];

describeEachStore(
  'reserved addresses from a small pool',
  (h) => {
    it('takes the region default from the configured regions (eu, jp) and refuses us, allocating nothing', async () => {
      const api = await h().newAccount();
      await assertError(await api.post('/reserved_addrs', { region: 'us' }), 400, 'ERR_EP_400', 'us');
      const a = await ra(api, { region: '' });
      assert.equal(a.region, 'eu');
      assert.equal(a.addr, 'x.tcp.test:40000', 'the refused create took no port');
      const jp = await ra(api, { region: 'jp' });
      assert.equal(jp.region, 'jp');
      assert.equal(await storeCount(h()), 2);
      for (const id of [a.id, jp.id]) assert.equal((await api.delete(`/reserved_addrs/${id}`)).status, 204);
      assert.equal(await storeCount(h()), 0);
    });

    it('gives the lowest free port across accounts, a freed port again, the second range when the first is full, then 409 508', async () => {
      const a = await h().newAccount();
      const b = await h().newAccount();
      const addr = async (api: Api) => (await ra(api)).addr as string;
      const first = [await ra(a), await ra(a), await ra(a)];
      assert.deepEqual(
        first.map((r) => r.addr),
        ['x.tcp.test:40000', 'x.tcp.test:40001', 'x.tcp.test:40002'],
      );
      assert.equal(await addr(b), 'x.tcp.test:40003', 'unique across accounts');
      assert.equal((await a.delete(`/reserved_addrs/${first[1]!.id}`)).status, 204);
      assert.equal(await addr(b), 'x.tcp.test:40001', "a's freed port, to another account");
      assert.equal(await addr(a), 'y.tcp.test:41000', 'the second range once the first is full');
      assert.equal((await a.delete(`/reserved_addrs/${first[0]!.id}`)).status, 204);
      assert.equal(await addr(b), 'x.tcp.test:40000', 'the first range again before the rest of the second');
      assert.equal(await addr(a), 'y.tcp.test:41001');

      for (const api of [a, b]) {
        await assertError(await api.post('/reserved_addrs', { description: 'one too many' }), 409, 'ERR_EP_508', 'x.tcp.test:40000-40003');
      }
      assert.equal(await count(a), 3);
      assert.equal(await count(b), 3);
      assert.equal(await storeCount(h()), 6);
    });
  },
  { domains: { tcpAddresses: SMALL_POOL, regions: ['eu', 'jp'] } },
);

// Exactly 50 ports: 50 concurrent creates must take every one of them, and the next finds none.
describeEachStore(
  'reserved addresses allocated concurrently',
  (h) => {
    it('50 concurrent creates in two accounts take exactly the 50 ports of the pool, once each', async () => {
      const accounts = [await h().newAccount(), await h().newAccount()];
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => accounts[i % 2]!.post('/reserved_addrs', {})));
      for (const res of results) assert.equal(res.status, 201, res.text);
      const addrs = results.map((r) => r.json.addr as string).sort();
      assert.deepEqual(
        addrs,
        Array.from({ length: 50 }, (_, i) => `c.tcp.test:${30000 + i}`),
      );
      assert.deepEqual(await duplicateAddrs(h()), []);
      assert.equal(await storeCount(h()), 50);
      await assertError(await accounts[0]!.post('/reserved_addrs', {}), 409, 'ERR_EP_508', 'c.tcp.test:30000-30049');
    });
  },
  { domains: { tcpAddresses: [{ host: 'c.tcp.test', from: 30000, to: 30049 }] } },
);
