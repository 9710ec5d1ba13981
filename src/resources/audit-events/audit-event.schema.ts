// The audit event as the API shows it: who made which mutation of which resource, and when.
// Audit events are never created or changed through the API, so their create and update bodies
// are empty and never routed.
import { Type } from '@sinclair/typebox';
import { Body, OrNull, Timestamp, Uri } from '../../core/schema.js';

export const AuditEvent = Type.Object(
  {
    id: Type.String({ description: 'aud_…' }),
    uri: Uri,
    created_at: Timestamp,
    operation: Type.String({ description: 'the operation id of the mutation, as this document names it (`ip_policy.create`)' }),
    resource_id: Type.String({ description: 'the resource acted on (for a create, the new one); it may have been deleted since' }),
    parent_id: OrNull(Type.String({ description: "the resource's parent, for a kind under another (an HTTPS edge route's edge)" })),
    key_id: Type.String({ description: 'the API key (ak_…) that authenticated the request' }),
    principal_id: Type.String({ description: "the key's owner: a user (usr_…) or bot user (bot_…)" }),
  },
  { description: 'audit event: one mutation made through the API; request bodies are not recorded' },
);

/** The body of the create and update that audit events do not have. */
export const NoAuditEventBody = Body({});
