// Values that may be URLs, made fit to echo in an error or a log line: a URL's userinfo
// (user:password@) is a credential, and an error must never repeat one.

/**
 * `value` with whatever could be the userinfo of a URL replaced by `***`: in each
 * whitespace-separated part, everything after `scheme://` (or from the part's start) up to its
 * last `@`. Erring on the side of hiding: `https://host/@name` loses its host too.
 */
export function withoutCredentials(value: string): string {
  return value.replace(
    /(^|\s)((?:[A-Za-z][A-Za-z0-9+.-]*:)?\/\/)?\S*@/g,
    (_match, before: string, scheme: string | undefined) => `${before}${scheme ?? ''}***@`,
  );
}
