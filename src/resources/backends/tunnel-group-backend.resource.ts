// Tunnel-group backends: forward to the live tunnels whose labels match.
import { describedChanges, describedColumns, describedResponse } from '../../core/schema.js';
import { defineResource } from '../../crud/definition.js';
import type { TunnelGroupBackendsTable } from './backend.table.js';
import { backendInUse } from './backend-links.js';
import * as S from './backend.schema.js';
import { labelsMatch, parseLabels } from '../tunnels/tunnel-labels.js';
import { checkLabels } from './backend-values.js';
import { backendCatalogue } from './backend.errors.js';

export const tunnelGroupBackend = defineResource({
  kind: 'tunnel_group_backend',
  title: 'tunnel-group backend',
  errors: backendCatalogue,
  prefix: 'bkdtg',
  path: '/backends/tunnel_group',
  listKey: 'backends',
  table: 'backends_tunnel_group',
  schemas: { resource: S.TunnelGroupBackend, create: S.TunnelGroupBackendCreate, update: S.TunnelGroupBackendUpdate },
  inUse: backendInUse,
  prepare: (_ctx, body) => ({ row: { ...describedColumns(body), labels: JSON.stringify(checkLabels(body.labels ?? {})) } }),
  patch: (_ctx, body): Partial<TunnelGroupBackendsTable> => ({
    ...describedChanges(body),
    ...(body.labels != null && { labels: JSON.stringify(checkLabels(body.labels)) }),
  }),
  hooks: {
    // The account's live labeled tunnels, read once for a page, matched here.
    async expand(db, rows) {
      const tunnels = (await db.select('live_tunnels', { endpoint_id: null }, { orderBy: ['id'] })).map((t) => ({
        id: t.id,
        labels: parseLabels(t.labels ?? '{}'),
      }));
      return rows.map((row) => {
        const labels = parseLabels(row.labels);
        return { ...row, tunnel_ids: tunnels.filter((t) => labelsMatch(labels, t.labels)).map((t) => t.id) };
      });
    },
  },
  toApi: (row: TunnelGroupBackendsTable, view) => ({
    ...describedResponse(row),
    labels: parseLabels(row.labels),
    tunnels: ((row as TunnelGroupBackendsTable & { tunnel_ids?: string[] }).tunnel_ids ?? []).map((id) => view.ref(id)),
  }),
});
