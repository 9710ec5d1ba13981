// The circuit breaker of a route: the outcomes of its requests over a rolling window of
// `num_buckets` buckets (the current one and those before it that started within the window);
// when the window holds at least `volume_threshold` requests and the fraction of errors among them
// reaches `error_threshold_percentage`, the breaker trips and refuses every request for
// `tripped_duration` seconds. Then one request is let through: its success closes the breaker
// (and starts a fresh window), its failure trips it again; only that request's outcome decides,
// not a late one of a request let through before. An error is a 5xx answer of the upstream or an
// upstream that could not be reached. Pure but for the clock it is given.
import type { CircuitBreakerModule } from './edge-config.js';

interface Bucket {
  /** The bucket's start, in ms. */
  start: number;
  total: number;
  errors: number;
}

/** A request the breaker let through: its outcome is told once (a second time is ignored). */
export interface BreakerPass {
  record(error: boolean): void;
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

  /** A pass for a request that may go on now, or undefined while tripped; its outcome is told to the pass. */
  allow(): BreakerPass | undefined {
    const now = this.now();
    if (this.openUntil === 0) return this.pass(false);
    if (now < this.openUntil || this.probing) return undefined;
    // Half open: this one request tells whether the upstream is back.
    this.probing = true;
    return this.pass(true);
  }

  private pass(probe: boolean): BreakerPass {
    let told = false;
    return {
      record: (error) => {
        if (told) return;
        told = true;
        this.outcome(probe, error);
      },
    };
  }

  private outcome(probe: boolean, error: boolean): void {
    const now = this.now();
    if (probe) {
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
    while (this.buckets.length > 0 && this.buckets[0]!.start <= windowStart) this.buckets.shift();
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
