// The many-instance records of the live agents: this process's sessions and tunnels (LiveState)
// written to the store under this instance's id with a lease, so that the API of any instance
// lists them, and a dead instance's rows leave the lists when their lease runs out. Each sync also
// runs the commands other instances queued for the sessions held here (SessionCommands).
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { rfc3339, systemClock, type Clock } from '../core/time.js';
import { removeInstance, syncLiveAgents, type SessionRecord, type SyncOutcome, type TunnelRecord } from '../db/live-agents.js';
import type { Store } from '../db/store.js';
import type { LiveSession, LiveState, LiveTunnel, SessionCommand, SessionCommands } from '../core/live-agents.js';

/** This process's instance id: fresh and random per process, so that a restarted instance never takes over its old rows. */
export const PROCESS_INSTANCE_ID = `inst_${randomBytes(12).toString('hex')}`;

/** How long after `changed()` a sync runs: the changes of a burst (an agent binding ten tunnels) share one. */
const CHANGE_DELAY_MS = 50;
/** Queued commands a sync takes at most; the rest wait for the next. */
const COMMANDS_PER_SYNC = 100;
/** What is written of the agent's own words (its metadata, OS, version) at most, in characters. */
const MAX_TEXT = 4096;

export interface LiveRecordsOptions {
  store: Store;
  /** Default: PROCESS_INSTANCE_ID. */
  instanceId?: string;
  state: LiveState;
  commands: SessionCommands;
  log: Logger;
  /** How long rows hold without a sync; a sync runs every third of it (default 30 s). */
  leaseMs?: number;
  clock?: Clock;
}

const cap = (text: string) => (text.length <= MAX_TEXT ? text : text.slice(0, MAX_TEXT));

function sessionRecord(s: LiveSession): SessionRecord {
  const started = rfc3339(s.startedAt);
  return {
    id: s.id,
    account_id: s.accountId,
    credential_id: s.credentialId,
    transport: s.transport,
    region: s.region,
    ip: s.ip,
    os: cap(s.os),
    agent_version: cap(s.agentVersion),
    metadata: cap(s.metadata),
    started_at: started,
    created_at: started,
  };
}

function tunnelRecord(t: LiveTunnel, region: string): TunnelRecord {
  const started = rfc3339(t.startedAt);
  const e = t.endpoint;
  return {
    id: t.id,
    account_id: t.accountId,
    session_id: t.sessionId,
    region,
    labels: t.labels ? JSON.stringify(t.labels) : null,
    metadata: cap(t.metadata),
    forwards_to: cap(t.forwardsTo),
    started_at: started,
    created_at: started,
    endpoint_id: e?.id ?? null,
    endpoint_proto: e?.proto ?? null,
    endpoint_public_url: e?.publicUrl ?? null,
    endpoint_hostport: e?.hostport ?? null,
    endpoint_domain_id: e?.domainId ?? null,
    endpoint_tcp_addr_id: e?.tcpAddrId ?? null,
    sealed_options: t.sealedOptions ?? null,
  };
}

export class LiveRecords {
  readonly instanceId: string;
  private readonly store: Store;
  private readonly state: LiveState;
  private readonly commands: SessionCommands;
  private readonly log: Logger;
  private readonly leaseMs: number;
  private readonly clock: Clock;
  private interval?: NodeJS.Timeout;
  private soon?: NodeJS.Timeout;
  /** Syncs run one after another; this is the last one asked for. */
  private tail: Promise<unknown> = Promise.resolve();
  private lastLease = 0;
  private closed = false;
  /** The address other instances dial to reach this one's agents (written with every sync); none: not reachable. */
  peerAddress?: string;

  constructor(options: LiveRecordsOptions) {
    this.store = options.store;
    this.instanceId = options.instanceId ?? PROCESS_INSTANCE_ID;
    this.state = options.state;
    this.commands = options.commands;
    this.log = options.log;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.clock = options.clock ?? systemClock;
    if (!(this.leaseMs >= 30)) throw new Error(`the lease must be at least 30 ms, not ${this.leaseMs}`);
  }

  /** Syncs now, then every third of the lease. */
  start(): void {
    if (this.closed || this.interval) return;
    this.interval = setInterval(() => void this.sync(), Math.floor(this.leaseMs / 3));
    this.interval.unref();
    void this.sync();
  }

  /** What this process holds changed: a sync runs soon, one for every call made before it starts. */
  changed(): void {
    if (this.closed || this.soon) return;
    this.soon = setTimeout(() => {
      this.soon = undefined;
      void this.sync();
    }, CHANGE_DELAY_MS);
    this.soon.unref();
  }

  /**
   * One sync, after those already asked for; resolves when it is done, with what it did, or
   * undefined when the store failed (logged; the next sync tries again). Never rejects.
   */
  sync(): Promise<SyncOutcome | undefined> {
    const run = this.tail.then(() => (this.closed ? undefined : this.syncOnce()));
    this.tail = run;
    return run;
  }

  /** Stops syncing and deletes this instance's rows: its agents are gone with it. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.interval);
    clearTimeout(this.soon);
    await this.tail;
    try {
      await removeInstance(this.store, this.instanceId);
    } catch (error) {
      this.log.warn(
        { err: error, instance_id: this.instanceId },
        'live agents: the rows of this instance could not be deleted; they go when their lease runs out',
      );
    }
  }

  private async syncOnce(): Promise<SyncOutcome | undefined> {
    const now = this.clock.now().getTime();
    // Strictly later than the last lease written: rows left with an older lease were not written now.
    const lease = Math.max(now + this.leaseMs, this.lastLease + 1);
    let outcome: SyncOutcome;
    try {
      const sessions = this.state.sessions();
      const regions = new Map(sessions.map((s) => [s.id, s.region]));
      const tunnels = this.state.tunnels().flatMap((t) => {
        const region = regions.get(t.sessionId);
        return region === undefined ? [] : [tunnelRecord(t, region)];
      });
      outcome = await syncLiveAgents(this.store, {
        instanceId: this.instanceId,
        leaseExpiresAt: new Date(lease).toISOString(),
        now: new Date(now).toISOString(),
        sessions: sessions.map(sessionRecord),
        tunnels,
        commandLimit: COMMANDS_PER_SYNC,
        ...(this.peerAddress !== undefined && { peerAddress: this.peerAddress }),
      });
    } catch (error) {
      this.log.warn({ err: error, instance_id: this.instanceId }, 'live agents: the sync failed; the next one tries again');
      return undefined;
    }
    this.lastLease = lease;
    if (outcome.expired > 0) this.log.info({ expired: outcome.expired }, 'live agents: rows of instances whose lease ran out deleted');
    for (const queued of outcome.commands) void this.run(queued.session_id, queued.command);
    return outcome;
  }

  /** A queued command, sent to its session; the outcome is logged (the API answered when it was queued). */
  private async run(sessionId: string, stored: string): Promise<void> {
    let command: SessionCommand;
    try {
      command = JSON.parse(stored) as SessionCommand;
    } catch {
      this.log.warn({ session_id: sessionId }, 'live agents: a queued command could not be read; dropped');
      return;
    }
    try {
      const result = await this.commands.send(sessionId, command);
      this.log.info({ session_id: sessionId, command: command.kind, ...result }, 'live agents: queued command sent');
    } catch (error) {
      this.log.warn({ err: error, session_id: sessionId, command: command.kind }, 'live agents: a queued command failed');
    }
  }
}
