// Regular expressions that the edge runs with RE2 (Go's syntax; re2-runtime.ts), checked before
// they are stored: the edge's own engine decides, so that what is stored is what the edge runs.
// When it refuses a pattern, JavaScript's engine words why where it can (it says more than RE2
// of what is wrong): RE2's own spellings are rewritten first and what only JavaScript has is
// named. Pure: the caller words the error.
import { compileRe2 } from './re2-runtime.js';

/** What JavaScript compiles and RE2 does not: lookaround and backreferences. */
function unsupported(source: string): string | undefined {
  for (let i = 0; i < source.length; i++) {
    if (source[i] === '\\') {
      const next = source[i + 1] ?? '';
      if (/[1-9]/.test(next) || next === 'k') return `a backreference (\\${next})`;
      i++;
    } else if (source.startsWith('(?=', i) || source.startsWith('(?!', i) || source.startsWith('(?<=', i) || source.startsWith('(?<!', i)) {
      return 'a lookaround';
    }
  }
  return undefined;
}

/** Why RE2 would not compile `source` (as far as JavaScript can tell), or undefined. */
export function re2Problem(source: string): string | undefined {
  let refused: string | undefined;
  try {
    compileRe2(source);
    return undefined;
  } catch (error) {
    refused = String((error as Error).message).replace(/^invalid regular expression \(RE2\) \x60.*\x60: /s, '');
  }
  // RE2 refuses it: JavaScript's engine (or the repeat count) says why in plainer words, when it can.
  const only = unsupported(source);
  if (only) return `uses ${only}; the edge's regular expressions (RE2) have none`;
  try {
    // Unicode mode, like RE2, refuses unknown escapes such as \q.
    new RegExp(re2AsJavaScript(source), 'u');
  } catch (error) {
    return `is not a valid regular expression: ${String((error as Error).message).replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '')}`;
  }
  return repeatProblem(source) ?? `is not a valid RE2 regular expression: ${refused}`;
}

/** RE2's (and Go's) largest count in {n}, {n,} and {n,m}, alone and multiplied through nested counts. */
export const MAX_REPEAT = 1000;

/** A counted repetition ({n}, {n,}, {n,m}) and the counted repetitions inside what it repeats. */
interface Repeat {
  count: number;
  spelled: string;
  inner: Repeat[];
}

// Sticky, so that each is tried where the scan is, without copying the rest of the pattern.
const BRACED_ESCAPE = /\\[pPx]\{[^}]*\}/y;
const NAMED_CLASS = /\[:\^?[a-z]+:\]/y;
const COUNT = /\{(\d+)(,(\d*))?\}/y;

/**
 * Why RE2 would refuse the counts of `source`, which JavaScript compiles: a count above 1000
 * (`a{1001}`), or counts nested so that the innermost is copied more than 1000 times
 * (`(a{100}){20}`). The nesting rule is RE2's RepetitionWalker and Go's repeatIsValid: each
 * count divides what is left of the 1000 (`{n,}` counts n, `{0}` counts nothing).
 */
function repeatProblem(source: string): string | undefined {
  const groups: Repeat[][] = [[]];
  // What the next quantifier applies to: the counted repetitions inside the last atom.
  let last: Repeat[] = [];
  for (let i = 0; i < source.length; i++) {
    const char = source[i]!;
    if (char === '\\') {
      // \p{Greek}, \x{10FFFF}: the braces belong to the escape.
      BRACED_ESCAPE.lastIndex = i;
      const braced = BRACED_ESCAPE.exec(source);
      i += braced ? braced[0].length - 1 : 1;
      last = [];
    } else if (char === '[') {
      // Skip the class: a ] first (or after ^) is literal, [:alpha:] is one item, \ escapes.
      let j = i + 1;
      if (source[j] === '^') j++;
      if (source[j] === ']') j++;
      while (j < source.length && source[j] !== ']') {
        if (source[j] === '\\') j++;
        else if (source.startsWith('[:', j)) {
          NAMED_CLASS.lastIndex = j;
          if (NAMED_CLASS.test(source)) j = NAMED_CLASS.lastIndex - 1;
        }
        j++;
      }
      i = j;
      last = [];
    } else if (char === '(') {
      groups.push([]);
      last = [];
    } else if (char === ')') {
      last = groups.length > 1 ? groups.pop()! : [];
      groups.at(-1)!.push(...last);
    } else if (char === '{') {
      COUNT.lastIndex = i;
      const counted = COUNT.exec(source);
      if (!counted) {
        last = [];
        continue;
      }
      const [spelled, min, comma, max] = counted;
      if (Number(min) > MAX_REPEAT || (max && Number(max) > MAX_REPEAT))
        return `repeats more than ${MAX_REPEAT} times (${spelled}); RE2 allows at most ${MAX_REPEAT}`;
      // The copies RE2 makes: the upper count, or the lower one of {n,}; none for {0}.
      const count = Number(comma === undefined ? min : max || min);
      const siblings = groups.at(-1)!;
      // The atom's own counts (the last ones of its siblings) now sit inside this one.
      siblings.splice(siblings.length - last.length, last.length);
      const repeat: Repeat = { count, spelled, inner: last };
      siblings.push(repeat);
      last = [repeat];
      i += spelled.length - 1;
    } else {
      last = [];
    }
  }
  // The first count that leaves more copies than allowed, and the count it is inside; walked
  // with a list rather than recursion, since groups may nest deeper than the call stack.
  const tooMany = (): [Repeat, Repeat | undefined] | undefined => {
    const pending: [Repeat, number, Repeat | undefined][] = groups[0]!.map((r) => [r, MAX_REPEAT, undefined]);
    for (let next = pending.pop(); next; next = pending.pop()) {
      const [r, left, outer] = next;
      if (r.count > left) return [r, outer];
      if (r.count === 0 && !r.spelled.endsWith(',}')) continue;
      for (const inner of r.inner) pending.push([inner, r.count > 0 ? Math.floor(left / r.count) : left, r]);
    }
    return undefined;
  };
  const [inner, outer] = tooMany() ?? [];
  return (
    inner &&
    `nests counted repetitions (${inner.spelled} inside ${outer?.spelled}) that copy a part more than ${MAX_REPEAT} times; RE2 allows at most ${MAX_REPEAT} copies`
  );
}

/**
 * `source` in JavaScript's spelling: a named group (?P<name>…) as (?<name>…); inline flags, (?i)
 * or (?i:…), dropped or made plain groups, which Node 20's engine does not have (flags change what
 * matches, not whether the pattern is valid, and only validity is checked here); and an escaped
 * punctuation character (RE2 takes any, such as \-, which Unicode mode refuses) as its \x code.
 */
export function re2AsJavaScript(source: string): string {
  return source
    .replace(/\\([\s\S])/g, (escape, char: string) => (/[!-/:-@[-`{-~]/.test(char) ? `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}` : escape))
    .replace(/\(\?P</g, '(?<')
    .replace(/\(\?[imsU-]+\)/g, '')
    .replace(/\(\?[imsU-]+:/g, '(?:');
}
