// The job engine on both stores: jobs enqueued in the caller's transaction, claimed under a lease,
// completed or retried with backoff, never run twice by two runners at once, taken over after a
// runner dies, and a runner that outlives its store's failures.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { ConfigError, loadConfig, readSettings } from '../../src/config.js';
import { newId } from '../../src/core/ids.js';
import { createAccount } from '../../src/db/accounts.js';
import { claimJobs, completeJob, failJob, MAX_ERROR_LENGTH, type Job } from '../../src/db/jobs.js';
import { scopedTx, type ScopedDb } from '../../src/db/scoped.js';
import { openStore, type Scope, type Store } from '../../src/db/store.js';
import { cancelJobs, enqueueJob } from '../../src/jobs/queue.js';
import { backoffDelay, DEFAULT_BACKOFF, defineJob, JobRunner, type JobDefinition } from '../../src/jobs/runner.js';
import { waitFor } from '../helpers/assertions.js';
import { freshStore, storeKinds } from '../helpers/harness.js';

type Fresh = Awaited<ReturnType<typeof freshStore>>;

/** A pino logger whose lines are kept, parsed. */
function capturedLog() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      callback();
    },
  });
  return { lines, log: pino({ level: 'debug' }, sink) };
}

/** A promise to hold a handler on, and its release. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** A clock that moves only when told. */
function manualClock(start = Date.now()) {
  return {
    ms: start,
    now() {
      return new Date(this.ms);
    },
  };
}

/** The store, through which the next `n` transactions throw as if the database were down. */
function breakable(store: Store) {
  let failures = 0;
  const down = () => {
    if (failures === 0) return false;
    failures--;
    return true;
  };
  // Every way in fails while it is down: the query builder and the write transactions.
  const broken = Object.create(store, {
    db: {
      get() {
        if (down()) throw new Error('the store is down (test)');
        return store.db;
      },
    },
    transaction: {
      value: ((work) => (down() ? Promise.reject(new Error('the store is down (test)')) : store.transaction(work))) as Store['transaction'],
    },
  }) as Store;
  return {
    store: broken,
    failNext(n: number) {
      failures = n;
    },
  };
}

const uniqueKind = () => `test_${randomBytes(4).toString('hex')}`;

async function newAccount(store: Store): Promise<Scope> {
  const id = newId('acct');
  await createAccount(store, { id, name: `jobs-${id.slice(-6)}`, created_at: new Date().toISOString() }, async () => undefined);
  return { accountId: id };
}

function rows(store: Store, kind: string): Promise<Job[]> {
  return store.db.selectFrom('jobs').selectAll().where('kind', '=', kind).orderBy('subject_id').execute();
}

function enqueue(store: Store, scope: Scope, kind: string, subjectId: string, runAt: Date): Promise<string> {
  return scopedTx(store, scope, (db) => enqueueJob(db, kind, subjectId, runAt, new Date()));
}

/** A job kind that counts its runs per subject, then does what `then` does (default: nothing). */
function counting(kind: string, then: (job: Job, signal: AbortSignal) => Promise<void> = async () => {}) {
  const runs = new Map<string, number>();
  const seen: Job[] = [];
  const definition: JobDefinition = defineJob({
    kind,
    async run(job, signal) {
      runs.set(job.subject_id, (runs.get(job.subject_id) ?? 0) + 1);
      seen.push({ ...job });
      await then(job, signal);
    },
  });
  return { definition, runs, seen, total: () => [...runs.values()].reduce((a, b) => a + b, 0) };
}

for (const storeKind of storeKinds()) {
  describe(`jobs [${storeKind}]`, () => {
    let fresh: Fresh;
    let store: Store;
    /** Another Store on the same database: another instance's connections. */
    const secondStore = () => openStore(fresh.database, { schema: fresh.schema });

    before(async () => {
      fresh = await freshStore(storeKind);
      store = fresh.store;
    });
    after(async () => {
      await fresh?.dispose();
    });

    it("records the caller's time (the injected clock's), not the machine's, as the job's creation", async () => {
      const scope = await newAccount(store);
      const kind = uniqueKind();
      const then = new Date('2001-02-03T04:05:06.789Z');
      await scopedTx(store, scope, (db) => enqueueJob(db, kind, 'rd_clock', new Date('2030-01-01T00:00:00Z'), then));
      const [job] = await rows(store, kind);
      assert.equal(job?.created_at, then.toISOString());
    });

    it("enqueues in the caller's transaction: a rollback leaves no job, a commit one per kind and subject", async () => {
      const scope = await newAccount(store);
      const kind = uniqueKind();
      const other = uniqueKind();
      await assert.rejects(
        scopedTx(store, scope, async (db) => {
          await enqueueJob(db, kind, 'rd_rolled_back', new Date(), new Date());
          throw new Error('the change failed');
        }),
        /the change failed/,
      );
      assert.deepEqual(await rows(store, kind), []);

      const first = await enqueue(store, scope, kind, 'rd_1', new Date('2030-01-01T00:00:00Z'));
      assert.match(first, /^job_[0-9A-Za-z]{27}$/);
      const second = await enqueue(store, scope, kind, 'rd_1', new Date('2031-01-01T00:00:00Z'));
      await enqueue(store, scope, other, 'rd_1', new Date());
      const stored = await rows(store, kind);
      assert.equal(stored.length, 1, 'one job per kind and subject');
      assert.deepEqual(
        { ...stored[0], created_at: 'x' },
        {
          id: second,
          account_id: scope.accountId,
          kind,
          subject_id: 'rd_1',
          run_at: '2031-01-01T00:00:00.000Z',
          attempts: 0,
          lease_owner: null,
          lease_until: null,
          last_error: null,
          created_at: 'x',
        },
      );

      assert.equal(await scopedTx(store, scope, (db) => cancelJobs(db, 'rd_1', kind)), 1);
      assert.equal((await rows(store, other)).length, 1, 'only the kind named is cancelled');
      assert.equal(await scopedTx(store, scope, (db) => cancelJobs(db, 'rd_1')), 1);
      assert.equal((await rows(store, other)).length, 0);
    });

    it('runs a due job once and deletes it', async () => {
      const scope = await newAccount(store);
      const kind = uniqueKind();
      const job = counting(kind);
      const { lines, log } = capturedLog();
      const runner = new JobRunner({ store, jobs: [job.definition], log });
      const id = await enqueue(store, scope, kind, 'rd_due', new Date(Date.now() - 1));
      const before = Date.now();
      assert.equal(await runner.runOnce(), 1);
      assert.equal(job.runs.get('rd_due'), 1);
      const seen = job.seen[0]!;
      assert.equal(seen.id, id);
      assert.equal(seen.account_id, scope.accountId);
      assert.equal(seen.attempts, 1);
      assert.equal(seen.lease_owner, runner.owner);
      assert.ok(Date.parse(seen.lease_until!) >= before + 59_000, 'leased for a minute');
      assert.deepEqual(await rows(store, kind), []);
      assert.equal(await runner.runOnce(), 0);
      assert.equal(job.total(), 1);
      const line = lines.find((l) => l.kind === kind);
      assert.deepEqual([line?.subject_id, line?.attempt, line?.outcome], ['rd_due', 1, 'done']);
    });

    it('does not claim a job before it is due', async () => {
      const scope = await newAccount(store);
      const kind = uniqueKind();
      const clock = manualClock();
      const job = counting(kind);
      const runner = new JobRunner({ store, jobs: [job.definition], log: capturedLog().log, clock });
      await enqueue(store, scope, kind, 'rd_later', new Date(clock.ms + 60_000));
      clock.ms += 59_999;
      assert.equal(await runner.runOnce(), 0);
      const [row] = await rows(store, kind);
      assert.deepEqual([row?.attempts, row?.lease_owner, row?.lease_until], [0, null, null]);
      clock.ms += 1;
      assert.equal(await runner.runOnce(), 1, 'due at its run_at');
      assert.equal(job.total(), 1);
    });

    it('retries a failing job later, with its attempts and error recorded and run_at within the backoff window', async () => {
      const scope = await newAccount(store);
      const kind = uniqueKind();
      const clock = manualClock();
      const start = clock.ms;
      const job = counting(kind, async (j) => {
        throw new Error(j.attempts === 1 ? 'DNS lookup failed' : 'x'.repeat(5000));
      });
      const { lines, log } = capturedLog();
      const runner = new JobRunner({ store, jobs: [job.definition], log, clock, random: () => 0.5 });
      await enqueue(store, scope, kind, 'rd_failing', clock.now());

      assert.equal(await runner.runOnce(), 1);
      let [row] = await rows(store, kind);
      assert.equal(row?.attempts, 1);
      assert.equal(row?.last_error, 'DNS lookup failed');
      assert.deepEqual([row?.lease_owner, row?.lease_until], [null, null], 'the lease is released');
      const retryAt = Date.parse(row!.run_at);
      assert.ok(retryAt >= start && retryAt <= start + 5_000, `within the first window of 5 s: ${row?.run_at}`);
      assert.equal(row?.run_at, new Date(start + 2_500).toISOString(), 'half the window with random() = 0.5');
      const line = lines.find((l) => l.kind === kind && l.outcome === 'failed');
      assert.deepEqual([line?.subject_id, line?.attempt, line?.error, line?.retry_at], ['rd_failing', 1, 'DNS lookup failed', row?.run_at]);

      clock.ms = retryAt - 1;
      assert.equal(await runner.runOnce(), 0, 'not before the retry');
      clock.ms = retryAt;
      assert.equal(await runner.runOnce(), 1);
      [row] = await rows(store, kind);
      assert.equal(row?.attempts, 2);
      assert.equal(row?.run_at, new Date(retryAt + 5_000).toISOString(), 'the window doubled to 10 s');
      assert.equal(row?.last_error?.length, MAX_ERROR_LENGTH, 'a long message is cut');
      assert.equal(job.total(), 2);
    });

    it('replaces a job enqueued again, fencing off the holder of the old claim', async () => {
      const scope = await newAccount(store);
      const kind = uniqueKind();
      const oldId = await enqueue(store, scope, kind, 'rd_replaced', new Date());
      const [claimed] = await claimJobs(store, { owner: 'old-holder', kinds: [kind], now: new Date(), leaseMs: 60_000, limit: 10 });
      assert.equal(claimed?.id, oldId);
      const later = new Date(Date.now() + 3_600_000);
      const replacementId = await enqueue(store, scope, kind, 'rd_replaced', later);
      const [replacement] = await rows(store, kind);
      assert.notEqual(replacementId, oldId);
      assert.deepEqual(
        [replacement?.id, replacement?.run_at, replacement?.attempts, replacement?.lease_owner, replacement?.lease_until],
        [replacementId, later.toISOString(), 0, null, null],
      );
      assert.equal(await completeJob(store, claimed!, 'old-holder'), false);
      assert.equal(await failJob(store, claimed!, 'old-holder', { error: 'late', retryAt: new Date() }), false);
      assert.deepEqual(await rows(store, kind), [replacement]);

      // A handler that schedules its subject's next run (a renewal) keeps that new job.
      const clock = manualClock(later.getTime());
      const next = new Date(later.getTime() + 3_600_000);
      const job = counting(kind, async () => {
        await enqueue(store, scope, kind, 'rd_replaced', next);
      });
      const { lines, log } = capturedLog();
      const runner = new JobRunner({ store, jobs: [job.definition], log, clock });
      assert.equal(await runner.runOnce(), 1);
      const [renewal] = await rows(store, kind);
      assert.deepEqual([renewal?.run_at, renewal?.attempts, renewal?.lease_owner], [next.toISOString(), 0, null]);
      assert.equal(lines.find((l) => l.kind === kind)?.outcome, 'superseded');
    });

    it('runs each of 200 jobs exactly once with two runners on one database', async () => {
      const scope = await newAccount(store);
      const kind = uniqueKind();
      const subjects = Array.from({ length: 200 }, (_, i) => `rd_${String(i).padStart(3, '0')}`);
      await scopedTx(store, scope, async (db) => {
        for (const subject of subjects) await enqueueJob(db, kind, subject, new Date(), new Date());
      });
      const runs = new Map<string, number>();
      const byRunner = [0, 0];
      const { lines, log } = capturedLog();
      const other = secondStore();
      const runners = [store, other].map(
        (s, i) =>
          new JobRunner({
            store: s,
            log,
            pollMs: 5,
            concurrency: 4,
            jobs: [
              defineJob({
                kind,
                async run(job) {
                  runs.set(job.subject_id, (runs.get(job.subject_id) ?? 0) + 1);
                  byRunner[i]!++;
                  await new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
                },
              }),
            ],
          }),
      );
      try {
        for (const runner of runners) runner.start();
        await waitFor('every job to be done', async () => (await rows(store, kind)).length === 0, { timeoutMs: 60_000 });
      } finally {
        await Promise.all(runners.map((r) => r.stop()));
        await other.close();
      }
      assert.deepEqual(
        subjects.filter((s) => runs.get(s) !== 1),
        [],
        'every subject ran exactly once',
      );
      assert.equal(lines.filter((l) => l.kind === kind && l.outcome === 'done').length, 200);
      assert.ok(
        byRunner.every((n) => n > 0),
        `both runners took jobs: ${byRunner.join(' + ')}`,
      );
    });

    it('lets another runner take the job of a runner killed mid-job once its lease runs out, and ignores its late completion', async () => {
      const scope = await newAccount(store);
      const kind = uniqueKind();
      const leaseMs = 600;
      await enqueue(store, scope, kind, 'rd_orphan', new Date());

      // Runner A claims the job, then "dies": its handler never ends and its store is gone, so
      // it records nothing.
      const a = breakable(store);
      const aLog = capturedLog();
      let claimedByA: Job | undefined;
      const runnerA = new JobRunner({
        store: a.store,
        log: aLog.log,
        owner: 'runner-a',
        leaseMs,
        jobs: [
          defineJob({
            kind,
            run(job) {
              claimedByA = { ...job };
              a.failNext(Infinity);
              return new Promise(() => {});
            },
          }),
        ],
      });
      const aEnded = runnerA.runOnce();
      await waitFor('runner A to claim the job', () => claimedByA !== undefined);

      const other = secondStore();
      const held = gate();
      const job = counting(kind, () => held.opened);
      const runnerB = new JobRunner({ store: other, log: capturedLog().log, owner: 'runner-b', pollMs: 10, jobs: [job.definition] });
      try {
        assert.deepEqual(
          await claimJobs(other, { owner: 'runner-b', kinds: [kind], now: new Date(), leaseMs: 60_000, limit: 10 }),
          [],
          'not while the lease holds',
        );
        runnerB.start();
        await waitFor("runner B to take the job after A's lease", () => job.total() === 1);
        assert.ok(Date.now() >= Date.parse(claimedByA!.lease_until!), 'not before the lease ran out');
        assert.deepEqual([job.seen[0]?.id, job.seen[0]?.attempts, job.seen[0]?.lease_owner], [claimedByA!.id, 2, 'runner-b']);

        // A comes back late: its claim is no longer the job's.
        a.failNext(0);
        assert.equal(await completeJob(a.store, claimedByA!, 'runner-a'), false);
        assert.equal(await failJob(a.store, claimedByA!, 'runner-a', { error: 'late', retryAt: new Date() }), false);
        const [row] = await rows(store, kind);
        assert.deepEqual([row?.lease_owner, row?.attempts], ['runner-b', 2], "B's claim stands");

        held.open();
        await waitFor('runner B to complete the job', async () => (await rows(store, kind)).length === 0);
        assert.equal(job.total(), 1);
        assert.equal(await aEnded, 1, 'A gave up on its handler at the end of its lease');
        assert.ok(aLog.lines.some((l) => l.outcome === 'unrecorded'));
      } finally {
        held.open();
        await runnerB.stop();
        await other.close();
      }
    });

    it('aborts a handler before its lease runs out, and retries the job', async () => {
      const scope = await newAccount(store);
      const kind = uniqueKind();
      const leaseMs = 400;
      const timings: number[] = [];
      const job = counting(kind, async (j, signal) => {
        const started = performance.now();
        if (j.subject_id === 'rd_ignores') return new Promise(() => {});
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
        timings.push(performance.now() - started);
        throw signal.reason;
      });
      const runner = new JobRunner({ store, jobs: [job.definition], log: capturedLog().log, leaseMs, concurrency: 2 });
      await enqueue(store, scope, kind, 'rd_honours', new Date());
      await enqueue(store, scope, kind, 'rd_ignores', new Date());
      assert.equal(await runner.runOnce(), 2, 'the runner stops waiting for a handler that ignores the signal');
      assert.equal(timings.length, 1);
      assert.ok(timings[0]! < leaseMs, `aborted after ${timings[0]} ms, within the lease`);
      for (const row of await rows(store, kind)) {
        assert.deepEqual([row.attempts, row.lease_owner, row.lease_until], [1, null, null], row.subject_id);
        assert.match(row.last_error ?? '', /did not finish within its lease \(400 ms\)/);
      }
    });

    it('stops claiming on stop(), and waits for the jobs running', async () => {
      const scope = await newAccount(store);
      const kind = uniqueKind();
      const held = gate();
      const job = counting(kind, () => held.opened);
      // One slot: the second job waits for the first to end, and then only stop() keeps it waiting.
      const runner = new JobRunner({ store, jobs: [job.definition], log: capturedLog().log, pollMs: 10, concurrency: 1 });
      await enqueue(store, scope, kind, 'rd_running', new Date(Date.now() - 1000));
      await enqueue(store, scope, kind, 'rd_after_stop', new Date());
      runner.start();
      await waitFor('the job to start', () => job.total() === 1);
      assert.equal(job.seen[0]?.subject_id, 'rd_running');
      let stopped = false;
      const stopping = runner.stop().then(() => (stopped = true));
      const pause = () => new Promise((resolve) => setTimeout(resolve, 50));
      await pause();
      assert.equal(stopped, false, 'stop() waits for the running job');
      held.open();
      await stopping;
      await pause();
      const left = await rows(store, kind);
      assert.deepEqual(
        left.map((r) => [r.subject_id, r.attempts]),
        [['rd_after_stop', 0]],
        'the running job was completed, and nothing claimed after stop()',
      );
    });

    it("lands a handler's writes with its completion or its rescheduling, and a failure's with its retry, only while the claim holds", async () => {
      const scope = await newAccount(store);
      const kind = uniqueKind();
      const log = capturedLog();
      const clock = manualClock();
      const rerunAt = new Date(clock.ms + 3_600_000);
      // Each write leaves a job of its own kind behind, a row the test can look for.
      const mark = (label: string) => async (db: ScopedDb) => void (await enqueueJob(db, `${kind}_${label}`, 'rd_mark', new Date(), new Date()));
      const definition = defineJob({
        kind,
        async run(job) {
          if (job.subject_id === 'rd_fails') throw new Error('the CA is down');
          return { rerunAt: job.subject_id === 'rd_renews' ? rerunAt : undefined, write: mark(job.subject_id) };
        },
        recordFailure: (error, job, retryAt) => mark(`${job.subject_id}_${(error as Error).message.length}_${retryAt.getTime() > clock.ms}`),
      });
      for (const subject of ['rd_done', 'rd_renews', 'rd_fails']) await enqueue(store, scope, kind, subject, new Date(clock.ms));
      const runner = new JobRunner({ store, jobs: [definition], log: log.log, clock, random: () => 0.5 });
      assert.equal(await runner.runOnce(), 3);
      const marks = async () =>
        (await store.db.selectFrom('jobs').select('kind').where('kind', 'like', `${kind}_%`).execute()).map((r) => r.kind.slice(kind.length + 1)).sort();
      assert.deepEqual(await marks(), ['rd_done', 'rd_fails_14_true', 'rd_renews']);
      const left = await rows(store, kind);
      assert.deepEqual(
        left.map((j) => [j.subject_id, j.attempts, j.run_at === rerunAt.toISOString(), j.last_error]),
        [
          ['rd_fails', 1, false, 'the CA is down'],
          ['rd_renews', 0, true, null],
        ],
        'done: deleted; rescheduled: a fresh job at rerunAt; failed: retried',
      );

      // A claim that no longer holds writes nothing, whatever the outcome.
      await enqueue(store, scope, kind, 'rd_late', new Date(clock.ms));
      const [claimed] = await claimJobs(store, { owner: 'late', kinds: [kind], now: new Date(clock.ms), leaseMs: 60_000, limit: 1 });
      await enqueue(store, scope, kind, 'rd_late', new Date(clock.ms));
      assert.equal(await completeJob(store, claimed!, 'late', { write: mark('late_complete') }), false);
      assert.equal(await failJob(store, claimed!, 'late', { error: 'x', retryAt: new Date(), write: mark('late_fail') }), false);
      assert.deepEqual(await marks(), ['rd_done', 'rd_fails_14_true', 'rd_renews']);
    });

    it('survives a store error while polling, logging it and claiming at the next poll', async () => {
      const scope = await newAccount(store);
      const kind = uniqueKind();
      const job = counting(kind);
      const flaky = breakable(store);
      const { lines, log } = capturedLog();
      const runner = new JobRunner({ store: flaky.store, jobs: [job.definition], log, pollMs: 10 });
      await enqueue(store, scope, kind, 'rd_flaky', new Date());
      flaky.failNext(1);
      await assert.rejects(runner.runOnce(), /the store is down/, 'runOnce reports it');
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown) => unhandled.push(reason);
      process.on('unhandledRejection', onUnhandled);
      try {
        flaky.failNext(2);
        runner.start();
        await waitFor('the job to run after the store is back', () => job.total() === 1);
        await runner.stop();
      } finally {
        process.off('unhandledRejection', onUnhandled);
        await runner.stop();
      }
      assert.deepEqual(unhandled, []);
      const errors = lines.filter((l) => l.level === 50 && String(l.msg).includes('claiming jobs failed'));
      assert.equal(errors.length, 2, 'each failed poll is logged');
      assert.match(String((errors[0]!.err as { message?: string })?.message), /the store is down/);
      assert.deepEqual(await rows(store, kind), []);
    });
  });
}

describe('jobs, without a store', () => {
  it('backs off exponentially from 5 s up to an hour, with full jitter', () => {
    const top = () => 1 - Number.EPSILON;
    assert.deepEqual(
      [1, 2, 3, 4].map((attempt) => backoffDelay(attempt, DEFAULT_BACKOFF, top)),
      [4_999, 9_999, 19_999, 39_999],
    );
    assert.equal(backoffDelay(30, DEFAULT_BACKOFF, top), 3_599_999, 'capped at an hour');
    assert.equal(
      backoffDelay(3, DEFAULT_BACKOFF, () => 0),
      0,
      'anywhere from 0',
    );
  });

  it('refuses two definitions of one kind', () => {
    const definition = defineJob({ kind: 'twice', run: async () => {} });
    assert.throws(() => new JobRunner({ store: {} as Store, jobs: [definition, definition], log: capturedLog().log }), /two job definitions of kind twice/);
  });

  it('refuses EDGEPLANE_RUN_MODE=bogus with a message naming the choices', () => {
    assert.throws(
      () => loadConfig(readSettings({ EDGEPLANE_RUN_MODE: 'bogus' })),
      (e: unknown) =>
        e instanceof ConfigError && e.problems.length === 1 && e.problems[0] === "EDGEPLANE_RUN_MODE must be one of api, worker, all; got 'bogus'",
    );
    assert.equal(loadConfig(readSettings({ EDGEPLANE_RUN_MODE: 'worker' })).runMode, 'worker');
  });
});
