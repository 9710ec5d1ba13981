// RFC 3339 times as the API writes them: UTC, whole seconds ("2024-02-07T18:47:47Z").
export function rfc3339(date: Date): string {
  // toISOString always ends in ".sssZ"; a slice costs less than a regular expression, on every write.
  return date.toISOString().slice(0, -5) + 'Z';
}

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

// RFC 3339 section 5.6: full-date "T" full-time, with "T" and "Z" in either case.
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

const isLeapYear = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * An RFC 3339 timestamp as a Date, or undefined when the text is not one or names a time that
 * does not exist. Written by hand because Date.parse is lenient where RFC 3339 is not: it
 * rolls 2026-02-30 over to 2 March and takes 24:00 as the next midnight. A leap second (:60)
 * is refused: a Date cannot hold one, nor can the seconds since the epoch that certificates count.
 */
export function parseRfc3339(text: string): Date | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const offsetHours = m[8] ? Number(m[9]) : 0;
  const offsetMinutes = m[8] ? Number(m[10]) : 0;
  if (month < 1 || month > 12 || day < 1) return undefined;
  if (day > (month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1]!)) return undefined;
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return undefined;
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC, which would read the years 0 to 99 as 1900 to 1999.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, m[7] ? Math.floor(Number(`0${m[7]}`) * 1000) : 0);
  const offsetMs = (offsetHours * 60 + offsetMinutes) * 60_000 * (m[8] === '-' ? -1 : 1);
  return new Date(date.getTime() - offsetMs);
}
