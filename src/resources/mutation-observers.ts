// Every mutation's observers, in the order they run in its transaction: the audit event, then the
// request's Idempotency-Key mark (db/observers.ts says what an observer is). A new one (the config
// revision the edges will listen to) is added here and nowhere else.
import { auditObserver } from '../crud/audit.js';
import { idempotencyObserver } from '../db/idempotency.js';
import type { MutationObserver } from '../db/observers.js';

export const MUTATION_OBSERVERS: readonly MutationObserver[] = [auditObserver, idempotencyObserver];
