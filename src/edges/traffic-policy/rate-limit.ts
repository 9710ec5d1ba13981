// The rate-limit action's counter: a sliding window of `capacity` requests per `window`, per
// bucket, kept in this process (each edge instance counts for itself: behind N instances a client
// may get up to N times the capacity). The window is the usual two-counter approximation: the
// requests of the current fixed window plus those of the previous one weighted by how much of it
// the sliding window still covers, which needs two numbers per bucket whatever the capacity.
// Refused requests are not counted. Buckets are bounded: past `maxBuckets`, the least recently
// used one is forgotten (its client starts afresh).

/** `60s`, `1m30s`, `1.5h` in milliseconds (the config check has made sure it is one). */
export function durationMs(value: string): number {
  const unit = { h: 3_600_000, m: 60_000, s: 1_000 } as const;
  let total = 0;
  for (const [, amount, u] of value.matchAll(/(\d+(?:\.\d+)?)([hms])/g)) total += Number(amount) * unit[u as keyof typeof unit];
  return Math.round(total);
}

interface Bucket {
  /** The start of the current fixed window (a multiple of the window since the epoch). */
  start: number;
  current: number;
  previous: number;
}

export type Take = { allowed: true } | { allowed: false; retryAfterMs: number };

export const MAX_BUCKETS = 100_000;

export class SlidingWindow {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    readonly capacity: number,
    readonly windowMs: number,
    readonly maxBuckets = MAX_BUCKETS,
  ) {}

  get size(): number {
    return this.buckets.size;
  }

  /** Counts a request of `key` at `now` (ms) when the window has room for it. */
  take(key: string, now: number): Take {
    const { windowMs: w, capacity } = this;
    const start = Math.floor(now / w) * w;
    let bucket = this.buckets.get(key);
    if (bucket) this.buckets.delete(key);
    else bucket = { start, current: 0, previous: 0 };
    if (bucket.start !== start) {
      bucket.previous = bucket.start === start - w ? bucket.current : 0;
      bucket.current = 0;
      bucket.start = start;
    }
    this.buckets.set(key, bucket);
    if (this.buckets.size > this.maxBuckets) this.buckets.delete(this.buckets.keys().next().value!);

    const elapsed = now - start;
    const estimate = bucket.previous * (1 - elapsed / w) + bucket.current;
    if (estimate + 1 <= capacity) {
      bucket.current++;
      return { allowed: true };
    }
    return { allowed: false, retryAfterMs: this.wait(bucket, elapsed) };
  }

  /** How long until a request of the bucket would be allowed, counting nothing more in between. */
  private wait({ previous, current }: Bucket, elapsed: number): number {
    const { windowMs: w, capacity } = this;
    // In this window, the previous one's share falls as time goes on.
    if (previous > 0 && current + 1 <= capacity) {
      const at = w * (1 - (capacity - current - 1) / previous);
      if (at < w) return Math.max(0, at - elapsed);
    }
    // In the next window, this one's count is the previous one's, falling in turn.
    const into = current > 0 ? Math.max(0, w * (1 - (capacity - 1) / current)) : 0;
    return w - elapsed + into;
  }
}
