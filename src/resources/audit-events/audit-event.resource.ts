// Audit events: read-only. The core writes one in the transaction of every mutation
// (src/crud/audit.ts); this kind lists them, newest first, and gets one, to admins only.
import { errors } from '../../core/errors.js';
import { AUDIT_EVENT_PREFIX } from '../../crud/audit.js';
import { defineResource } from '../../crud/definition.js';
import type { AuditEventsTable } from '../../db/schema.js';
import { AuditEvent, NoAuditEventBody } from './audit-event.schema.js';

export const auditEventDefinition = defineResource({
  kind: 'audit_event',
  title: 'audit event',
  prefix: AUDIT_EVENT_PREFIX,
  path: '/audit_events',
  listKey: 'audit_events',
  table: 'audit_events',
  schemas: { resource: AuditEvent, create: NoAuditEventBody, update: NoAuditEventBody },
  operations: ['get', 'list'],

  authorize(ctx) {
    if (ctx.principal.role !== 'admin') throw errors.adminRequired({ action: 'read the audit log' });
  },

  toApi: (row: AuditEventsTable) => ({
    id: row.id,
    created_at: row.created_at,
    operation: row.operation,
    resource_id: row.resource_id,
    parent_id: row.parent_id,
    key_id: row.key_id,
    principal_id: row.principal_id,
  }),
});
