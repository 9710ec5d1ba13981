// The audit log's one writer, an observer of every mutation (db/observers.ts): the service
// (resource.ts) tells it in the transaction of every mutation it runs, so an event commits or
// rolls back with its change, and every kind and module is covered without code of its own. An
// event holds who (the API key and its owner), what (the operation id and the resource's id) and
// when; never the request body, so a secret sent in one (a token, a client secret, a private key)
// cannot reach the log.
import type { RequestContext } from '../core/context.js';
import { newId } from '../core/ids.js';
import { rfc3339 } from '../core/time.js';
import type { Mutation, MutationObserver } from '../db/observers.js';
import type { ScopedDb } from '../db/scoped.js';

/** The id prefix of audit events (`aud_…`). */
export const AUDIT_EVENT_PREFIX = 'aud';

/** Records `change` as made by the request of `ctx`, in the transaction of `db`. */
export async function recordAuditEvent(db: ScopedDb, ctx: RequestContext, change: Mutation): Promise<void> {
  await db.insert('audit_events', {
    id: newId(AUDIT_EVENT_PREFIX),
    created_at: rfc3339(ctx.now),
    operation: change.operation,
    resource_id: change.resourceId,
    parent_id: change.parentId ?? null,
    key_id: ctx.keyId,
    principal_id: ctx.principal.id,
  });
}

export const auditObserver: MutationObserver = { name: 'audit', inTransaction: recordAuditEvent };
