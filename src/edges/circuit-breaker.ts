// The circuit breaker of a route: the outcomes of its requests over a rolling window, in buckets;
// when the window holds at least `volume_threshold` requests and the fraction of errors among them
// reaches `error_threshold_percentage`, the breaker trips and refuses every request for
// `tripped_duration` seconds. Then one request is let through: its success closes the breaker
// (and starts a fresh window), its failure trips it again. An error is a 5xx answer of the
// upstream or an upstream that could not be reached. Pure but for the clock it is given.
import type { CircuitBreakerModule } from './edge-config.js';

interface Bucket {
  /** The bucket's start, in ms. */
  start: number;
  total: number;
  errors: number;
}

export class CircuitBreaker {
  private buckets: Bucket[] = [];
  private openUntil = 0;
  private probing = false;

  constructor(
    readonly config: CircuitBreakerModule,
    private readonly now: () => number = Date.now,
  ) {}

  private get bucketMs(): number {
    return (this.config.rolling_window * 1000) / this.config.num_buckets;
  }

  /** Whether a request may go on now; a request let through must be followed by `record`. */
  allow(): boolean {
    const now = this.now();
    if (this.openUntil === 0) return true;
    if (now < this.openUntil || this.probing) return false;
    // Half open: this one request tells whether the upstream is back.
    this.probing = true;
    return true;
  }

  /** The outcome of a request `allow` let through. */
  record(error: boolean): void {
    const now = this.now();
    if (this.probing) {
      this.probing = false;
      if (error) this.openUntil = now + this.config.tripped_duration * 1000;
      else {
        this.openUntil = 0;
        this.buckets = [];
      }
      return;
    }
    if (this.openUntil !== 0) return;
    const start = now - (now % this.bucketMs);
    let last = this.buckets.at(-1);
    if (!last || last.start !== start) {
      last = { start, total: 0, errors: 0 };
      this.buckets.push(last);
    }
    last.total++;
    if (error) last.errors++;
    const windowStart = now - this.config.rolling_window * 1000;
    while (this.buckets.length > 0 && this.buckets[0]!.start + this.bucketMs <= windowStart) this.buckets.shift();
    let total = 0;
    let errors = 0;
    for (const b of this.buckets) {
      total += b.total;
      errors += b.errors;
    }
    if (total >= this.config.volume_threshold && total > 0 && errors / total >= this.config.error_threshold_percentage && errors > 0) {
      this.openUntil = now + this.config.tripped_duration * 1000;
    }
  }

  /** Whether it refuses requests now. */
  get tripped(): boolean {
    return this.openUntil !== 0 && this.now() < this.openUntil;
  }
}

/**
 * The breakers of every route, by route id, kept across configuration reloads while the route's
 * breaker settings are the same (a change starts a fresh breaker). Routes gone are forgotten when
 * the map is pruned with the ids still served.
 */
export class CircuitBreakers {
  private readonly byRoute = new Map<string, CircuitBreaker>();

  constructor(private readonly now: () => number = Date.now) {}

  of(routeId: string, config: CircuitBreakerModule): CircuitBreaker {
    const held = this.byRoute.get(routeId);
    if (held && sameConfig(held.config, config)) return held;
    const breaker = new CircuitBreaker(config, this.now);
    this.byRoute.set(routeId, breaker);
    return breaker;
  }

  /** Forgets the breakers of routes not in `live`. */
  prune(live: ReadonlySet<string>): void {
    for (const id of this.byRoute.keys()) if (!live.has(id)) this.byRoute.delete(id);
  }
}

function sameConfig(a: CircuitBreakerModule, b: CircuitBreakerModule): boolean {
  return (
    a.tripped_duration === b.tripped_duration &&
    a.rolling_window === b.rolling_window &&
    a.num_buckets === b.num_buckets &&
    a.volume_threshold === b.volume_threshold &&
    a.error_threshold_percentage === b.error_threshold_percentage
  );
}
