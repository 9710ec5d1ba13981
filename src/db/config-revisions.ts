// Each account's configuration revision, and how what serves traffic learns of a change: every
// mutation made through the API bumps the account's row of `config_revisions` in its own
// transaction (the observer below), so the revision commits or rolls back with the change. On
// PostgreSQL the same transaction sends a NOTIFY, which the server delivers to every listening
// instance when, and only if, it commits; SQLite (one machine, maybe several processes on one
// file) is polled instead, by a read of one small row per account, and read at once after each
// commit of this process.
import type { MutationObserver } from './observers.js';
import type { Store } from './store.js';

/** The notification channel of configuration changes; the store names it per schema. */
export const CONFIG_CHANNEL = 'edgeplane_config';

/** Bumps the account's configuration revision, and on PostgreSQL notifies the listeners at commit. */
export const configRevisionObserver: MutationObserver = {
  name: 'config revision',
  async inTransaction(db) {
    await db.increment('config_revisions', 'revision');
    await db.notifyAtCommit(CONFIG_CHANNEL);
  },
};

/** The accounts whose configuration changed, or 'all' when changes may have been missed. */
export type ConfigChange = ReadonlySet<string> | 'all';

export interface ConfigWatch {
  close(): Promise<void>;
}

export interface ConfigWatchOptions {
  /** How often SQLite's revisions are read (default 250 ms); PostgreSQL is told at once. */
  pollMs?: number;
  /** A read or a connection failed: the watch goes on, and tells 'all' once it works again. */
  onError?: (error: unknown) => void;
}

/**
 * Tells `changed` of every change committed by any instance from now on. A failed read or a lost
 * connection is followed by 'all' once the store answers again, since what happened meanwhile is
 * not known.
 */
export async function watchConfigChanges(store: Store, changed: (change: ConfigChange) => void, options: ConfigWatchOptions = {}): Promise<ConfigWatch> {
  if (store.listen) {
    return store.listen(CONFIG_CHANNEL, {
      message: (accountId) => changed(new Set([accountId])),
      resumed: () => changed('all'),
      error: (error) => options.onError?.(error),
    });
  }
  return pollRevisions(store, changed, options);
}

async function readRevisions(store: Store): Promise<Map<string, number>> {
  const rows = await store.reader.selectFrom('config_revisions').select(['account_id', 'revision']).execute();
  return new Map(rows.map((r) => [r.account_id, Number(r.revision)]));
}

/** The least time between two reads made for this process's own commits. */
const SOON_MS = 20;

async function pollRevisions(store: Store, changed: (change: ConfigChange) => void, options: ConfigWatchOptions): Promise<ConfigWatch> {
  let seen = await readRevisions(store);
  let failed = false;
  let closed = false;
  // One read at a time: ticks while a read runs (a slow or stalled store) make one more read after it.
  let inFlight: Promise<void> | undefined;
  const poll = async () => {
    try {
      const now = await readRevisions(store);
      if (failed) {
        failed = false;
        changed('all');
      } else {
        const accounts = new Set([...now].filter(([account, revision]) => seen.get(account) !== revision).map(([account]) => account));
        if (accounts.size > 0) changed(accounts);
      }
      seen = now;
    } catch (error) {
      failed = true;
      options.onError?.(error);
    }
  };
  let again = false;
  const tick = () => {
    if (closed) return;
    if (inFlight) {
      again = true;
      return;
    }
    inFlight = poll().finally(() => {
      inFlight = undefined;
      if (again) {
        again = false;
        tick();
      }
    });
  };
  const timer = setInterval(tick, options.pollMs ?? 250);
  timer.unref();
  // This process's own commits are read at once rather than at the next tick: an edge made through
  // the API is then served a moment after the answer. The read waits for an immediate: the
  // reader's snapshot (sqlite.ts) may have begun before the commit, and it ends in an immediate
  // queued when it began, so before this one. At most one such read per SOON_MS, so that a stream
  // of writes (each bumps its account's revision) does not read the edges again for each group.
  let soon: NodeJS.Timeout | undefined;
  let lastSoon = 0;
  const readSoon = () => {
    soon = undefined;
    lastSoon = performance.now();
    tick();
  };
  const unsubscribe = store.onCommit?.(() => {
    if (soon || closed) return;
    const wait = lastSoon + SOON_MS - performance.now();
    soon = setTimeout(() => setImmediate(readSoon), Math.max(0, wait));
  });
  return {
    async close() {
      closed = true;
      clearInterval(timer);
      unsubscribe?.();
      clearTimeout(soon);
      await inFlight;
    },
  };
}
