// SQLite's write transactions, committed in groups. SQLite has one writer: transactions run one
// after another, and each pays its own COMMIT, which is most of a small write's cost (the WAL
// pages it appends: about half of `POST /api_keys` on SQLite, measured in bench/README.md). Here
// the transactions that are waiting for the writer when it comes free run one after another in
// one SQLite transaction, each inside a savepoint of its own, and are committed together:
//
// - each is still whole or nothing: one that fails is rolled back to its savepoint and fails
//   alone, at once, the others going on;
// - none is answered before the COMMIT that makes it durable; if that COMMIT fails, every one in
//   the group fails with its error, and none of them happened;
// - they are serialized exactly as before (one writer, in the order they asked), and what one
//   wrote is seen by the next in the group, as it would have been after its commit;
// - a transaction alone (no queue) is one SQLite transaction with one savepoint.
//
// A group takes the transactions queued when it starts and those that queue while it runs, up to
// MAX_UNITS, and starts no new one once it is MAX_GROUP_MS old, so that a slow transaction delays
// the answers of at most a bounded group before it. Written by hand: Kysely and better-sqlite3
// have savepoints, not group commit.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../schema.js';

const MAX_UNITS = 64;
const MAX_GROUP_MS = 5;

type Work<T> = (trx: Transaction<Database>) => Promise<T>;

interface Unit {
  work: Work<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** The statements of a group on the writer's connection, run at once. */
export interface GroupWriter {
  exec(sql: string): void;
  /** Whether SQLite still holds the transaction (some errors, a full disk say, roll it back whole). */
  inTransaction(): boolean;
}

/** Thrown through Kysely's transaction when SQLite rolled the whole group back under a unit. */
class GroupLost extends Error {
  constructor(override readonly cause: unknown) {
    super('the transaction was rolled back by SQLite');
  }
}

/** `committed`: called after every group that commits, before its transactions are answered. */
export function groupCommit(db: Kysely<Database>, writer: GroupWriter, committed?: () => void) {
  const queue: Unit[] = [];
  let scheduled = false;

  const schedule = () => {
    if (scheduled || queue.length === 0) return;
    scheduled = true;
    // After the current turn's I/O callbacks: the requests that arrived together queue first.
    setImmediate(() => void drain());
  };

  const drain = async (): Promise<void> => {
    const done: { unit: Unit; value: unknown }[] = [];
    let current: Unit | undefined;
    let begun = false;
    try {
      await db.transaction().execute(async (trx) => {
        begun = true;
        const started = performance.now();
        for (let taken = 0; queue.length > 0 && taken < MAX_UNITS && (taken === 0 || performance.now() - started < MAX_GROUP_MS); taken++) {
          current = queue.shift()!;
          writer.exec('savepoint unit');
          let value: unknown;
          try {
            value = await current.work(trx);
          } catch (error) {
            if (!writer.inTransaction()) throw new GroupLost(error);
            writer.exec('rollback to unit');
            writer.exec('release unit');
            current.reject(error);
            current = undefined;
            continue;
          }
          writer.exec('release unit');
          done.push({ unit: current, value });
          current = undefined;
        }
      });
    } catch (error) {
      // The group did not commit: BEGIN failed (the file locked past the busy timeout: the units
      // queued meanwhile would wait alike, and fail with it), SQLite rolled the transaction back
      // under a unit, or COMMIT failed. None of the group happened.
      const cause = error instanceof GroupLost ? error.cause : error;
      current?.reject(cause);
      for (const { unit } of done) unit.reject(cause);
      if (!begun) for (const unit of queue.splice(0)) unit.reject(cause);
      return;
    } finally {
      scheduled = false;
      schedule();
    }
    if (done.length > 0) committed?.();
    for (const { unit, value } of done) unit.resolve(value);
  };

  return function transaction<T>(work: Work<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      schedule();
    });
  };
}
