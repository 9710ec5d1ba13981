// The access checks an edge makes before any upstream (src/edges/access.ts): the IP restriction
// over the IP policies it names, and the user agent filter's RE2 allow and deny lists.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ipAllowed, userAgentAllowed } from '../../src/edges/access.js';
import type { IpPolicyRules, IpRestrictionModule, UserAgentFilterModule } from '../../src/edges/edge-config.js';

const POLICIES = new Map<string, IpPolicyRules>([
  ['ipp_office', { allow: ['10.0.0.0/8'], deny: [] }],
  ['ipp_home', { allow: ['192.168.0.0/16', '203.0.113.7/32'], deny: [] }],
  ['ipp_lab', { allow: [], deny: ['10.1.0.0/16'] }],
  ['ipp_mixed', { allow: ['198.51.100.0/24'], deny: ['198.51.100.128/25'] }],
  ['ipp_v6', { allow: ['2001:db8::/32'], deny: ['2001:db8:bad::/48'] }],
  ['ipp_any_v4', { allow: ['0.0.0.0/0'], deny: [] }],
  ['ipp_any_v6', { allow: ['::/0'], deny: [] }],
  ['ipp_empty', { allow: [], deny: [] }],
]);

/**
 * A fresh module object for each check: the compiled rules are kept per module object (one per
 * configuration snapshot), so reusing one across different policy maps would test the cache.
 */
const allowed = (ids: string[], ip: string, policies: ReadonlyMap<string, IpPolicyRules> = POLICIES) =>
  ipAllowed({ enabled: true, ip_policy_ids: ids } satisfies IpRestrictionModule, policies, ip);

describe('ipAllowed', () => {
  it('lets in an address some allow rule matches, and no other', () => {
    assert.equal(allowed(['ipp_office'], '10.20.30.40'), true);
    assert.equal(allowed(['ipp_office'], '10.0.0.0'), true);
    assert.equal(allowed(['ipp_office'], '10.255.255.255'), true);
    assert.equal(allowed(['ipp_office'], '11.0.0.1'), false);
    assert.equal(allowed(['ipp_office'], '9.255.255.255'), false);
  });

  it('takes the allow rules of every policy named', () => {
    const ids = ['ipp_office', 'ipp_home'];
    assert.equal(allowed(ids, '10.1.2.3'), true);
    assert.equal(allowed(ids, '192.168.1.1'), true);
    assert.equal(allowed(ids, '203.0.113.7'), true);
    assert.equal(allowed(ids, '203.0.113.8'), false);
    assert.equal(allowed(ids, '172.16.0.1'), false);
  });

  it('refuses an address a deny rule of any policy matches, even one another policy allows', () => {
    for (const ids of [
      ['ipp_office', 'ipp_lab'],
      ['ipp_lab', 'ipp_office'],
    ]) {
      assert.equal(allowed(ids, '10.1.2.3'), false, ids.join());
      assert.equal(allowed(ids, '10.2.0.1'), true, ids.join());
    }
    assert.equal(allowed(['ipp_any_v4', 'ipp_lab'], '10.1.0.0'), false);
    assert.equal(allowed(['ipp_any_v4', 'ipp_lab'], '8.8.8.8'), true);
  });

  it('lets deny win within one policy too', () => {
    assert.equal(allowed(['ipp_mixed'], '198.51.100.127'), true);
    assert.equal(allowed(['ipp_mixed'], '198.51.100.128'), false);
    assert.equal(allowed(['ipp_mixed'], '198.51.100.255'), false);
  });

  it('refuses everyone when the policies have deny rules alone, or no rule, or there is no policy', () => {
    assert.equal(allowed(['ipp_lab'], '10.2.0.1'), false);
    assert.equal(allowed(['ipp_lab'], '8.8.8.8'), false);
    assert.equal(allowed(['ipp_empty'], '8.8.8.8'), false);
    assert.equal(allowed([], '8.8.8.8'), false);
  });

  it('takes no rule from a policy deleted meanwhile', () => {
    assert.equal(allowed(['ipp_gone', 'ipp_office'], '10.1.2.3'), true);
    assert.equal(allowed(['ipp_office', 'ipp_gone'], '11.0.0.1'), false);
    assert.equal(allowed(['ipp_gone'], '10.1.2.3'), false);
    // Deleting the policy that denied a range lets that range in again.
    const withoutLab = new Map([...POLICIES].filter(([id]) => id !== 'ipp_lab'));
    assert.equal(allowed(['ipp_office', 'ipp_lab'], '10.1.2.3', withoutLab), true);
  });

  it('matches IPv6 addresses against IPv6 rules', () => {
    assert.equal(allowed(['ipp_v6'], '2001:db8::1'), true);
    assert.equal(allowed(['ipp_v6'], '2001:DB8:ffff::1'), true);
    assert.equal(allowed(['ipp_v6'], '2001:db9::1'), false);
    assert.equal(allowed(['ipp_v6'], '2001:db8:bad::1'), false);
    assert.equal(allowed(['ipp_v6'], '2001:db8:bad:ffff::1'), false);
    assert.equal(allowed(['ipp_v6'], '2001:db8:bae::1'), true);
  });

  it('keeps the families apart: an IPv4 rule never matches an IPv6 address, nor the other way', () => {
    assert.equal(allowed(['ipp_any_v4'], '2001:db8::1'), false);
    assert.equal(allowed(['ipp_any_v6'], '10.1.2.3'), false);
    assert.equal(allowed(['ipp_any_v6'], '::1'), true);
    assert.equal(allowed(['ipp_any_v4', 'ipp_any_v6'], '10.1.2.3'), true);
    assert.equal(allowed(['ipp_any_v4', 'ipp_any_v6'], '::1'), true);
  });

  it('matches an IPv4-mapped IPv6 address as the IPv4 address it carries', () => {
    assert.equal(allowed(['ipp_office'], '::ffff:10.1.2.3'), true);
    assert.equal(allowed(['ipp_office'], '::ffff:11.1.2.3'), false);
    assert.equal(allowed(['ipp_office', 'ipp_lab'], '::ffff:10.1.2.3'), false);
    assert.equal(allowed(['ipp_office', 'ipp_lab'], '::ffff:10.2.0.1'), true);
    assert.equal(allowed(['ipp_any_v6'], '::ffff:10.1.2.3'), false);
  });

  it('refuses a client address that is not an address', () => {
    assert.equal(allowed(['ipp_any_v4', 'ipp_any_v6'], ''), false);
    assert.equal(allowed(['ipp_any_v4', 'ipp_any_v6'], 'localhost'), false);
    assert.equal(allowed(['ipp_any_v4', 'ipp_any_v6'], '10.0.0.256'), false);
  });
});

const filter = (allow: string[], deny: string[]): UserAgentFilterModule => ({ enabled: true, allow, deny });

const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const BINGBOT = 'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)';

describe('userAgentAllowed', () => {
  it('lets everything through with no pattern', () => {
    const f = filter([], []);
    for (const ua of [CHROME, GOOGLEBOT, '']) assert.equal(userAgentAllowed(f, ua), true, ua);
  });

  it('lets a user agent an allow pattern matches through, even when a deny pattern matches it too', () => {
    const f = filter(['Googlebot'], ['(?i)bot']);
    assert.equal(userAgentAllowed(f, GOOGLEBOT), true);
    assert.equal(userAgentAllowed(f, BINGBOT), false);
  });

  it('lets the rest through when there are both allow and deny patterns', () => {
    const f = filter(['Googlebot'], ['(?i)bot']);
    assert.equal(userAgentAllowed(f, CHROME), true);
    assert.equal(userAgentAllowed(f, ''), true);
  });

  it('with allow patterns alone, refuses everything they do not match', () => {
    const f = filter(['^curl/', 'Chrome/'], []);
    assert.equal(userAgentAllowed(f, 'curl/8.4.0'), true);
    assert.equal(userAgentAllowed(f, CHROME), true);
    assert.equal(userAgentAllowed(f, GOOGLEBOT), false);
    assert.equal(userAgentAllowed(f, 'my curl/8.4.0'), false);
    assert.equal(userAgentAllowed(f, ''), false);
  });

  it('with deny patterns alone, refuses what they match and lets the rest through', () => {
    const f = filter([], ['sqlmap', 'bingbot']);
    assert.equal(userAgentAllowed(f, 'sqlmap/1.7'), false);
    assert.equal(userAgentAllowed(f, BINGBOT), false);
    assert.equal(userAgentAllowed(f, CHROME), true);
    assert.equal(userAgentAllowed(f, GOOGLEBOT), true);
    assert.equal(userAgentAllowed(f, ''), true);
  });

  it('matches patterns unanchored and case-sensitively unless told otherwise', () => {
    const f = filter([], ['bot']);
    assert.equal(userAgentAllowed(f, GOOGLEBOT), false, 'bot in bot.html');
    assert.equal(userAgentAllowed(f, 'Mozilla/5.0 (compatible; YandexBot/3.0)'), true, 'Bot is not bot');
    assert.equal(userAgentAllowed(f, 'robot'), false);
  });

  it('reads RE2 syntax: (?i) makes a pattern case-insensitive', () => {
    const f = filter([], ['(?i)^sqlmap']);
    assert.equal(userAgentAllowed(f, 'SQLMap/1.7'), false);
    assert.equal(userAgentAllowed(f, 'sqlmap/1.7'), false);
    assert.equal(userAgentAllowed(f, 'not sqlmap'), true);
  });

  it('reads RE2 syntax: POSIX classes such as [[:digit:]]', () => {
    const f = filter(['^curl/[[:digit:]]+\\.[[:digit:]]+'], []);
    assert.equal(userAgentAllowed(f, 'curl/8.4.0'), true);
    assert.equal(userAgentAllowed(f, 'curl/x.y'), false);
    // As a JavaScript class `[[:digit:]]` would be one of `[:digt` followed by `]`.
    assert.equal(userAgentAllowed(f, 'curl/:].d]'), false);
  });

  it('matches a request without User-Agent as the empty string', () => {
    const f = filter([], ['^$']);
    assert.equal(userAgentAllowed(f, ''), false);
    assert.equal(userAgentAllowed(f, CHROME), true);
    const onlyEmpty = filter(['^$'], []);
    assert.equal(userAgentAllowed(onlyEmpty, ''), true);
    assert.equal(userAgentAllowed(onlyEmpty, CHROME), false);
  });

  // The API refuses these patterns, so the modules are built directly, as a damaged row would read.
  for (const [what, f] of [
    ['an unbalanced group in allow', filter(['('], ['sqlmap'])],
    ['an invalid range in deny', filter([], ['[z-a]'])],
    ['a backreference (JavaScript, not RE2)', filter([], ['(a)\\1'])],
    ['a lookahead (JavaScript, not RE2)', filter(['(?=Mozilla)'], [])],
    ['one bad pattern among good ones', filter(['Mozilla', 'Chrome'], ['bot', '(?P<'])],
  ] as const) {
    it(`refuses every request when a pattern does not compile: ${what}`, () => {
      for (const ua of [CHROME, GOOGLEBOT, 'curl/8.4.0', '']) assert.equal(userAgentAllowed(f, ua), false, ua);
    });
  }
});
