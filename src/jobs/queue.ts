// Enqueueing and cancelling jobs, in the caller's transaction: through its ScopedDb, so a job
// commits or rolls back with the change that needs it (no job for a change that failed, no
// change without its job).
import { newId } from '../core/ids.js';
import type { ScopedDb } from '../db/scoped.js';

/**
 * Schedules `kind` on `subjectId` at `runAt`, replacing the subject's job of that kind if there
 * is one (due at the new time, no attempts, no lease). The replacement is a new row with a new
 * id, so a runner still working on the old one can neither complete nor fail it. Two enqueues
 * of one subject must not race (on PostgreSQL the second would meet the unique index): callers
 * write the subject's row in the same transaction, which locks it. `now` is the request's (the
 * injected clock's) time, recorded as the job's creation. Returns the job's id.
 */
export async function enqueueJob(db: ScopedDb, kind: string, subjectId: string, runAt: Date, now: Date): Promise<string> {
  await db.delete('jobs', { kind, subject_id: subjectId });
  const id = newId('job');
  await db.insert('jobs', {
    id,
    kind,
    subject_id: subjectId,
    run_at: runAt.toISOString(),
    attempts: 0,
    lease_owner: null,
    lease_until: null,
    last_error: null,
    created_at: now.toISOString(),
  });
  return id;
}

/** Deletes the subject's jobs (of `kind` only, when given); returns how many there were. */
export function cancelJobs(db: ScopedDb, subjectId: string, kind?: string): Promise<number> {
  return db.delete('jobs', { subject_id: subjectId, kind });
}
