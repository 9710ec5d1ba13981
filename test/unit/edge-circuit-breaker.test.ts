// A route's circuit breaker (src/edges/circuit-breaker.ts), on a clock the tests move: when it
// trips, what it refuses while tripped, the one probe it lets through afterwards, and the rolling
// window of buckets its statistics are kept in; and the breakers of all routes across reloads.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CircuitBreaker, CircuitBreakers } from '../../src/edges/circuit-breaker.js';
import type { CircuitBreakerModule } from '../../src/edges/edge-config.js';

/** 10 s window in 10 buckets of 1 s; trips at 50 % errors among at least 4 requests; open for 5 s. */
const CONFIG: CircuitBreakerModule = {
  enabled: true,
  tripped_duration: 5,
  rolling_window: 10,
  num_buckets: 10,
  volume_threshold: 4,
  error_threshold_percentage: 0.5,
};

function clock(start = 1_000_000) {
  const c = { now: start, read: () => c.now };
  return c;
}

function breaker(overrides: Partial<CircuitBreakerModule> = {}, start?: number) {
  const c = clock(start);
  return { c, b: new CircuitBreaker({ ...CONFIG, ...overrides }, c.read) };
}

/** Lets one request through and records its outcome. */
function request(b: CircuitBreaker, error: boolean): void {
  const pass = b.allow();
  assert.ok(pass, 'the request should have been let through');
  pass.record(error);
}

/** Trips the breaker with `volume_threshold` errors at the current time. */
function trip(b: CircuitBreaker): void {
  for (let i = 0; i < b.config.volume_threshold; i++) request(b, true);
  assert.equal(b.tripped, true);
}

describe('CircuitBreaker', () => {
  it('lets every request through while closed', () => {
    const { b } = breaker();
    assert.equal(b.tripped, false);
    for (let i = 0; i < 50; i++) request(b, false);
    assert.equal(b.tripped, false);
    assert.ok(b.allow());
  });

  it('does not trip below the volume threshold, however many of the requests failed', () => {
    const { b } = breaker();
    for (let i = 0; i < 3; i++) request(b, true);
    assert.equal(b.tripped, false);
    const fourth = b.allow();
    assert.ok(fourth);
    fourth.record(true); // the 4th request: the volume is reached
    assert.equal(b.tripped, true);
  });

  it('trips when the errors reach the threshold fraction of the window, not before', () => {
    const { b } = breaker();
    request(b, false);
    request(b, false);
    request(b, false);
    request(b, true); // 1 of 4
    request(b, true); // 2 of 5
    assert.equal(b.tripped, false);
    request(b, true); // 3 of 6: 50 %
    assert.equal(b.tripped, true);
  });

  it('counts the requests of every bucket in the window together', () => {
    const { c, b } = breaker();
    request(b, true);
    c.now += 1000;
    request(b, false);
    c.now += 3000;
    request(b, true);
    assert.equal(b.tripped, false);
    c.now += 4000;
    request(b, false); // 2 of 4 over 8 s
    assert.equal(b.tripped, true);
  });

  it('with a threshold of 1.0 trips only when every request failed', () => {
    const { b } = breaker({ error_threshold_percentage: 1 });
    request(b, false);
    for (let i = 0; i < 10; i++) request(b, true);
    assert.equal(b.tripped, false);
    const { b: all } = breaker({ error_threshold_percentage: 1 });
    for (let i = 0; i < 4; i++) request(all, true);
    assert.equal(all.tripped, true);
  });

  it('with a threshold of 0 still needs an error to trip', () => {
    const { b } = breaker({ error_threshold_percentage: 0, volume_threshold: 0 });
    for (let i = 0; i < 10; i++) request(b, false);
    assert.equal(b.tripped, false);
    request(b, true);
    assert.equal(b.tripped, true);
  });

  it('refuses every request for tripped_duration once tripped', () => {
    const { c, b } = breaker();
    trip(b);
    const trippedAt = c.now;
    for (const after of [0, 1, 2500, 4999]) {
      c.now = trippedAt + after;
      assert.equal(b.tripped, true, `${after} ms after tripping`);
      assert.equal(b.allow(), undefined, `${after} ms after tripping`);
    }
  });

  it('lets exactly one probe through once tripped_duration is over', () => {
    const { c, b } = breaker();
    trip(b);
    c.now += 5000;
    assert.equal(b.tripped, false);
    assert.ok(b.allow());
    assert.equal(b.allow(), undefined);
    c.now += 60_000;
    assert.equal(b.allow(), undefined, 'still waiting for the probe to answer');
  });

  it('closes when the probe succeeds, with a fresh window', () => {
    const { c, b } = breaker();
    // 2 successes and 2 errors trip it; they are still inside the window when it closes.
    request(b, false);
    request(b, false);
    request(b, true);
    request(b, true);
    assert.equal(b.tripped, true);
    c.now += 5000;
    request(b, false); // the probe
    assert.equal(b.tripped, false);
    assert.ok(b.allow());
    assert.ok(b.allow());
    // The old window (2 of 4 errors) would trip again with one more error: a fresh one does not.
    request(b, true);
    assert.equal(b.tripped, false);
    request(b, true);
    request(b, true);
    assert.equal(b.tripped, false, '3 errors are below the volume threshold of the fresh window');
    request(b, true);
    assert.equal(b.tripped, true);
  });

  it('trips again for tripped_duration when the probe fails', () => {
    const { c, b } = breaker();
    trip(b);
    c.now += 5000;
    request(b, true); // the probe
    assert.equal(b.tripped, true);
    const retrippedAt = c.now;
    for (const after of [0, 4999]) {
      c.now = retrippedAt + after;
      assert.equal(b.allow(), undefined, `${after} ms after the failed probe`);
    }
    c.now = retrippedAt + 5000;
    const probe = b.allow();
    assert.ok(probe, 'the next probe');
    assert.equal(b.allow(), undefined);
    probe.record(false);
    assert.equal(b.tripped, false);
    assert.ok(b.allow());
  });

  it('uses tripped_duration in seconds', () => {
    const { c, b } = breaker({ tripped_duration: 30 });
    trip(b);
    c.now += 29_999;
    assert.equal(b.allow(), undefined);
    c.now += 1;
    assert.ok(b.allow());
  });

  it('forgets errors whose bucket has rolled out of the window', () => {
    const start = 2_000_000; // a bucket boundary
    // Three errors at the start of the window, one more 11 s later: the first three are gone.
    const late = breaker({}, start);
    for (let i = 0; i < 3; i++) request(late.b, true);
    late.c.now = start + 11_000;
    request(late.b, true);
    assert.equal(late.b.tripped, false);
    // The same errors with the last one inside the window trip it.
    const inside = breaker({}, start);
    for (let i = 0; i < 3; i++) request(inside.b, true);
    inside.c.now = start + 9_999;
    request(inside.b, true);
    assert.equal(inside.b.tripped, true);
  });

  it('forgets old successes too, so they cannot dilute new errors', () => {
    const start = 2_000_000;
    const { c, b } = breaker({}, start);
    for (let i = 0; i < 20; i++) request(b, false);
    c.now = start + 20_000;
    for (let i = 0; i < 3; i++) request(b, true);
    assert.equal(b.tripped, false, 'below the volume threshold once the successes are gone');
    request(b, true);
    assert.equal(b.tripped, true);
  });

  it('drops a bucket once it has rolled out, and keeps the ones still inside', () => {
    const start = 2_000_000;
    const { c, b } = breaker({}, start);
    // Times are chosen so that no bucket is within a bucket's width of the window's edge.
    for (let i = 0; i < 4; i++) request(b, false);
    for (const at of [2000, 4000, 6000]) {
      c.now = start + at;
      request(b, true);
    }
    assert.equal(b.tripped, false, '3 errors of 7');
    c.now = start + 9_500;
    request(b, false);
    assert.equal(b.tripped, false, '3 errors of 8: the first bucket is still inside');
    c.now = start + 11_500;
    request(b, false);
    assert.equal(b.tripped, true, '3 errors of 5: the first bucket is gone, the others are not');
  });

  it('does not count an error older than rolling_window (one bucket)', () => {
    const start = 2_000_000;
    const { c, b } = breaker({ num_buckets: 1, volume_threshold: 2, error_threshold_percentage: 1 }, start);
    request(b, true);
    c.now = start + 15_000; // the first error is 15 s old, the window 10 s
    request(b, true);
    assert.equal(b.tripped, false);
  });

  it('decides the half-open state by the probe, not by a request let through before tripping', () => {
    const { c, b } = breaker();
    const slow = b.allow(); // a slow request, let through while closed
    assert.ok(slow);
    trip(b);
    c.now += 5000;
    const probe = b.allow();
    assert.ok(probe);
    slow.record(false); // the slow request answers first, fine
    assert.equal(b.allow(), undefined, 'still waiting for the probe');
    probe.record(true);
    assert.equal(b.tripped, true, 'the probe failed: tripped again');
    slow.record(false);
    assert.equal(b.tripped, true, 'a pass tells its outcome once');
  });
});

describe('CircuitBreakers', () => {
  it('keeps the same breaker for a route while its settings are the same', () => {
    const breakers = new CircuitBreakers(clock().read);
    const first = breakers.of('edghtsrt_1', CONFIG);
    assert.equal(breakers.of('edghtsrt_1', CONFIG), first);
    assert.equal(breakers.of('edghtsrt_1', { ...CONFIG }), first, 'an equal configuration read again');
  });

  it('keeps the state of a breaker across a reload with the same settings', () => {
    const breakers = new CircuitBreakers(clock().read);
    trip(breakers.of('edghtsrt_1', CONFIG));
    assert.equal(breakers.of('edghtsrt_1', { ...CONFIG }).tripped, true);
  });

  it('gives each route its own breaker', () => {
    const breakers = new CircuitBreakers(clock().read);
    const one = breakers.of('edghtsrt_1', CONFIG);
    const two = breakers.of('edghtsrt_2', CONFIG);
    assert.notEqual(one, two);
    trip(one);
    assert.equal(two.tripped, false);
    assert.ok(two.allow());
  });

  for (const [field, value] of [
    ['tripped_duration', 6],
    ['rolling_window', 20],
    ['num_buckets', 5],
    ['volume_threshold', 10],
    ['error_threshold_percentage', 0.75],
  ] as const) {
    it(`starts a fresh breaker when ${field} changes`, () => {
      const breakers = new CircuitBreakers(clock().read);
      const old = breakers.of('edghtsrt_1', CONFIG);
      trip(old);
      const changed = { ...CONFIG, [field]: value };
      const fresh = breakers.of('edghtsrt_1', changed);
      assert.notEqual(fresh, old);
      assert.equal(fresh.config, changed);
      assert.equal(fresh.tripped, false);
      assert.equal(breakers.of('edghtsrt_1', changed), fresh, 'then kept while the new settings stay');
      assert.notEqual(breakers.of('edghtsrt_1', CONFIG), old, 'a change back starts another one');
    });
  }

  it('gives its breakers its clock', () => {
    const c = clock();
    const breakers = new CircuitBreakers(c.read);
    const b = breakers.of('edghtsrt_1', CONFIG);
    trip(b);
    c.now += 4999;
    assert.equal(b.allow(), undefined);
    c.now += 1;
    assert.ok(b.allow());
  });

  it('forgets the breakers of routes not listed when pruned, and keeps the others', () => {
    const breakers = new CircuitBreakers(clock().read);
    const kept = breakers.of('edghtsrt_kept', CONFIG);
    const gone = breakers.of('edghtsrt_gone', CONFIG);
    trip(gone);
    breakers.prune(new Set(['edghtsrt_kept', 'edghtsrt_other']));
    assert.equal(breakers.of('edghtsrt_kept', CONFIG), kept);
    const again = breakers.of('edghtsrt_gone', CONFIG);
    assert.notEqual(again, gone);
    assert.equal(again.tripped, false);
  });

  it('forgets every breaker when pruned with no route', () => {
    const breakers = new CircuitBreakers(clock().read);
    const one = breakers.of('edghtsrt_1', CONFIG);
    const two = breakers.of('edghtsrt_2', CONFIG);
    breakers.prune(new Set());
    assert.notEqual(breakers.of('edghtsrt_1', CONFIG), one);
    assert.notEqual(breakers.of('edghtsrt_2', CONFIG), two);
  });
});
