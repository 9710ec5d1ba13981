// Tunnels: read-only, those of live agent sessions (the view live_tunnels). A labeled tunnel
// shows the tunnel-group backends whose labels it matches (tunnel-labels.ts).
import { defineResource } from '../../crud/definition.js';
import type { AgentTunnelsTable } from '../../db/schema.js';
import { labelsMatch, parseLabels } from './tunnel-labels.js';
import { NoTunnelBody, Tunnel } from './tunnel.schema.js';

type TunnelRow = AgentTunnelsTable & { backend_ids?: string[] };

export const tunnelDefinition = defineResource({
  kind: 'tunnel',
  title: 'tunnel',
  prefix: 'tn',
  path: '/tunnels',
  listKey: 'tunnels',
  table: 'live_tunnels',
  schemas: { resource: Tunnel, create: NoTunnelBody, update: NoTunnelBody },
  operations: ['get', 'list'],

  hooks: {
    // The account's tunnel-group backends, read once for a page, matched here.
    async expand(db, rows) {
      if (!rows.some((r) => r.labels !== null)) return rows;
      const backends = (await db.select('backends_tunnel_group', {}, { orderBy: ['id'] })).map((b) => ({ id: b.id, labels: parseLabels(b.labels) }));
      return rows.map((row): TunnelRow => {
        if (row.labels === null) return row;
        const labels = parseLabels(row.labels);
        return { ...row, backend_ids: backends.filter((b) => labelsMatch(b.labels, labels)).map((b) => b.id) };
      });
    },
  },

  toApi: (row: AgentTunnelsTable, view) => ({
    id: row.id,
    public_url: row.endpoint_public_url,
    started_at: row.started_at,
    metadata: row.metadata,
    proto: row.endpoint_proto,
    region: row.region,
    tunnel_session: view.ref(row.session_id),
    endpoint: row.endpoint_id === null ? null : view.ref(row.endpoint_id),
    labels: row.labels === null ? null : parseLabels(row.labels),
    backends: row.labels === null ? null : ((row as TunnelRow).backend_ids ?? []).map((id) => view.ref(id)),
    forwards_to: row.forwards_to,
  }),
});
