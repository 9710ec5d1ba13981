import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hasPrefix, ksuid, newId, randomBase62 } from '../../src/core/ids.js';

describe('ids', () => {
  it('are a prefix and 27 base62 characters', () => {
    assert.match(newId('ak'), /^ak_[0-9A-Za-z]{27}$/);
  });

  it('sort in creation order, within a second too', () => {
    const now = Date.UTC(2026, 0, 1);
    const ids = Array.from({ length: 1000 }, () => ksuid(now));
    assert.deepEqual([...ids].sort(), ids);
    assert.equal(new Set(ids).size, ids.length);
    assert.ok(ksuid(now + 1000) > ids[ids.length - 1]!, 'a later second sorts after');
  });

  it('check the prefix and the body', () => {
    const id = newId('bot');
    assert.ok(hasPrefix(id, 'bot'));
    assert.ok(!hasPrefix(id, 'bo'));
    assert.ok(!hasPrefix(id.slice(0, -1), 'bot'));
    assert.ok(!hasPrefix(`${id.slice(0, -1)}!`, 'bot'));
  });

  it('make random base62 strings of the asked length with every symbol in use', () => {
    const s = randomBase62(5000);
    assert.equal(s.length, 5000);
    assert.match(s, /^[0-9A-Za-z]+$/);
    assert.equal(new Set(s).size, 62);
  });

  it('make secrets without bias and never the same twice', () => {
    // Without rejection sampling the symbols 0-7 would come 21 % more often than the others.
    const counts = new Map<string, number>();
    for (const c of randomBase62(124_000)) counts.set(c, (counts.get(c) ?? 0) + 1);
    for (const [symbol, count] of counts) assert.ok(Math.abs(count - 2000) < 200, `symbol ${symbol} came ${count} times, expected about 2000`);
    const secrets = new Set(Array.from({ length: 2000 }, () => randomBase62(40)));
    assert.equal(secrets.size, 2000);
  });
});

describe('ids (layout)', () => {
  it('carry the creation second in their first 32 bits', () => {
    const now = Date.UTC(2026, 10, 21, 12, 0, 0);
    const body = ksuid(now);
    let n = 0n;
    for (const c of body) n = n * 62n + BigInt('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'.indexOf(c));
    assert.equal(Number(n >> 128n), now / 1000 - 1_400_000_000);
    assert.ok(n < 1n << 160n);
  });
});
