// RE2 patterns checked with JavaScript's engine: RE2's own spellings are accepted, what only
// JavaScript has is refused, and what neither compiles is refused with the engine's reason.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lowerCasedHeaders } from '../../src/lib/http/syntax.js';
import { withoutCredentials } from '../../src/lib/http/url.js';
import { re2Problem } from '../../src/lib/regex/re2.js';

describe('re2Problem', () => {
  it('accepts RE2 spellings JavaScript lacks: named groups, inline flags, escaped punctuation', () => {
    for (const pattern of ['(?P<id>[0-9]+)', '(?i)bot', '(?is:a.b)', 'a\\-b', '[a\\-z]', '\\:\\#\\@', 'curl/\\d+\\.\\d+', '\\p{L}+']) {
      assert.equal(re2Problem(pattern), undefined, pattern);
    }
  });

  it('refuses what RE2 has not: lookaround, backreferences, unknown escapes, unknown flags', () => {
    assert.match(re2Problem('a(?=b)')!, /^uses a lookaround/);
    assert.match(re2Problem('(?<!a)b')!, /^uses a lookaround/);
    assert.match(re2Problem('(a)\\1')!, /^uses a backreference \(\\1\)/);
    assert.match(re2Problem('\\q')!, /^is not a valid regular expression/);
    assert.match(re2Problem('(?x)abc')!, /^is not a valid regular expression/);
  });

  it('refuses what does not compile, with the reason', () => {
    assert.match(re2Problem('[unclosed')!, /^is not a valid regular expression: Unterminated character class/);
    assert.match(re2Problem('(a')!, /Unterminated group/);
  });

  it('refuses counts RE2 refuses: above 1000, or nested so that a part is copied more than 1000 times', () => {
    for (const pattern of [
      'a{1000}',
      'a{2,1000}',
      '(a{10}){100}',
      '(?:a{2}){500}',
      '(a{0}){1000}',
      '\\p{L}{1000}',
      '[{1001}]',
      'a\\{1001\\}',
      '(a{2}){2}b{1000}',
    ]) {
      assert.equal(re2Problem(pattern), undefined, pattern);
    }
    assert.equal(re2Problem('a{1001}'), 'repeats more than 1000 times ({1001}); RE2 allows at most 1000');
    assert.match(re2Problem('a{0,1001}')!, /^repeats more than 1000 times \(\{0,1001\}\)/);
    assert.match(re2Problem('a{1001,}')!, /^repeats more than 1000 times/);
    assert.match(re2Problem('(a{11}){100}')!, /^nests counted repetitions \(\{11\} inside \{100\}\) that copy a part more than 1000 times/);
    assert.match(re2Problem('x(a{10}|b{101}){10}')!, /\{101\} inside \{10\}/);
    assert.match(re2Problem('a{5}(b{300}){4}')!, /\{300\} inside \{4\}/);
  });

  it('counts nested groups deeper than the call stack without failing, and refuses what RE2 would not compile', () => {
    const deep = `${'('.repeat(20_000)}a${'){1}'.repeat(20_000)}`;
    assert.match(re2Problem(deep)!, /^is not a valid RE2 regular expression: .*nest/i);
    assert.equal(re2Problem(`${'('.repeat(900)}a${')'.repeat(900)}`), undefined);
    // JavaScript compiles these; RE2 does not.
    for (const pattern of ['\\cA', '\\u0041']) assert.match(re2Problem(pattern)!, /RE2/, pattern);
  });
});

describe('lowerCasedHeaders', () => {
  it('lower-cases names and keeps a header named __proto__', () => {
    assert.deepEqual(lowerCasedHeaders({ 'X-A': '1', __proto__x: '2' }), { headers: { 'x-a': '1', __proto__x: '2' } });
    const proto = lowerCasedHeaders(JSON.parse('{"__proto__":"v"}') as Record<string, string>);
    assert.ok('headers' in proto && Object.hasOwn(proto.headers, '__proto__') && proto.headers['__proto__'] === 'v');
  });

  it('names the first problem: a name that is no token, a value with a control character, a duplicate', () => {
    assert.deepEqual(lowerCasedHeaders({ 'bad name': 'v' }), { problem: 'name', name: 'bad name' });
    assert.deepEqual(lowerCasedHeaders({ 'x-a': 'a\r\nb' }), { problem: 'value', name: 'x-a' });
    assert.deepEqual(
      lowerCasedHeaders({ 'x-a': 'long' }, (v) => v.length < 4),
      { problem: 'value', name: 'x-a' },
    );
    assert.deepEqual(lowerCasedHeaders({ 'X-A': '1', 'x-a': '2' }), { problem: 'duplicate', name: 'x-a' });
  });
});

describe('withoutCredentials', () => {
  it("hides a URL's user and password, even in a value that is no valid URL, and leaves the rest", () => {
    const cases: [string, string][] = [
      ['https://alice:s3cret@idp.example.com/x', 'https://***@idp.example.com/x'],
      ['alice:s3cret@idp.example.com', '***@idp.example.com'],
      ['https://a@b:p@ss@host/', 'https://***@host/'],
      ['https://u:p/ss@host/path', 'https://***@host/path'],
      ['see https://u:p@h and http://h', 'see https://***@h and http://h'],
      ['https://idp.example.com/realms/x', 'https://idp.example.com/realms/x'],
    ];
    for (const [value, shown] of cases) assert.equal(withoutCredentials(value), shown, value);
  });
});
