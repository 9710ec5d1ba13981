// The audit log's one writer. The service (resource.ts) calls it in the transaction of every
// mutation it runs, so an event commits or rolls back with its change, and every kind and module
// is covered without code of its own. An event holds who (the API key and its owner), what (the
// operation id and the resource's id) and when; never the request body, so a secret sent in one
// (a token, a client secret, a private key) cannot reach the log.
// Being in every mutation's transaction, it also marks the request's Idempotency-Key claim as
// carried out there, so that the mark commits exactly when the change does.
import type { RequestContext } from '../core/context.js';
import { newId } from '../core/ids.js';
import { rfc3339 } from '../core/time.js';
import { markIdempotentChange } from '../db/idempotency.js';
import type { ScopedDb } from '../db/scoped.js';

/** The id prefix of audit events (`aud_…`). */
export const AUDIT_EVENT_PREFIX = 'aud';

/** What a mutation did: its operation id and the resource it acted on. */
export interface AuditedChange {
  /** The operation id as the routes name it (`tcp_edge.backend_module.replace`). */
  operation: string;
  resourceId: string;
  /** The parent's id, for a kind under another. */
  parentId?: string;
}

/** Records `change` as made by the request of `ctx`, in the transaction of `db`. */
export async function recordAuditEvent(db: ScopedDb, ctx: RequestContext, change: AuditedChange): Promise<void> {
  await db.insert('audit_events', {
    id: newId(AUDIT_EVENT_PREFIX),
    created_at: rfc3339(ctx.now),
    operation: change.operation,
    resource_id: change.resourceId,
    parent_id: change.parentId ?? null,
    key_id: ctx.keyId,
    principal_id: ctx.principal.id,
  });
  if (ctx.idempotency) await markIdempotentChange(db, ctx.idempotency, change.resourceId);
}
