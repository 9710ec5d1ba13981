// Route claims across instances (src/db/route-claims.ts): one tunnel holds a route unless every
// claimant pools; the check reads then writes, so it is raced here, many claims at once on one
// store (PostgreSQL: separate connections of the pool).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { newId } from '../../src/core/ids.js';
import { claimRoute, releaseRoute, renewRouteClaims } from '../../src/db/route-claims.js';
import { describeEachStore } from '../helpers/harness.js';

const at = (ms: number) => new Date(Date.now() + ms).toISOString();

describeEachStore('route claims', (h) => {
  it('gives each contested route to exactly one of twenty concurrent binds', async () => {
    // Ten routes raced at once, twenty claimants each: without the per-route lock two claims of one
    // route both see it free (PostgreSQL, read committed) and both commit.
    const routes = Array.from({ length: 10 }, () => `https:${newId('x').toLowerCase()}.example.com`);
    const claims = routes.flatMap((route) => Array.from({ length: 20 }, (_, i) => ({ route, tunnelId: newId('tn'), instanceId: `inst_${i % 3}` })));
    const outcomes = await Promise.all(
      claims.map((c) => claimRoute(h().deps.store, { ...c, pooling: false, leaseExpiresAt: at(30_000), now: at(0) }).then((o) => ({ ...c, ...o }))),
    );
    for (const route of routes) {
      const mine = outcomes.filter((o) => o.route === route);
      const won = mine.filter((o) => o.heldBy === undefined);
      assert.equal(won.length, 1, `${route}: ${won.length} winners`);
      assert.ok(
        mine.every((o) => o.heldBy === undefined || o.heldBy === won[0]!.tunnelId),
        'every loser is told who holds it',
      );
      const rows = await h().deps.store.db.selectFrom('agent_route_claims').select('tunnel_id').where('route', '=', route).execute();
      assert.deepEqual(
        rows.map((r) => r.tunnel_id),
        [won[0]!.tunnelId],
      );
    }
  });

  it('shares a route among binds that all pool, and never with one that does not', async () => {
    const route = `tcp:${10000 + Math.floor(Math.random() * 50000)}-${newId('x')}`;
    const pooled = Array.from({ length: 10 }, () => newId('tn'));
    const outcomes = await Promise.all(
      pooled.map((tunnelId) => claimRoute(h().deps.store, { route, tunnelId, instanceId: 'inst_a', pooling: true, leaseExpiresAt: at(30_000), now: at(0) })),
    );
    assert.ok(outcomes.every((o) => o.heldBy === undefined));
    const single = await claimRoute(h().deps.store, {
      route,
      tunnelId: newId('tn'),
      instanceId: 'inst_b',
      pooling: false,
      leaseExpiresAt: at(30_000),
      now: at(0),
    });
    assert.ok(pooled.includes(single.heldBy!));
  });

  it('frees a route when it is released or its lease runs out, and renews only live tunnels', async () => {
    const store = h().deps.store;
    const route = `tls:${newId('x').toLowerCase()}.example.com`;
    const [a, b, c] = [newId('tn'), newId('tn'), newId('tn')];
    assert.equal(
      (await claimRoute(store, { route, tunnelId: a, instanceId: 'inst_a', pooling: false, leaseExpiresAt: at(1_000), now: at(0) })).heldBy,
      undefined,
    );
    assert.equal((await claimRoute(store, { route, tunnelId: b, instanceId: 'inst_b', pooling: false, leaseExpiresAt: at(1_000), now: at(0) })).heldBy, a);
    // Renewed as live: still held after its first lease.
    await renewRouteClaims(store, 'inst_a', [a], at(60_000), at(0));
    assert.equal((await claimRoute(store, { route, tunnelId: b, instanceId: 'inst_b', pooling: false, leaseExpiresAt: at(1_000), now: at(2_000) })).heldBy, a);
    // Not renewed (its tunnel is gone): expired, the route is free.
    await renewRouteClaims(store, 'inst_a', [], at(60_000), at(0));
    assert.equal(
      (await claimRoute(store, { route, tunnelId: b, instanceId: 'inst_b', pooling: false, leaseExpiresAt: at(1_000), now: at(61_000) })).heldBy,
      undefined,
    );
    // The same tunnel resumed on another instance claims it there; the first instance's late release leaves that claim.
    assert.equal(
      (await claimRoute(store, { route, tunnelId: b, instanceId: 'inst_b2', pooling: false, leaseExpiresAt: at(1_000), now: at(0) })).heldBy,
      undefined,
    );
    await releaseRoute(store, route, b, 'inst_b');
    assert.equal((await claimRoute(store, { route, tunnelId: c, instanceId: 'inst_c', pooling: false, leaseExpiresAt: at(1_000), now: at(0) })).heldBy, b);
    await releaseRoute(store, route, b, 'inst_b2');
    assert.equal(
      (await claimRoute(store, { route, tunnelId: c, instanceId: 'inst_c', pooling: false, leaseExpiresAt: at(1_000), now: at(0) })).heldBy,
      undefined,
    );
  });
});
