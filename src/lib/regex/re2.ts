// Regular expressions that the edge runs with RE2 (Go's syntax), checked here with JavaScript's
// engine, since no maintained RE2 binding builds on every Node version we support without a
// native toolchain. What both engines accept alike compiles; RE2's own spellings are rewritten
// first and what only JavaScript has is refused. Pure: the caller words the error.

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
  const only = unsupported(source);
  if (only) return `uses ${only}; the edge's regular expressions (RE2) have none`;
  try {
    // Unicode mode, like RE2, refuses unknown escapes such as \q.
    new RegExp(re2AsJavaScript(source), 'u');
    return undefined;
  } catch (error) {
    return `is not a valid regular expression: ${String((error as Error).message).replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '')}`;
  }
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
