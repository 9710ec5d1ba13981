// The public routes bound by agents, claimed across instances: a bind holds its route (an HTTPS
// name, a TCP port…) only after its claim commits, and a claim is refused while another tunnel's
// live claim holds the route, unless both asked for pooling. The check reads then writes, so it
// runs under a per-route lock: PostgreSQL's transaction-level advisory lock on the route; SQLite
// runs one write transaction at a time.
import { sql } from 'kysely';
import { withTx, type Store } from './store.js';

export interface RouteClaim {
  route: string;
  tunnelId: string;
  instanceId: string;
  pooling: boolean;
  /** Instants as `toISOString()` writes them. */
  leaseExpiresAt: string;
  now: string;
}

/** Claims the route for the tunnel; the tunnel that holds it instead, when refused. */
export function claimRoute(store: Store, claim: RouteClaim): Promise<{ heldBy?: string }> {
  return withTx(store, async (trx) => {
    if (store.dialect === 'postgres') await sql`select pg_advisory_xact_lock(hashtextextended(${`agent-route:${claim.route}`}, 0))`.execute(trx);
    await trx.deleteFrom('agent_route_claims').where('route', '=', claim.route).where('lease_expires_at', '<=', claim.now).execute();
    const others = await trx
      .selectFrom('agent_route_claims')
      .select(['tunnel_id', 'pooling'])
      .where('route', '=', claim.route)
      .where('tunnel_id', '!=', claim.tunnelId)
      .execute();
    const blocking = others.find((o) => !(claim.pooling && o.pooling === 1));
    if (blocking) return { heldBy: blocking.tunnel_id };
    await trx
      .insertInto('agent_route_claims')
      .values({
        route: claim.route,
        tunnel_id: claim.tunnelId,
        instance_id: claim.instanceId,
        pooling: claim.pooling ? 1 : 0,
        lease_expires_at: claim.leaseExpiresAt,
      })
      .onConflict((oc) =>
        oc
          .columns(['route', 'tunnel_id'])
          .doUpdateSet({ instance_id: claim.instanceId, pooling: claim.pooling ? 1 : 0, lease_expires_at: claim.leaseExpiresAt }),
      )
      .execute();
    return {};
  });
}

/**
 * Gives a route back (the tunnel ended on this instance). Only this instance's claim: the same
 * tunnel, resumed on another instance after this one stopped, has claimed it there.
 */
export async function releaseRoute(store: Store, route: string, tunnelId: string, instanceId: string): Promise<void> {
  await withTx(store, (trx) =>
    trx.deleteFrom('agent_route_claims').where('route', '=', route).where('tunnel_id', '=', tunnelId).where('instance_id', '=', instanceId).execute(),
  );
}

/**
 * Extends the claims of this instance's live tunnels, and deletes every expired claim. A claim
 * whose tunnel is gone (its release failed) is not extended: it expires. A claim made since the
 * caller listed its tunnels keeps the fresh lease it was made with.
 */
export async function renewRouteClaims(store: Store, instanceId: string, tunnelIds: readonly string[], leaseExpiresAt: string, now: string): Promise<void> {
  await withTx(store, async (trx) => {
    for (let i = 0; i < tunnelIds.length; i += 500) {
      await trx
        .updateTable('agent_route_claims')
        .set({ lease_expires_at: leaseExpiresAt })
        .where('instance_id', '=', instanceId)
        .where('tunnel_id', 'in', tunnelIds.slice(i, i + 500))
        .execute();
    }
    await trx.deleteFrom('agent_route_claims').where('lease_expires_at', '<=', now).execute();
  });
}
