// The job runner: polls the store for due jobs of the kinds it knows, runs each under a lease,
// then completes it or schedules a retry. Every instance may run one (EDGEPLANE_RUN_MODE); the
// leases (src/db/jobs.ts) make each claim of a job one runner's.
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { randomBase62 } from '../core/ids.js';
import { systemClock, type Clock } from '../core/time.js';
import { claimJobs, completeJob, failJob, truncateError, type Job, type JobWrite } from '../db/jobs.js';
import type { Store } from '../db/store.js';

export type { Job, JobWrite };

/** What a handler that succeeded asks for; nothing: the job is done and deleted. */
export interface JobResult {
  /** Run the job again then (a renewal) instead of deleting it. */
  rerunAt?: Date;
  /** Writes that land with the job's completion, only if this runner still holds the claim. */
  write?: JobWrite;
}

/** Retry delays: full jitter, uniformly random below `min(capMs, baseMs * factor^(attempt - 1))`. */
export interface Backoff {
  baseMs: number;
  factor: number;
  capMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { baseMs: 5_000, factor: 2, capMs: 3_600_000 };

export interface JobDefinition {
  kind: string;
  /**
   * Does the job's work; a throw schedules a retry, and the error's message is stored and logged,
   * so it must carry no secret. `signal` aborts before the lease runs out: stop then, because the
   * runner no longer waits for the handler, and the job may be claimed again.
   */
  run(job: Job, signal: AbortSignal): Promise<JobResult | void>;
  /**
   * Writes that record a failure on the job's subject (its status), in the transaction that
   * schedules the retry at `retryAt`, only if this runner still holds the claim.
   */
  recordFailure?(error: unknown, job: Job, retryAt: Date): JobWrite | undefined;
  backoff?: Partial<Backoff>;
}

export function defineJob(definition: JobDefinition): JobDefinition {
  return definition;
}

/**
 * The wait before retrying after `attempt` (1 for the first) failed. Full jitter rather than a
 * fixed schedule: jobs that failed together (a DNS provider down) do not come back together.
 */
export function backoffDelay(attempt: number, backoff: Backoff, random: () => number): number {
  const ceiling = Math.min(backoff.capMs, backoff.baseMs * backoff.factor ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
}

export interface JobRunnerOptions {
  store: Store;
  jobs: readonly JobDefinition[];
  log: Logger;
  /** Names this runner in the leases it takes; must differ between runners (default: host, pid and a random part). */
  owner?: string;
  leaseMs?: number;
  pollMs?: number;
  /** Jobs run at once at most. */
  concurrency?: number;
  clock?: Clock;
  /** [0, 1), for the backoff's jitter. */
  random?: () => number;
  /** Told each job's outcome as it is logged, with the seconds from its start (metrics); must not throw. */
  onOutcome?: (kind: string, outcome: JobOutcome, durationSeconds: number) => void;
}

/** What became of one run of a job, as logged: `superseded` and `unrecorded` changed nothing in the store. */
export type JobOutcome = 'done' | 'failed' | 'superseded' | 'unrecorded';

type Outcome = { ok: true; result: JobResult } | { ok: false; error: unknown; message: string };

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

export class JobRunner {
  readonly owner: string;
  private readonly store: Store;
  private readonly definitions = new Map<string, JobDefinition>();
  private readonly log: Logger;
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private readonly concurrency: number;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly onOutcome: JobRunnerOptions['onOutcome'];
  private readonly running = new Set<Promise<void>>();
  private started = false;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  /** The last claim filled every free slot: more jobs are probably due. */
  private backlog = false;

  constructor(options: JobRunnerOptions) {
    this.store = options.store;
    this.log = options.log;
    this.owner = options.owner ?? `${os.hostname()}:${process.pid}:${randomBase62(8)}`;
    this.leaseMs = options.leaseMs ?? 60_000;
    this.pollMs = options.pollMs ?? 1000;
    this.concurrency = options.concurrency ?? 4;
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.onOutcome = options.onOutcome;
    if (!(this.leaseMs > 0 && this.pollMs >= 0 && Number.isInteger(this.concurrency) && this.concurrency >= 1))
      throw new Error('JobRunner: leaseMs must be above 0, pollMs at least 0, concurrency a whole number from 1');
    for (const definition of options.jobs) {
      if (this.definitions.has(definition.kind)) throw new Error(`JobRunner: two job definitions of kind ${definition.kind}`);
      this.definitions.set(definition.kind, definition);
    }
  }

  /** Jobs running now (a shutdown says how many it waits for, and how many it left). */
  get runningCount(): number {
    return this.running.size;
  }

  /** Polls until `stop()`. The polling timer is unref'd: an idle runner does not keep the process alive. */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.schedule(0);
  }

  /**
   * Stops claiming and waits, up to `timeoutMs`, for the jobs running to end and be recorded.
   * Nothing is aborted; a job still running past the wait keeps its lease until it runs out, and
   * another runner then takes it.
   */
  async stop(timeoutMs = 10_000): Promise<void> {
    this.started = false;
    clearTimeout(this.timer);
    // A claim under way starts its jobs, which are then waited for like the others.
    await this.polling;
    if (this.running.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), timeoutMs);
      timer.unref();
    });
    const ended = Promise.allSettled([...this.running]).then(() => false);
    if (await Promise.race([ended, timedOut]))
      this.log.warn({ running: this.running.size }, 'job runner stopped with jobs still running; they run again once their leases run out');
    clearTimeout(timer);
  }

  /** Claims one batch (up to the free slots) and runs it to the end; a failed claim throws. Returns how many jobs ran. */
  async runOnce(): Promise<number> {
    const started = await this.claimAndStart();
    await Promise.all(started);
    return started.length;
  }

  private schedule(delayMs: number): void {
    if (!this.started) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), delayMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.polling || !this.started) return;
    this.polling = this.claimAndStart().then(
      () => {},
      (error: unknown) => {
        // The store is down or refused the claim: the next poll tries again.
        this.backlog = false;
        this.log.error({ err: error }, 'job runner: claiming jobs failed; trying again at the next poll');
      },
    );
    await this.polling;
    this.polling = undefined;
    this.schedule(this.backlog && this.running.size < this.concurrency ? 0 : this.pollMs);
  }

  private async claimAndStart(): Promise<Promise<void>[]> {
    const free = this.concurrency - this.running.size;
    if (free < 1 || this.definitions.size === 0) return [];
    // The lease runs from the claim's `now`: its end is counted from here, before the query.
    const claimedAt = performance.now();
    const jobs = await claimJobs(this.store, {
      owner: this.owner,
      kinds: [...this.definitions.keys()],
      now: this.clock.now(),
      leaseMs: this.leaseMs,
      limit: free,
    });
    this.backlog = jobs.length === free;
    return jobs.map((job) => {
      const execution = this.execute(job, claimedAt);
      this.running.add(execution);
      void execution.finally(() => {
        this.running.delete(execution);
        // A slot is free and more jobs are probably waiting: no need to wait for the next poll.
        if (this.backlog) this.schedule(0);
      });
      return execution;
    });
  }

  /** Runs the job and records its outcome; never rejects. */
  private async execute(job: Job, claimedAt: number): Promise<void> {
    const definition = this.definitions.get(job.kind)!;
    const startedAt = performance.now();
    const outcome = await this.runWithinLease(definition, job, claimedAt);
    const line = { kind: job.kind, subject_id: job.subject_id, job_id: job.id, attempt: job.attempts };
    const report = (ended: JobOutcome) => this.report(job.kind, ended, startedAt);
    try {
      if (outcome.ok) {
        const { rerunAt, write } = outcome.result;
        if (await completeJob(this.store, job, this.owner, { rerunAt, write })) {
          this.log.info({ ...line, outcome: 'done', ...(rerunAt && { rerun_at: rerunAt.toISOString() }) }, 'job done');
          report('done');
        } else {
          // Replaced by a new enqueue, cancelled, or claimed by another runner after the lease ran out.
          this.log.warn({ ...line, outcome: 'superseded' }, 'job done, but its claim was no longer held: nothing recorded');
          report('superseded');
        }
        return;
      }
      const error = truncateError(outcome.message);
      const delayMs = backoffDelay(job.attempts, { ...DEFAULT_BACKOFF, ...definition.backoff }, this.random);
      const retryAt = new Date(this.clock.now().getTime() + delayMs);
      const write = definition.recordFailure?.(outcome.error, job, retryAt);
      if (await failJob(this.store, job, this.owner, { error, retryAt, write })) {
        this.log.warn({ ...line, outcome: 'failed', error, retry_at: retryAt.toISOString() }, 'job failed; it is retried later');
        report('failed');
      } else {
        this.log.warn({ ...line, outcome: 'superseded', error }, 'job failed, but its claim was no longer held: nothing recorded');
        report('superseded');
      }
    } catch (storeError) {
      this.log.error({ ...line, outcome: 'unrecorded', err: storeError }, 'job outcome could not be recorded; it runs again once its lease runs out');
      report('unrecorded');
    }
  }

  /** Passes an outcome to `onOutcome`; a throw there is logged, never taken for the job's. */
  private report(kind: string, outcome: JobOutcome, startedAt: number): void {
    if (!this.onOutcome) return;
    try {
      this.onOutcome(kind, outcome, (performance.now() - startedAt) / 1000);
    } catch (error) {
      this.log.error({ err: error, kind, outcome }, 'job runner: the onOutcome hook threw');
    }
  }

  /**
   * The handler's outcome, or a failure once its lease is about to run out: the signal is aborted
   * then, and the runner stops waiting, so that the outcome is recorded while the claim is still
   * this runner's. The margin leaves time for that write.
   */
  private async runWithinLease(definition: JobDefinition, job: Job, claimedAt: number): Promise<Outcome> {
    const margin = Math.min(this.leaseMs / 5, 10_000);
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const leaseEnding = new Promise<Outcome>((resolve) => {
      timer = setTimeout(
        () => {
          controller.abort(new Error('the job lease is about to run out'));
          const message = `did not finish within its lease (${this.leaseMs} ms)`;
          resolve({ ok: false, error: new Error(message), message });
        },
        Math.max(0, claimedAt + this.leaseMs - margin - performance.now()),
      );
      // Not unref'd, unlike the poll: a job under way keeps the process alive, until its lease
      // at most, even when its handler waits on nothing that would (runOnce would never return).
    });
    const handled = Promise.resolve()
      .then(() => definition.run(job, controller.signal))
      .then(
        (result): Outcome => ({ ok: true, result: result ?? {} }),
        (error: unknown): Outcome => ({ ok: false, error, message: messageOf(error) }),
      );
    try {
      return await Promise.race([handled, leaseEnding]);
    } finally {
      clearTimeout(timer);
    }
  }
}
