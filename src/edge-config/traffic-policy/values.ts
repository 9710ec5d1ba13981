// The JSON values a policy is made of, and how its messages show them: a value's type in words
// ("a list"), long text cut short, the first key an object should not have. Shared by the
// document, its rules and the action configs.

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The type of a JSON value as messages name it: "null", "a list", "an object", "a string"… */
export function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

/** Text cut to `max` characters, the last three of them "...". */
export const clip = (text: string, max = 80) => (text.length > max ? `${text.slice(0, max - 3)}...` : text);

/** The first key of `value` not in `known`. */
export function unknownKey(value: JsonObject, known: readonly string[]): string | undefined {
  return Object.keys(value).find((key) => !known.includes(key));
}
