// The authorization decisions kinds choose from: every kind has one `authorize`, called for each
// operation with what it acts on (crud/definition.ts); these are the common ones.
import type { RequestContext } from '../core/context.js';
import { errors, type ApiError } from '../core/errors.js';
import { isWrite, type AnyDefinition, type Operation, type Subject } from './definition.js';

/** Read_only may only read: the default authorization of every kind. */
export function readOnlyMayOnlyRead(ctx: RequestContext, operation: Operation): void {
  if (isWrite(operation) && ctx.principal.role === 'read_only') throw errors.readOnlyOwner({ role: ctx.principal.role });
}

/** The kind's one authorization decision: its own `authorize`, or the default. */
export const authorizerOf = (d: AnyDefinition) => d.authorize ?? readOnlyMayOnlyRead;

/** The default and an admin-only variant: "Only admins may <action>." for every write. */
export function adminWrites(action: string) {
  return (ctx: RequestContext, operation: Operation): void => {
    readOnlyMayOnlyRead(ctx, operation);
    if (isWrite(operation) && ctx.principal.role !== 'admin') throw errors.adminRequired({ action });
  };
}

/**
 * The authorization of a kind each of whose rows has an owner (`owner_id`: a user or bot), such as
 * API keys and credentials: read_only may only read; others create and change their own rows
 * only; admins every row, and rows for any owner.
 */
export function ownerManaged(refuse: { otherOwner(): ApiError; notOwner(id: string): ApiError }) {
  return (ctx: RequestContext, operation: Operation, { row, body }: Subject<{ id: string; owner_id: string }>): void => {
    readOnlyMayOnlyRead(ctx, operation);
    if (ctx.principal.role === 'admin') return;
    const ownerId = operation === 'create' ? ((body as { owner_id?: string }).owner_id ?? ctx.principal.id) : row?.owner_id;
    if (ownerId === ctx.principal.id) return;
    if (operation === 'create') throw refuse.otherOwner();
    if (operation === 'update' || operation === 'delete') throw refuse.notOwner(row!.id);
  };
}
