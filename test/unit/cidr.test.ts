import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IpMatcher, parseCidr } from '../../src/lib/ip/cidr.js';

describe('parseCidr', () => {
  it('accepts IPv4 and IPv6 networks in canonical form', () => {
    assert.deepEqual(pick(parseCidr('10.0.0.0/8')), { cidr: '10.0.0.0/8', family: 4, bits: 8 });
    assert.deepEqual(pick(parseCidr('0.0.0.0/0')), { cidr: '0.0.0.0/0', family: 4, bits: 0 });
    assert.deepEqual(pick(parseCidr('192.0.2.7/32')), { cidr: '192.0.2.7/32', family: 4, bits: 32 });
    assert.deepEqual(pick(parseCidr('2001:DB8:0:0::/32')), { cidr: '2001:db8::/32', family: 6, bits: 32 });
    assert.deepEqual(pick(parseCidr('::/0')), { cidr: '::/0', family: 6, bits: 0 });
  });

  it('refuses a host address in place of the network, suggesting the network', () => {
    assert.deepEqual(parseCidr('10.1.2.3/8'), { ok: false, problem: 'not-network', suggestion: '10.0.0.0/8' });
    assert.deepEqual(parseCidr('2001:db8::1/32'), { ok: false, problem: 'not-network', suggestion: '2001:db8::/32' });
  });

  it('refuses a missing mask apart from garbage', () => {
    assert.deepEqual(parseCidr('10.0.0.0'), { ok: false, problem: 'missing-mask' });
    assert.deepEqual(parseCidr('::1'), { ok: false, problem: 'missing-mask' });
  });

  for (const bad of [
    '300.1.1.1/8',
    '10.0.0.0/33',
    '::1/129',
    '',
    '/8',
    '10.0.0/8',
    '10.0.0.0/-1',
    '10.0.0.0/8/8',
    'fe80::1%eth0/64',
    ' 10.0.0.0/8',
    '010.0.0.0/8',
    '10.0.0.0/+8',
    'example.com/8',
  ]) {
    it(`refuses ${JSON.stringify(bad)}`, () => {
      const parsed = parseCidr(bad);
      assert.equal(parsed.ok, false);
      assert.notEqual((parsed as { problem: string }).problem, 'not-network');
    });
  }
});

describe('IpMatcher', () => {
  const matcher = new IpMatcher([
    { cidr: '10.0.0.0/8', action: 'allow' },
    { cidr: '10.9.0.0/16', action: 'deny' },
    { cidr: '192.0.2.7/32', action: 'allow' },
    { cidr: '2001:db8::/32', action: 'allow' },
    { cidr: '2001:db8:bad::/48', action: 'deny' },
  ]);

  it('allows what an allow rule matches', () => {
    assert.equal(matcher.allows('10.1.2.3'), true);
    assert.equal(matcher.allows('192.0.2.7'), true);
    assert.equal(matcher.allows('2001:db8:1::5'), true);
  });

  it('refuses what no allow rule matches', () => {
    assert.equal(matcher.allows('11.0.0.1'), false);
    assert.equal(matcher.allows('192.0.2.8'), false);
    assert.equal(matcher.allows('2001:db9::1'), false);
    assert.equal(matcher.allows('not an ip'), false);
  });

  it('lets deny win over allow', () => {
    assert.equal(matcher.allows('10.9.1.1'), false);
    assert.equal(matcher.allows('2001:db8:bad::1'), false);
  });

  it('matches IPv4-mapped IPv6 addresses against IPv4 rules', () => {
    assert.equal(matcher.allows('::ffff:10.1.2.3'), true);
    assert.equal(matcher.allows('::ffff:10.9.0.1'), false);
  });

  it('allows nothing without rules, and everything with 0.0.0.0/0 and ::/0', () => {
    assert.equal(new IpMatcher([]).allows('10.0.0.1'), false);
    const open = new IpMatcher([
      { cidr: '0.0.0.0/0', action: 'allow' },
      { cidr: '::/0', action: 'allow' },
    ]);
    assert.equal(open.allows('203.0.113.9'), true);
    assert.equal(open.allows('2001:db8::9'), true);
  });

  it('stays exact with many rules', () => {
    const rules = Array.from({ length: 1000 }, (_, i) => ({ cidr: `172.${16 + (i % 16)}.${Math.floor(i / 16)}.0/24`, action: 'allow' as const }));
    const many = new IpMatcher(rules);
    assert.equal(many.allows('172.16.0.9'), true);
    assert.equal(many.allows('172.31.61.200'), true);
    assert.equal(many.allows('172.16.63.1'), false);
  });
});

function pick(p: ReturnType<typeof parseCidr>) {
  assert.ok(p.ok, JSON.stringify(p));
  return { cidr: p.cidr, family: p.family, bits: p.bits };
}
