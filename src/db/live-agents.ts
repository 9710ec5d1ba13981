// The queries that record the live agents of an instance, across accounts: one instance holds the
// sessions of every account, so these take the store rather than a ScopedDb
// (src/tunnels/live-records.ts calls them). The API reads the rows through the `live_*` views and
// queues commands through ScopedDb, in the account.
import { sql, type Transaction } from 'kysely';
import type { AgentSessionsTable, AgentTunnelsTable, Database } from './schema.js';
import { withTx, type Store } from './store.js';

export type SessionRecord = Omit<AgentSessionsTable, 'instance_id' | 'lease_expires_at'>;
export type TunnelRecord = Omit<AgentTunnelsTable, 'instance_id' | 'lease_expires_at'>;

/** A command queued for a session of this instance, taken off the queue by the sync that returns it. */
export interface QueuedCommand {
  id: string;
  account_id: string;
  session_id: string;
  command: string;
}

export interface SyncInput {
  instanceId: string;
  /** The new lease of every row written; later than the lease this instance wrote before. */
  leaseExpiresAt: string;
  /** Rows whose lease is before this (any instance's) are deleted. */
  now: string;
  sessions: readonly SessionRecord[];
  tunnels: readonly TunnelRecord[];
  /** At most this many queued commands are taken. */
  commandLimit: number;
  /** The address this instance's peers dial to reach its agents (peer_instances); none when it listens for no peer. */
  peerAddress?: string;
}

export interface SyncOutcome {
  /** Sessions and tunnels written (those of accounts that exist). */
  sessions: number;
  tunnels: number;
  /** Rows of any instance deleted because their lease ran out. */
  expired: number;
  /** Commands for sessions of this instance, deleted from the queue in the same transaction. */
  commands: QueuedCommand[];
}

/**
 * Told at the commit of every sync (PostgreSQL NOTIFY): the instances that carry public
 * connections to other instances' agents read the rows again (src/tunnels/remote-tunnels.ts).
 */
export const LIVE_AGENTS_CHANNEL = 'edgeplane_live_agents';

/** Rows per INSERT: far below either store's limit on bound parameters. */
const CHUNK = 200;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

/** Every column but `id` set from the row being inserted, for an upsert. */
function excludedColumns(columns: readonly string[]) {
  return (eb: { ref(name: string): unknown }) => Object.fromEntries(columns.filter((c) => c !== 'id').map((c) => [c, eb.ref(`excluded.${c}`)]));
}

async function existingAccounts(trx: Transaction<Database>, ids: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (const part of chunks([...new Set(ids)])) {
    const rows = await trx.selectFrom('accounts').select('id').where('id', 'in', part).execute();
    for (const r of rows) found.add(r.id);
  }
  return found;
}

/**
 * One sync of an instance, in one transaction: writes its live sessions and tunnels with the new
 * lease (skipping those of accounts deleted meanwhile, and tunnels of sessions not written),
 * deletes its rows that were not written now, deletes every row whose lease ran out, and takes the
 * commands queued for its sessions off the queue. The work may run twice (withTx retries a
 * deadlock): it is the same each time.
 */
export function syncLiveAgents(store: Store, input: SyncInput): Promise<SyncOutcome> {
  const { instanceId, leaseExpiresAt, now } = input;
  const lease = { instance_id: instanceId, lease_expires_at: leaseExpiresAt };
  return withTx(store, async (trx) => {
    const accounts = await existingAccounts(trx, [...input.sessions.map((s) => s.account_id)]);
    const sessions = input.sessions.filter((s) => accounts.has(s.account_id));
    const written = new Map(sessions.map((s) => [s.id, s.account_id]));
    const tunnels = input.tunnels.filter((t) => written.get(t.session_id) === t.account_id);

    for (const part of chunks(sessions)) {
      const rows = part.map((s) => ({ ...s, ...lease }));
      await trx
        .insertInto('agent_sessions')
        .values(rows)
        .onConflict((oc) => oc.column('id').doUpdateSet(excludedColumns(Object.keys(rows[0]!)) as never))
        .execute();
    }
    for (const part of chunks(tunnels)) {
      const rows = part.map((t) => ({ ...t, ...lease }));
      await trx
        .insertInto('agent_tunnels')
        .values(rows)
        .onConflict((oc) => oc.column('id').doUpdateSet(excludedColumns(Object.keys(rows[0]!)) as never))
        .execute();
    }

    if (input.peerAddress !== undefined) {
      await trx
        .insertInto('peer_instances')
        .values({ id: instanceId, peer_address: input.peerAddress, lease_expires_at: leaseExpiresAt })
        .onConflict((oc) => oc.column('id').doUpdateSet({ peer_address: input.peerAddress!, lease_expires_at: leaseExpiresAt }))
        .execute();
    }
    await trx.deleteFrom('peer_instances').where('lease_expires_at', '<=', now).execute();

    // This instance's rows that this sync did not write are no longer live here.
    await trx.deleteFrom('agent_tunnels').where('instance_id', '=', instanceId).where('lease_expires_at', '<', leaseExpiresAt).execute();
    await trx.deleteFrom('agent_sessions').where('instance_id', '=', instanceId).where('lease_expires_at', '<', leaseExpiresAt).execute();

    // Any instance's rows whose lease ran out: that instance stopped (a crash, a lost database).
    const expiredTunnels = await trx.deleteFrom('agent_tunnels').where('lease_expires_at', '<=', now).executeTakeFirst();
    const expiredSessions = await trx.deleteFrom('agent_sessions').where('lease_expires_at', '<=', now).executeTakeFirst();

    if (store.dialect === 'postgres') await sql`select pg_notify(${LIVE_AGENTS_CHANNEL} || ':' || current_schema(), '')`.execute(trx);

    const commands = (await trx
      .selectFrom('agent_session_commands as c')
      .innerJoin('agent_sessions as s', 's.id', 'c.session_id')
      .select(['c.id', 'c.account_id', 'c.session_id', 'c.command'])
      .where('s.instance_id', '=', instanceId)
      .orderBy('c.id')
      .limit(input.commandLimit)
      .execute()) as QueuedCommand[];
    for (const part of chunks(commands)) {
      await trx
        .deleteFrom('agent_session_commands')
        .where(
          'id',
          'in',
          part.map((c) => c.id),
        )
        .execute();
    }

    return {
      sessions: sessions.length,
      tunnels: tunnels.length,
      expired: Number(expiredTunnels.numDeletedRows) + Number(expiredSessions.numDeletedRows),
      commands,
    };
  });
}

/** Deletes every row of an instance (it is closing); its queued commands go with its sessions. */
export async function removeInstance(store: Store, instanceId: string): Promise<void> {
  await withTx(store, async (trx) => {
    await trx.deleteFrom('agent_tunnels').where('instance_id', '=', instanceId).execute();
    await trx.deleteFrom('agent_sessions').where('instance_id', '=', instanceId).execute();
    await trx.deleteFrom('peer_instances').where('id', '=', instanceId).execute();
    if (store.dialect === 'postgres') await sql`select pg_notify(${LIVE_AGENTS_CHANNEL} || ':' || current_schema(), '')`.execute(trx);
  });
}

/** A live tunnel held by another instance that its peers can reach, with the route it claims (none for a labeled tunnel). */
export interface RemoteTunnelRow {
  id: string;
  account_id: string;
  instance_id: string;
  peer_address: string;
  labels: string | null;
  endpoint_id: string | null;
  endpoint_proto: string | null;
  endpoint_domain_id: string | null;
  endpoint_tcp_addr_id: string | null;
  sealed_options: string | null;
  route: string | null;
}

/**
 * The live tunnels of every other instance that listens for peers, each with its claimed route:
 * what this instance forwards to when a public connection reaches it for an agent it does not
 * hold. Rows whose lease ran out (by `now`) are left out, as are the claims of another tunnel.
 */
export function remoteTunnels(store: Store, instanceId: string, now: string): Promise<RemoteTunnelRow[]> {
  return store.db
    .selectFrom('agent_tunnels as t')
    .innerJoin('peer_instances as p', 'p.id', 't.instance_id')
    .leftJoin('agent_route_claims as c', (join) => join.onRef('c.tunnel_id', '=', 't.id').onRef('c.instance_id', '=', 't.instance_id'))
    .select([
      't.id',
      't.account_id',
      't.instance_id',
      'p.peer_address',
      't.labels',
      't.endpoint_id',
      't.endpoint_proto',
      't.endpoint_domain_id',
      't.endpoint_tcp_addr_id',
      't.sealed_options',
      'c.route',
    ])
    .where('t.instance_id', '!=', instanceId)
    .where('t.lease_expires_at', '>', now)
    .where('p.lease_expires_at', '>', now)
    .orderBy('t.id')
    .execute();
}
