// RFC 3339 times as the API writes them: UTC, whole seconds ("2024-02-07T18:47:47Z").
export function rfc3339(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
