// Every mutation's observers, in the order they run in its transaction: the audit event, the
// request's Idempotency-Key mark, then the account's configuration revision, which instances
// watch (db/observers.ts says what an observer is). A new one is added here and nowhere else.
import { auditObserver } from '../crud/audit.js';
import { idempotencyObserver } from '../db/idempotency.js';
import type { MutationObserver } from '../db/observers.js';
import { configRevisionObserver } from '../db/config-revisions.js';

export const MUTATION_OBSERVERS: readonly MutationObserver[] = [auditObserver, idempotencyObserver, configRevisionObserver];
