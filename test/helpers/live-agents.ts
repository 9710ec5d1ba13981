// Stand-ins for the data plane in tests of the live agent records and their API: a LiveState of
// plain arrays, SessionCommands that answer as told and record what they were sent, and a way to
// put a live session (with tunnels) of an account in the store through LiveRecords.
import { pino, type Logger } from 'pino';
import { newId } from '../../src/core/ids.js';
import type { Store } from '../../src/db/store.js';
import type { CommandOutcome, LiveSession, LiveState, LiveTunnel, SessionCommand, SessionCommands } from '../../src/core/live-agents.js';
import { LiveRecords } from '../../src/tunnels/live-records.js';

export class FakeLiveState implements LiveState {
  sessionList: LiveSession[] = [];
  tunnelList: LiveTunnel[] = [];
  sessions(): LiveSession[] {
    return this.sessionList;
  }
  tunnels(): LiveTunnel[] {
    return this.tunnelList;
  }
}

export class FakeSessionCommands implements SessionCommands {
  /** What each session held here answers; a session not in the map is not here. */
  readonly here = new Map<string, CommandOutcome>();
  readonly received: { sessionId: string; command: SessionCommand }[] = [];
  private waiters: (() => void)[] = [];

  send(sessionId: string, command: SessionCommand): Promise<CommandOutcome> {
    const outcome = this.here.get(sessionId);
    if (!outcome) return Promise.resolve({ outcome: 'not_here' });
    this.received.push({ sessionId, command });
    for (const w of this.waiters.splice(0)) w();
    return Promise.resolve(outcome);
  }

  /** Resolves once `count` commands were received; rejects after `ms`. */
  async receivedCount(count: number, ms = 5000): Promise<void> {
    const started = Date.now();
    while (this.received.length < count) {
      const left = ms - (Date.now() - started);
      if (left <= 0) throw new Error(`${this.received.length} commands received, not ${count}, in ${ms} ms`);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${this.received.length} commands received, not ${count}, in ${ms} ms`)), left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
}

export const silentLog: Logger = pino({ level: 'silent' });

export function liveSession(accountId: string, fields: Partial<LiveSession> = {}): LiveSession {
  return {
    id: newId('ts'),
    accountId,
    credentialId: newId('cr'),
    os: 'linux',
    agentVersion: '1.2.3',
    metadata: 'agent metadata',
    ip: '192.0.2.10',
    region: 'local',
    transport: 'ngrok/tls',
    startedAt: new Date(Math.floor(Date.now() / 1000) * 1000),
    ...fields,
  };
}

export function boundTunnel(
  session: LiveSession,
  host = `app-${newId('x').slice(-8).toLowerCase()}.example.com`,
  fields: Partial<LiveTunnel> = {},
): LiveTunnel {
  return {
    id: newId('tn'),
    accountId: session.accountId,
    sessionId: session.id,
    endpoint: { id: newId('ep'), proto: 'https', publicUrl: `https://${host}`, hostport: `${host}:443` },
    metadata: 'tunnel metadata',
    forwardsTo: 'http://localhost:8080',
    startedAt: session.startedAt,
    ...fields,
  };
}

export function labeledTunnel(session: LiveSession, labels: Record<string, string>): LiveTunnel {
  return {
    id: newId('tn'),
    accountId: session.accountId,
    sessionId: session.id,
    labels,
    metadata: '',
    forwardsTo: 'http://localhost:9090',
    startedAt: session.startedAt,
  };
}

/**
 * A live session of the account, with a bound endpoint and a labeled tunnel, written to the store
 * by a LiveRecords of its own (an instance that holds it for ten minutes).
 */
export async function seedLiveSession(store: Store, accountId: string): Promise<{ session: LiveSession; bound: LiveTunnel; labeled: LiveTunnel }> {
  const state = new FakeLiveState();
  const session = liveSession(accountId);
  const bound = boundTunnel(session);
  const labeled = labeledTunnel(session, { env: 'seeded' });
  state.sessionList.push(session);
  state.tunnelList.push(bound, labeled);
  const records = new LiveRecords({ store, instanceId: newId('inst'), state, commands: new FakeSessionCommands(), log: silentLog, leaseMs: 600_000 });
  const outcome = await records.sync();
  if (!outcome || outcome.sessions !== 1) throw new Error('the live session could not be written');
  return { session, bound, labeled };
}
