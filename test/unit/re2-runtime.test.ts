// The edge's RE2 engine (re2js): Go's syntax and semantics, linear time on what would make V8's
// engine backtrack for ever, clear errors, Go's Expand templates, and the cache of compiled patterns.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileRe2, RE2_CACHE_SIZE } from '../../src/lib/regex/re2-runtime.js';

test('anchors: unanchored by default, ^ and $ at the ends of the input unless (?m)', () => {
  assert.equal(compileRe2('curl').test('x curl/8'), true);
  assert.equal(compileRe2('^curl').test('x curl/8'), false);
  assert.equal(compileRe2('^abc$').test('x\nabc'), false);
  assert.equal(compileRe2('(?m)^abc$').test('x\nabc'), true);
  assert.equal(compileRe2('a\\z').test('a\n'), false);
});

test('case: (?i) inline, the caseInsensitive flag, and neither', () => {
  assert.equal(compileRe2('(?i)curl/.*').test('CURL/8.4.0'), true);
  assert.equal(compileRe2('curl/.*').test('CURL/8.4.0'), false);
  assert.equal(compileRe2('curl/.*', { caseInsensitive: true }).test('CURL/8.4.0'), true);
  assert.equal(compileRe2('(?i:bot)X').test('BOTX'), true);
  assert.equal(compileRe2('(?i:bot)X').test('BOTx'), false);
});

test('classes: \\d, POSIX [[:alpha:]], Unicode \\p{…}, and . on a code point', () => {
  assert.deepEqual(compileRe2('\\d+').exec('Chrome/124.0'), ['124']);
  assert.deepEqual(compileRe2('[[:alpha:]]+').exec('123abc456'), ['abc']);
  assert.equal(compileRe2('^\\p{Greek}+$').test('αβγ'), true);
  assert.equal(compileRe2('^\\pL+$').test('żółw'), true);
  assert.equal(compileRe2('^.$').test('😀'), true);
  assert.equal(compileRe2('^\\x{1F600}$').test('😀'), true);
  assert.equal(compileRe2('\\-').test('a-b'), true);
});

test('a realistic User-Agent pattern, and groups with names', () => {
  const browser = compileRe2('^Mozilla/5\\.0 .*(Chrome|Firefox)/\\d+');
  assert.equal(browser.test('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36'), true);
  assert.equal(browser.test('curl/8.5.0'), false);
  assert.deepEqual(compileRe2('(?P<name>[a-z]+)/(\\d+)').exec('ua: curl/8'), ['curl/8', 'curl', '8']);
  assert.deepEqual(compileRe2('(a)|b').exec('b'), ['b', ''], 'a group that took no part is empty');
  assert.equal(compileRe2('x').exec('y'), null);
});

test('the pathological (a+)+$ finishes, with the right answer', () => {
  const started = performance.now();
  assert.equal(compileRe2('(a+)+$').test(`${'a'.repeat(30)}!`), false);
  assert.equal(compileRe2('(a+)+$').test('a'.repeat(30)), true);
  assert.equal(compileRe2('(x+x+)+y').test('x'.repeat(5000)), false);
  assert.ok(performance.now() - started < 2000);
});

test('an invalid pattern throws with the pattern and RE2’s reason', () => {
  const cases: [string, RegExp][] = [
    ['a(', /missing closing \)/],
    ['a(?=b)', /invalid or unsupported Perl syntax/],
    ['(a)\\1', /invalid escape sequence: `\\1`/],
    ['\\q', /invalid escape sequence/],
    ['a{1001}', /invalid repeat count/],
    ['(a{11}){100}', /invalid repeat count/],
    ['[z-a]', /invalid character class range/],
  ];
  for (const [pattern, reason] of cases) {
    assert.throws(
      () => compileRe2(pattern),
      (error: Error) => error.message.startsWith(`invalid regular expression (RE2) \`${pattern}\`: `) && reason.test(error.message),
      pattern,
    );
  }
});

test('replace: the first match, with Go’s Expand template', () => {
  const path = compileRe2('^/api/v(?P<version>\\d+)/(.*)$');
  assert.equal(path.replace('/api/v2/users/7', '/v$version/$2'), '/v2/users/7');
  assert.equal(path.replace('/api/v2/users/7', '/${version}x/${2}'), '/2x/users/7');
  assert.equal(path.replace('/other', '/x'), undefined);
  const word = compileRe2('(o)(x)?');
  assert.equal(word.replace('foo', '[$1]'), 'f[o]o', 'only the first match');
  assert.equal(word.replace('foo', '[$1x]'), 'f[]o', '$1x is the group named "1x"');
  assert.equal(word.replace('foo', '[$2|$9|$nope|$0]'), 'f[|||o]o', 'unknown and unmatched groups are empty');
  assert.equal(word.replace('foo', '$$1 ${1 $ ${}'), 'f$1 ${1 $ ${}o', '$$ and malformed references stay');
  assert.equal(compileRe2('é(.)').replace('😀éa😀', '<$1>'), '😀<a>😀', 'offsets in UTF-16 units');
  assert.equal(compileRe2('^').replace('abc', '/'), '/abc', 'an empty match');
});

test('the cache returns the same compiled object, per flags, and stays bounded', () => {
  const a = compileRe2('(?i)googlebot');
  assert.equal(compileRe2('(?i)googlebot'), a);
  assert.notEqual(compileRe2('(?i)googlebot', { caseInsensitive: true }), a);
  for (let i = 0; i < RE2_CACHE_SIZE; i++) compileRe2(`filler${i}`);
  assert.notEqual(compileRe2('(?i)googlebot'), a, 'the least recently used entry was dropped');
  const b = compileRe2('(?i)googlebot');
  for (let i = 0; i < RE2_CACHE_SIZE - 1; i++) {
    compileRe2(`other${i}`);
    if (i % 100 === 0) assert.equal(compileRe2('(?i)googlebot'), b, 'a pattern in use stays');
  }
});
