// Weighted backends: other backends, each chosen in proportion to its weight.
import { describedColumns, describedResponse } from '../../core/schema.js';
import { defineResource } from '../../crud/definition.js';
import type { LinkItem } from '../../crud/references.js';
import type { WeightedBackendsTable } from './backend.table.js';
import { backendChildren, backendInUse } from './backend-links.js';
import * as S from './backend.schema.js';
import { checkWeightedChildren } from './backend-values.js';
import { backendCatalogue } from './backend.errors.js';

export const weightedBackend = defineResource({
  kind: 'weighted_backend',
  title: 'weighted backend',
  errors: backendCatalogue,
  prefix: 'bkdwd',
  path: '/backends/weighted',
  listKey: 'backends',
  table: 'backends_weighted',
  schemas: { resource: S.WeightedBackend, create: S.WeightedBackendCreate, update: S.WeightedBackendUpdate },
  inUse: backendInUse,
  references: [{ ...backendChildren, weighted: true, parse: checkWeightedChildren }],
  prepare: (_ctx, body) => ({ row: describedColumns(body) }),
  toApi: (row: WeightedBackendsTable & { backends: LinkItem[] }) => ({
    ...describedResponse(row),
    backends: Object.fromEntries(row.backends.map((c) => [c.id, c.weight ?? 0])),
  }),
});
