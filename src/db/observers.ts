// What runs inside every mutation's transaction besides the change itself: the observers of a
// committed change. The service (crud/mutation.ts) hands each mutation to the list it was built
// with, in the mutation's transaction, so that whatever an observer writes commits or rolls back
// with the change. Each observer lives with what it serves (the audit log in crud/audit.ts,
// Idempotency-Key marks in db/idempotency.ts; the config revision the edges will listen to is the
// next); src/resources/mutation-observers.ts lists them.
import type { RequestContext } from '../core/context.js';
import type { ScopedDb } from './scoped.js';

/** A change that went through: its operation id and the resource it acted on. */
export interface Mutation {
  /** The operation id as the routes name it (`tcp_edge.backend_module.replace`). */
  operation: string;
  resourceId: string;
  /** The parent's id, for a kind under another. */
  parentId?: string;
}

export interface MutationObserver {
  readonly name: string;
  /** Called in the mutation's transaction (`db`), after its change and before the kind's afterWrite. */
  inTransaction(db: ScopedDb, ctx: RequestContext, mutation: Mutation): Promise<void>;
}

/** Tells every observer, in order, in the mutation's transaction. */
export async function observeMutation(observers: readonly MutationObserver[], db: ScopedDb, ctx: RequestContext, mutation: Mutation): Promise<void> {
  for (const observer of observers) await observer.inTransaction(db, ctx, mutation);
}
