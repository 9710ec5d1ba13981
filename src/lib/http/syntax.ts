// The syntax of HTTP header fields (RFC 9110), checked wherever a body carries headers: backends,
// header modules, traffic policy actions. Pure: no errors of the API, no I/O.

/** An RFC 9110 token (tchar+): a header name, and (RFC 6265) a cookie name. */
export function isToken(text: string): boolean {
  return /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(text);
}

/** An RFC 9110 field value: visible characters, spaces and tabs; so no CR, LF, NUL or other control. */
export function isFieldValue(text: string): boolean {
  return /^[\t\x20-\x7e\x80-\uffff]*$/.test(text);
}

export type HeaderProblem = { problem: 'name' | 'value' | 'duplicate'; name: string };

/**
 * Headers with their names lower-cased (names are case-insensitive, so two equal ones are a
 * problem), or the first problem. `valueOk` adds a limit of the caller's to the value syntax.
 */
export function lowerCasedHeaders(
  headers: Record<string, string>,
  valueOk: (value: string) => boolean = () => true,
): { headers: Record<string, string> } | HeaderProblem {
  // A Map, not an object, so that a header named __proto__ is a header like any other.
  const out = new Map<string, string>();
  for (const [name, value] of Object.entries(headers)) {
    if (!isToken(name)) return { problem: 'name', name };
    if (!isFieldValue(value) || !valueOk(value)) return { problem: 'value', name };
    const lower = name.toLowerCase();
    if (out.has(lower)) return { problem: 'duplicate', name: lower };
    out.set(lower, value);
  }
  return { headers: Object.fromEntries(out) };
}
