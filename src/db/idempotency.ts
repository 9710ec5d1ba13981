// The store side of Idempotency-Key (src/http/idempotency.ts): claiming a key for a request,
// recording the answer, and reading it back. A claim is a row, keyed by account, API key and key,
// so two requests with one key, on any instances, cannot both proceed, and a key is only ever
// matched for the credential that sent it. A claim whose instance died is taken over once its
// lease has run out, unless its change had committed (markIdempotentChange): then the request
// was carried out, and is not carried out again.
import type { IdempotencyClaim } from '../core/context.js';
import type { MutationObserver } from './observers.js';
import type { IdempotencyKeysTable } from './schema.js';
import { scopedTx, type ScopedDb } from './scoped.js';
import { UniqueViolation, type Store } from './store.js';

export type Claim =
  /** The request is to be answered, and its answer recorded. */
  | { kind: 'claimed' }
  /** The key answered this request before: its answer. */
  | { kind: 'answered'; status: number; body: string }
  /** The key was used for another request. */
  | { kind: 'mismatch' }
  /** A request with the key is being answered now. */
  | { kind: 'in-progress' }
  /** The key's request made its change, which acted on `resourceId`, but its answer was lost. */
  | { kind: 'carried-out'; resourceId: string };

export interface ClaimRequest extends IdempotencyClaim {
  now: Date;
  /** How long an unanswered claim holds. */
  leaseMs: number;
  /** How long an answer is kept (and replayed). */
  keepMs: number;
}

function decide(row: IdempotencyKeysTable, request: ClaimRequest): Claim | 'take-over' {
  if (row.request_hash !== request.requestHash) return { kind: 'mismatch' };
  if (row.status !== null) return { kind: 'answered', status: row.status, body: row.body ?? '' };
  // While the lease holds, the answer may still come (the change committed a moment ago).
  if (row.lease_until > request.now.toISOString()) return { kind: 'in-progress' };
  return row.resource_id === null ? 'take-over' : { kind: 'carried-out', resourceId: row.resource_id };
}

async function tryClaim(store: Store, request: ClaimRequest): Promise<Claim> {
  const { accountId, apiKeyId, key, now } = request;
  const id = { api_key_id: apiKeyId, key };
  return scopedTx(store, { accountId }, async (db) => {
    const leaseUntil = new Date(now.getTime() + request.leaseMs).toISOString();
    let row: IdempotencyKeysTable | undefined = (await db.select('idempotency_keys', id, { lock: 'update' }))[0];
    if (row && row.created_at <= new Date(now.getTime() - request.keepMs).toISOString()) {
      // Kept past its time: the key is free again.
      await db.delete('idempotency_keys', id);
      row = undefined;
    }
    if (!row) {
      await db.insert('idempotency_keys', {
        ...id,
        request_hash: request.requestHash,
        status: null,
        body: null,
        created_at: now.toISOString(),
        lease_until: leaseUntil,
        resource_id: null,
      });
      return { kind: 'claimed' };
    }
    const decision = decide(row, request);
    if (decision !== 'take-over') return decision;
    await db.update('idempotency_keys', id, { lease_until: leaseUntil });
    return { kind: 'claimed' };
  });
}

/** Claims `key` for a request, or says why not. */
export async function claimIdempotencyKey(store: Store, request: ClaimRequest): Promise<Claim> {
  try {
    return await tryClaim(store, request);
  } catch (error) {
    // Another request inserted the key between our read and our insert: decide against its row.
    if (error instanceof UniqueViolation) return tryClaim(store, request);
    throw error;
  }
}

/** The claim's row, while its first request is being answered. */
const pending = (claim: IdempotencyClaim) => ({ api_key_id: claim.apiKeyId, key: claim.key, request_hash: claim.requestHash, status: null });

/** Records the answer of the request that made `claim`; `body` must hold no secret (it is stored as given). */
export async function recordIdempotentAnswer(store: Store, claim: IdempotencyClaim, answer: { status: number; body: string }): Promise<void> {
  await scopedTx(store, { accountId: claim.accountId }, (db) => db.update('idempotency_keys', pending(claim), { status: answer.status, body: answer.body }));
}

/**
 * Marks the claim of `key` as carried out, in the transaction of the change its request makes
 * (`db`), naming the resource acted on: the mark commits exactly when the change does. The first
 * change of a request is the one named.
 */
export async function markIdempotentChange(db: ScopedDb, claim: IdempotencyClaim, resourceId: string): Promise<void> {
  await db.update('idempotency_keys', { ...pending(claim), resource_id: null }, { resource_id: resourceId });
}

/** Marks the request's claim, when it has one, in every mutation's transaction. */
export const idempotencyObserver: MutationObserver = {
  name: 'idempotency',
  inTransaction: (db, ctx, mutation) => (ctx.idempotency ? markIdempotentChange(db, ctx.idempotency, mutation.resourceId) : Promise.resolve()),
};

/**
 * When `key`'s request got no answer worth keeping (a server error, a rate limit): frees the key,
 * so the request may be sent again, unless its change committed all the same (a connection lost
 * as the database committed). Then the claim's lease ends now, and a retry is told at once that
 * the request was carried out.
 */
export async function releaseIdempotencyKey(store: Store, claim: IdempotencyClaim, now: Date): Promise<void> {
  await scopedTx(store, { accountId: claim.accountId }, async (db) => {
    if ((await db.delete('idempotency_keys', { ...pending(claim), resource_id: null })) === 0) {
      await db.update('idempotency_keys', pending(claim), { lease_until: now.toISOString() });
    }
  });
}

/**
 * Deletes, across accounts, up to `limit` keys created at or before `before`; returns how many.
 * Housekeeping only: a claim judges a key's age itself, so this frees space, nothing else.
 */
export async function purgeIdempotencyKeys(store: Store, before: Date, limit: number): Promise<number> {
  const oldest = store.db
    .selectFrom('idempotency_keys')
    .select(['account_id', 'api_key_id', 'key'])
    .where('created_at', '<=', before.toISOString())
    .orderBy('created_at')
    .limit(limit)
    .$asTuple('account_id', 'api_key_id', 'key');
  const result = await store.db
    .deleteFrom('idempotency_keys')
    .where(({ eb, refTuple }) => eb(refTuple('account_id', 'api_key_id', 'key'), 'in', oldest))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
