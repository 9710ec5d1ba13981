// A response body read as JSON when it is JSON: the text of an error page or an empty 204 is not.

/** The parsed body, or undefined when it is empty or not JSON. */
export function jsonOrUndefined(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
