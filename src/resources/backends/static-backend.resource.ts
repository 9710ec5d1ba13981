// Static backends: forward to a fixed address, with or without TLS.
import { describedChanges, describedColumns, describedResponse } from '../../core/schema.js';
import { defineResource } from '../../crud/definition.js';
import { toBool } from '../../db/schema.js';
import type { StaticBackendsTable } from './backend.table.js';
import { backendInUse } from './backend-links.js';
import * as S from './backend.schema.js';
import { checkAddress } from './backend-values.js';
import { backendCatalogue } from './backend.errors.js';

export const staticBackend = defineResource({
  kind: 'static_backend',
  title: 'static backend',
  errors: backendCatalogue,
  prefix: 'bkdsc',
  path: '/backends/static',
  listKey: 'backends',
  table: 'backends_static',
  schemas: { resource: S.StaticBackend, create: S.StaticBackendCreate, update: S.StaticBackendUpdate },
  inUse: backendInUse,
  prepare: (_ctx, body) => ({ row: { ...describedColumns(body), address: checkAddress(body.address), tls_enabled: body.tls?.enabled ?? false } }),
  patch: (_ctx, body): Partial<StaticBackendsTable> => ({
    ...describedChanges(body),
    ...(body.address != null && { address: checkAddress(body.address) }),
    ...(body.tls != null && { tls_enabled: body.tls.enabled ?? false }),
  }),
  toApi: (row: StaticBackendsTable) => ({ ...describedResponse(row), address: row.address, tls: { enabled: toBool(row.tls_enabled) } }),
});
