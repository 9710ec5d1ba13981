// A count of the elements of DER data, to bound what an X.509 parser is given before it runs:
// @peculiar/x509 spends tens of microseconds on each element (a name, a usage, an extension), so
// a 64 KiB certificate of thousands of names holds the event loop for hundreds of milliseconds,
// while this walk reads each byte a few times at most. Pure.

/** How deep the walk looks into strings that hold DER (an extension's value holds its own). */
const MAX_DEPTH = 8;

/**
 * The number of DER elements (tag, length, value) of `der`, looking inside constructed elements
 * and inside OCTET and BIT STRINGs that hold DER themselves, to a few levels; counting stops
 * early once it passes `max` (any number above `max` then means "more than max"). Data that is
 * not DER counts what could be read: the parser that follows says what is wrong with it.
 */
export function derElementCount(der: Uint8Array, max: number): number {
  const state = { count: 0 };
  walk(der, 0, der.length, 0, max, state);
  return state.count;
}

/** Counts the elements from `start` to `end` into state; false when they are not DER. */
function walk(der: Uint8Array, start: number, end: number, depth: number, max: number, state: { count: number }): boolean {
  let i = start;
  while (i < end) {
    if (state.count > max) return true;
    const tag = der[i++]!;
    if ((tag & 0x1f) === 0x1f) {
      // A high tag number: base-128 digits, the last without its top bit.
      while (i < end && (der[i]! & 0x80) !== 0) i++;
      i++;
    }
    if (i >= end) return false;
    let length = der[i++]!;
    if ((length & 0x80) !== 0) {
      const octets = length & 0x7f;
      if (octets === 0 || octets > 4 || i + octets > end) return false;
      length = 0;
      for (let k = 0; k < octets; k++) length = length * 256 + der[i++]!;
    }
    if (i + length > end) return false;
    state.count++;
    if (depth < MAX_DEPTH) {
      if ((tag & 0x20) !== 0) {
        if (!walk(der, i, i + length, depth + 1, max, state)) return false;
      } else if ((tag === 0x04 || tag === 0x03) && length > 1) {
        // A string that may hold DER: counted if it does, left as one element if not.
        const before = state.count;
        if (!walk(der, tag === 0x03 ? i + 1 : i, i + length, depth + 1, max, state)) state.count = before;
      }
    }
    i += length;
  }
  return true;
}
