// Idempotency-Key on POST: a client that sends a create again with the same key and the same
// request (after a timeout, say) gets the first answer, status and body, and nothing is created
// twice. The same key with another request is a 409; a request whose twin is still being answered
// waits for that answer (a few seconds at most, then a 409 to retry). A key is the API key's that
// sent it (another credential's same key is another key) and is kept 24 h, in the store
// (src/db/idempotency.ts), so this holds across instances.
//
// Nothing is replayed to a request that would be refused now: authentication and the IP screen
// run before (onRequest), and the route's own authorization of a create runs before the key is
// looked up. A recorded answer never holds a secret shown once (an API key's token): such fields
// are recorded as a later read shows them, null, so a replay shows them null too.
//
// Answers worth replaying are recorded: any but a server error (5xx) or a rate limit (429),
// which say nothing about the request and may be retried with the key. A request that was
// cut off before its answer leaves a claim that lapses after the lease, then the key is free,
// unless its change had committed (the claim is marked in the change's own transaction,
// src/crud/audit.ts): then a retry is told the request was carried out (409 ERR_EP_274), and
// nothing is made twice, even when the database's connection broke as it committed.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../core/errors.js';
import type { IdempotencyClaim } from '../core/context.js';
import { claimIdempotencyKey, purgeIdempotencyKeys, recordIdempotentAnswer, releaseIdempotencyKey, type Claim } from '../db/idempotency.js';
import type { Store } from '../db/store.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The key this request claimed, whose answer is to be recorded. */
    idempotency?: IdempotencyClaim;
  }
  interface FastifyContextConfig {
    /** A POST that may be replayed: what its answer shows only once, and its authorization, checked before a replay. */
    replay?: { shownOnce: readonly string[]; authorize(request: FastifyRequest): Promise<void> };
  }
}

export const IDEMPOTENCY_KEEP_MS = 24 * 3600_000;
/** Longer than any request may take (EDGEPLANE_REQUEST_TIMEOUT and the handler's work). */
const LEASE_MS = 120_000;
/** How long a request waits for its twin's answer, and how often it looks. */
const WAIT_MS = 10_000;
const POLL_MS = 50;

const KEY = /^[\x21-\x7e]{1,255}$/;

/** How often an instance deletes the keys kept past their time, and how many one statement deletes. */
const SWEEP_MS = 10 * 60_000;
const SWEEP_BATCH = 1000;

/** What identifies the request: its path and body, as parsed (key order kept; spacing not). */
function requestHash(request: FastifyRequest): string {
  return createHash('sha256')
    .update(`${request.method} ${request.url}\n${JSON.stringify(request.body ?? null)}`)
    .digest('hex');
}

const replayable = (status: number) => status < 500 && status !== 429;

/** The answer as it may be stored: a success's fields shown once are null, as a later read shows them. */
function recordable(status: number, payload: string, shownOnce: readonly string[]): string {
  if (status >= 300 || shownOnce.length === 0) return payload;
  const body = JSON.parse(payload) as Record<string, unknown>;
  for (const field of shownOnce) if (field in body) body[field] = null;
  return JSON.stringify(body);
}

export function registerIdempotency(app: FastifyInstance, deps: { store: Store; now: () => Date }): void {
  const { store } = deps;

  /** Claims the key, waiting while a twin is answered; resolves with the outcome to act on. */
  async function claim(claim: IdempotencyClaim): Promise<Claim> {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const outcome = await claimIdempotencyKey(store, { ...claim, now: deps.now(), leaseMs: LEASE_MS, keepMs: IDEMPOTENCY_KEEP_MS });
      if (outcome.kind !== 'in-progress' || Date.now() >= deadline) return outcome;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  // Keys past their 24 hours are free whether or not their rows are gone (a claim reads the row's
  // age); the sweep only keeps the table from growing for ever. Every instance sweeps: the deletes
  // of two at once simply find less to do.
  const sweep = setInterval(() => {
    void (async () => {
      const before = new Date(deps.now().getTime() - IDEMPOTENCY_KEEP_MS);
      while ((await purgeIdempotencyKeys(store, before, SWEEP_BATCH)) === SWEEP_BATCH);
    })().catch((error: unknown) => app.log.warn({ err: error }, 'Idempotency-Key: expired keys could not be deleted; the next sweep tries again'));
  }, SWEEP_MS);
  sweep.unref();
  app.addHook('onClose', () => clearInterval(sweep));

  /** Claims the request's key; a recorded answer to replay, or undefined once the claim is the request's. */
  async function claimFor(request: FastifyRequest, header: string | string[]): Promise<{ status: number; body: string } | undefined> {
    if (Array.isArray(header) || !KEY.test(header)) throw errors.idempotencyKeyInvalid();
    // Refused now means refused, whatever the key once got: the role may have changed since.
    await request.routeOptions.config.replay?.authorize(request);
    const { scope, keyId } = request.ctx;
    const claimed: IdempotencyClaim = { accountId: scope.accountId, apiKeyId: keyId, key: header, requestHash: requestHash(request) };
    const outcome = await claim(claimed);
    if (outcome.kind === 'mismatch') throw errors.idempotencyKeyReused({ key: header });
    if (outcome.kind === 'in-progress') throw errors.idempotencyKeyInProgress({ key: header });
    if (outcome.kind === 'carried-out') throw errors.idempotencyKeyCarriedOut({ key: header, resourceId: outcome.resourceId });
    if (outcome.kind === 'answered') return outcome;
    request.idempotency = claimed;
    request.ctx = { ...request.ctx, idempotency: claimed };
    return undefined;
  }

  /** Records the answer of a claimed key before it is sent (a retry that arrives once the client has it replays it). */
  async function record(request: FastifyRequest, reply: FastifyReply, claimed: IdempotencyClaim, payload: unknown): Promise<void> {
    try {
      if (replayable(reply.statusCode)) {
        const body = recordable(reply.statusCode, String(payload ?? ''), request.routeOptions.config.replay?.shownOnce ?? []);
        await recordIdempotentAnswer(store, claimed, { status: reply.statusCode, body });
      } else await releaseIdempotencyKey(store, claimed, deps.now());
    } catch (error) {
      // The change is made: its answer goes out all the same. The claim lapses with its lease.
      request.log.warn({ err: error }, 'Idempotency-Key: the answer could not be recorded');
    }
  }

  // Callbacks rather than promises: most POSTs send no key, and pass at once.
  const claimKey = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    const header = request.headers['idempotency-key'];
    if (request.method !== 'POST' || header === undefined || !request.ctx) return done();
    claimFor(request, header).then((answer) => {
      // A replay is the answer: the request goes no further (done is not called).
      if (answer) reply.code(answer.status).header('Idempotent-Replayed', 'true').type('application/json; charset=utf-8').send(answer.body);
      else done();
    }, done);
  };

  const recordAnswer = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: Error | null, payload?: unknown) => void) => {
    const claimed = request.idempotency;
    if (!claimed) return done(null, payload);
    request.idempotency = undefined;
    void record(request, reply, claimed, payload).then(() => done(null, payload));
  };

  // Only a POST takes a key: the hooks are the POST routes' own (every route is registered after
  // this), so that no other request runs them.
  app.addHook('onRoute', (route) => {
    if (![route.method].flat().includes('POST')) return;
    route.preHandler = [...[route.preHandler ?? []].flat(), claimKey];
    route.onSend = [...[route.onSend ?? []].flat(), recordAnswer];
  });
}
