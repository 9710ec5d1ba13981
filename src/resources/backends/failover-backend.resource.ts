// Failover backends: an ordered list of other backends, each tried when the one before fails.
import { describedColumns, describedResponse } from '../../core/schema.js';
import { defineResource } from '../../crud/definition.js';
import type { LinkItem } from '../../crud/references.js';
import type { FailoverBackendsTable } from './backend.table.js';
import { backendChildren, backendInUse } from './backend-links.js';
import * as S from './backend.schema.js';
import { checkFailoverChildren } from './backend-values.js';
import { backendCatalogue } from './backend.errors.js';

export const failoverBackend = defineResource({
  kind: 'failover_backend',
  title: 'failover backend',
  errors: backendCatalogue,
  prefix: 'bkdfo',
  path: '/backends/failover',
  listKey: 'backends',
  table: 'backends_failover',
  schemas: { resource: S.FailoverBackend, create: S.FailoverBackendCreate, update: S.FailoverBackendUpdate },
  inUse: backendInUse,
  references: [{ ...backendChildren, parse: checkFailoverChildren }],
  prepare: (_ctx, body) => ({ row: describedColumns(body) }),
  toApi: (row: FailoverBackendsTable & { backends: LinkItem[] }) => ({ ...describedResponse(row), backends: row.backends.map((c) => c.id) }),
});
