// The queries of job runners, across accounts: a runner serves every account, so these take the
// store rather than a ScopedDb. Jobs are written (enqueued, cancelled) in the account's own
// transactions through ScopedDb (src/jobs/queue.ts).
//
// A claim is a lease: the row names its owner until `lease_until`, and a runner that dies
// mid-job leaves a row that another claims once the lease has run out. Completing or failing is
// fenced by the claim (the row's id, its owner and its attempt number), so a runner whose lease
// ran out, or whose job was replaced by a new enqueue, changes nothing.
import type { ExpressionBuilder, Transaction } from 'kysely';
import type { Database, JobsTable } from './schema.js';
import { ScopedDb } from './scoped.js';
import { withTx, type Store } from './store.js';

export type Job = JobsTable;

/** Writes to the job's account that land with its outcome, in the same transaction, only while the claim holds. */
export type JobWrite = (db: ScopedDb) => Promise<void>;

/** `last_error` keeps this many characters: a message for operators, not a dump. */
export const MAX_ERROR_LENGTH = 1000;

export function truncateError(message: string): string {
  return message.length <= MAX_ERROR_LENGTH ? message : `${message.slice(0, MAX_ERROR_LENGTH - 1)}…`;
}

export interface ClaimOptions {
  /** Who claims: unique per runner, so that a lease names one. */
  owner: string;
  kinds: readonly string[];
  now: Date;
  leaseMs: number;
  limit: number;
}

/**
 * Leases up to `limit` due jobs of `kinds` (due: `run_at <= now`, and no lease or one that has
 * run out), oldest due first, counting an attempt on each; returns them as claimed.
 *
 * One statement, `UPDATE … WHERE id IN (SELECT … LIMIT n)`, in a write transaction. On
 * PostgreSQL the select locks its rows `FOR UPDATE SKIP LOCKED`: concurrent claimers pass over
 * each other's rows instead of waiting for them, and a row claimed and committed meanwhile is
 * checked again against the lease condition and dropped. On SQLite the transaction starts with
 * `BEGIN IMMEDIATE`, so claimers (in any process) take the file's write lock one after another
 * and each sees the leases of those before.
 */
export async function claimJobs(store: Store, options: ClaimOptions): Promise<Job[]> {
  const { owner, kinds, now, leaseMs, limit } = options;
  if (kinds.length === 0 || limit < 1) return [];
  const at = now.toISOString();
  const leaseUntil = new Date(now.getTime() + leaseMs).toISOString();
  const claimed = await withTx(store, (trx) => {
    let due = trx
      .selectFrom('jobs')
      .select('id')
      .where('kind', 'in', kinds)
      .where('run_at', '<=', at)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', at)]))
      .orderBy('run_at')
      .orderBy('id')
      .limit(limit);
    if (store.dialect === 'postgres') due = due.forUpdate().skipLocked();
    return trx
      .updateTable('jobs')
      .set((eb) => ({ attempts: eb('attempts', '+', 1), lease_owner: owner, lease_until: leaseUntil }))
      .where('id', 'in', due)
      .returningAll()
      .execute();
  });
  // RETURNING keeps no order.
  return claimed.sort((a, b) => (a.run_at < b.run_at ? -1 : a.run_at > b.run_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The claim `owner` took of `job` (its id, owner and attempt number): what every outcome is fenced by. */
const claimHeld = (job: Job, owner: string) => (eb: ExpressionBuilder<Database, 'jobs'>) =>
  eb.and([eb('id', '=', job.id), eb('lease_owner', '=', owner), eb('attempts', '=', job.attempts)]);

/**
 * In one transaction: `end` changes the job's row under the claim fence and says how many rows
 * it changed; only if one, `write` runs with a ScopedDb of the job's account. Says whether the
 * claim held.
 */
function endRun(store: Store, job: Job, end: (trx: Transaction<Database>) => Promise<bigint>, write?: JobWrite): Promise<boolean> {
  return withTx(store, async (trx) => {
    if (Number(await end(trx)) === 0) return false;
    await write?.(new ScopedDb(trx, { accountId: job.account_id }, store.dialect));
    return true;
  });
}

/**
 * Ends this run of the job if `owner` still holds this claim of it, with `write` in the same
 * transaction: deletes it, or, given `rerunAt`, makes it due again then as a fresh job (no
 * attempts, no error), which is how a job schedules its own next run (a renewal). Says whether
 * the claim held; when it did not, nothing is written.
 */
export function completeJob(store: Store, job: Job, owner: string, outcome: { rerunAt?: Date; write?: JobWrite } = {}): Promise<boolean> {
  const { rerunAt, write } = outcome;
  return endRun(
    store,
    job,
    async (trx) =>
      rerunAt
        ? (
            await trx
              .updateTable('jobs')
              .set({ run_at: rerunAt.toISOString(), attempts: 0, last_error: null, lease_owner: null, lease_until: null })
              .where(claimHeld(job, owner))
              .executeTakeFirst()
          ).numUpdatedRows
        : (await trx.deleteFrom('jobs').where(claimHeld(job, owner)).executeTakeFirst()).numDeletedRows,
    write,
  );
}

/**
 * Releases the job for another try at `retryAt`, recording `error` (a message the caller has
 * made safe to store: no secrets), with `write` in the same transaction, if `owner` still holds
 * this claim of it; says whether it did.
 */
export function failJob(store: Store, job: Job, owner: string, failure: { error: string; retryAt: Date; write?: JobWrite }): Promise<boolean> {
  return endRun(
    store,
    job,
    async (trx) =>
      (
        await trx
          .updateTable('jobs')
          .set({ run_at: failure.retryAt.toISOString(), last_error: truncateError(failure.error), lease_owner: null, lease_until: null })
          .where(claimHeld(job, owner))
          .executeTakeFirst()
      ).numUpdatedRows,
    failure.write,
  );
}
