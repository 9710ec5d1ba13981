// The edge's RE2 engine (re2js, src/lib/regex/re2-runtime.ts) on the user_agent_filter's work:
// User-Agent strings tested against a few patterns, as a ratio to V8's RegExp on the same (safe)
// patterns in the same run. In-process and CPU-only; about a second and a half.
import { compileRe2 } from '../src/lib/regex/re2-runtime.js';

/** Time per engine per pattern set, split in alternating rounds so that drift hits both alike. */
const ROUNDS = 2;
const ROUND_MS = 120;
const AGENTS = 2_000;

/** Ten crawler patterns, any of which may match (also the edge rows' user_agent_filter). */
export const BOTS = [
  '(?i)googlebot',
  '(?i)bingbot',
  '(?i)gptbot',
  '(?i)ahrefsbot',
  '(?i)semrushbot',
  '(?i)yandex(bot|images)',
  '(?i)baiduspider',
  '(?i)duckduckbot',
  '(?i)facebookexternalhit',
  '(?i)^python-requests/',
];
const SETS: [string, string[]][] = [
  ['(?i)curl/.*', ['(?i)curl/.*']],
  ['^Mozilla/5\\.0 .*(Chrome|Firefox)/\\d+', ['^Mozilla/5\\.0 .*(Chrome|Firefox)/\\d+']],
  ['10 bot patterns (any)', BOTS],
];

/** A deterministic mix of browsers, tools and crawlers. */
function userAgents(): string[] {
  let seed = 42;
  const random = (n: number) => (seed = (seed * 1103515245 + 12345) >>> 0) % n;
  const pick = <T>(items: T[]): T => items[random(items.length)]!;
  const systems = [
    'Windows NT 10.0; Win64; x64',
    'Macintosh; Intel Mac OS X 10_15_7',
    'X11; Linux x86_64',
    'Linux; Android 14; Pixel 8',
    'iPhone; CPU iPhone OS 17_4 like Mac OS X',
  ];
  const makers = [
    () => `Mozilla/5.0 (${pick(systems)}) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${100 + random(30)}.0.${random(9999)}.${random(200)} Safari/537.36`,
    () => `Mozilla/5.0 (${pick(systems)}; rv:${100 + random(30)}.0) Gecko/20100101 Firefox/${100 + random(30)}.0`,
    () => `Mozilla/5.0 (${pick(systems)}) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.${random(5)} Mobile/15E148 Safari/604.1`,
    () => `curl/8.${random(10)}.${random(3)}`,
    () => `python-requests/2.${random(32)}.0`,
    () => `Go-http-client/${pick(['1.1', '2.0'])}`,
    () => 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
    () => 'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)',
    () => `Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.${random(3)}; +https://openai.com/gptbot)`,
  ];
  return Array.from({ length: AGENTS }, () => pick(makers)());
}

/** V8's spelling of these patterns: a leading (?i) becomes the i flag (Node 20 has no inline flags). */
function v8(source: string): RegExp {
  return source.startsWith('(?i)') ? new RegExp(source.slice(4), 'i') : new RegExp(source);
}

type Tester = (input: string) => boolean;

/** Strings tested per second in `ms`, and how many matched in one pass (to check both engines agree). */
function run(agents: string[], tests: Tester[], ms: number): { rate: number; hits: number } {
  const pass = () => {
    let hits = 0;
    for (const agent of agents) if (tests.some((t) => t(agent))) hits++;
    return hits;
  };
  const hits = pass();
  const started = performance.now();
  let passes = 0;
  while (performance.now() - started < ms) {
    pass();
    passes++;
  }
  return { rate: (passes * agents.length) / ((performance.now() - started) / 1000), hits };
}

/** Prints one row per pattern set (V8 and re2js strings/s and their ratio) and returns whether the engines agreed. */
export function benchRegex(table: (header: string[], rows: string[][], left: number[]) => string[]): boolean {
  console.log(
    `\nregex: user_agent_filter's test of ${AGENTS.toLocaleString('en-US')} User-Agent strings, re2js (the edge's RE2) against V8's RegExp, in-process`,
  );
  const agents = userAgents();
  const rows: string[][] = [];
  let agreed = true;
  for (const [label, sources] of SETS) {
    const native = sources
      .map((s) => v8(s))
      .map(
        (r): Tester =>
          (input) =>
            r.test(input),
      );
    const re2 = sources
      .map((s) => compileRe2(s))
      .map(
        (r): Tester =>
          (input) =>
            r.test(input),
      );
    let v8Rate = 0;
    let re2Rate = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const a = run(agents, native, ROUND_MS);
      const b = run(agents, re2, ROUND_MS);
      if (a.hits !== b.hits) agreed = false;
      v8Rate += a.rate / ROUNDS;
      re2Rate += b.rate / ROUNDS;
    }
    const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
    rows.push([label, fmt(v8Rate), fmt(re2Rate), (re2Rate / v8Rate).toFixed(2)]);
  }
  for (const line of table(['patterns', 'V8 strings/s', 're2js strings/s', 'ratio'], rows, [0])) console.log(`  ${line}`);
  const started = performance.now();
  const answer = compileRe2('(a+)+$').test(`${'a'.repeat(30)}!`);
  console.log(`  (a+)+$ on 30 a's and '!': ${answer} in ${(performance.now() - started).toFixed(2)} ms with re2js (V8 takes time exponential in the a's)`);
  if (!agreed) console.log('  FAILED: re2js and V8 disagreed on which strings match');
  return agreed;
}
