// This instance's claims on public routes (src/db/route-claims.ts): taken when a bind is placed,
// given back when its tunnel goes, renewed every third of the lease for the live tunnels, so that
// a URL is held by one tunnel across every instance, and a dead instance's URLs are free again
// within the lease.
import type { Logger } from 'pino';
import { claimRoute, releaseRoute, renewRouteClaims } from '../db/route-claims.js';
import type { Store } from '../db/store.js';

export interface RouteClaimsOptions {
  store: Store;
  instanceId: string;
  log: Logger;
  /** How long a claim holds without renewal (default 30 s). */
  leaseMs?: number;
  /** The ids of this instance's live tunnels, for renewal. */
  liveTunnelIds: () => string[];
}

export class RouteClaims {
  private readonly leaseMs: number;
  private timer?: NodeJS.Timeout;
  /** Releases under way: shutdown waits for them before the store closes. */
  private readonly releasing = new Set<Promise<void>>();

  constructor(private readonly options: RouteClaimsOptions) {
    this.leaseMs = options.leaseMs ?? 30_000;
  }

  /** Claims a route: undefined when it is this tunnel's now, else the id of the tunnel that holds it. Throws when the store cannot say. */
  async claim(route: string, tunnelId: string, pooling: boolean): Promise<string | undefined> {
    const now = Date.now();
    const { heldBy } = await claimRoute(this.options.store, {
      route,
      tunnelId,
      instanceId: this.options.instanceId,
      pooling,
      leaseExpiresAt: new Date(now + this.leaseMs).toISOString(),
      now: new Date(now).toISOString(),
    });
    return heldBy;
  }

  /** Gives a route back; a failure leaves the claim to expire. */
  release(route: string, tunnelId: string): void {
    const done = releaseRoute(this.options.store, route, tunnelId, this.options.instanceId)
      .catch((err: unknown) => this.options.log.warn({ err, route }, 'a route claim could not be released; it expires with its lease'))
      .finally(() => this.releasing.delete(done));
    this.releasing.add(done);
  }

  start(): void {
    this.timer = setInterval(
      () => {
        const now = Date.now();
        renewRouteClaims(
          this.options.store,
          this.options.instanceId,
          this.options.liveTunnelIds(),
          new Date(now + this.leaseMs).toISOString(),
          new Date(now).toISOString(),
        ).catch((err: unknown) => this.options.log.warn({ err }, 'route claims could not be renewed; the next round tries again'));
      },
      Math.floor(this.leaseMs / 3),
    );
    this.timer.unref();
  }

  /** Stops renewing, once the releases under way are done. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all([...this.releasing]);
  }
}
