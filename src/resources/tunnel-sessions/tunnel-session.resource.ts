// Tunnel sessions: read-only. Each instance writes the agents it holds (src/tunnels/live-records.ts);
// this kind lists and gets those whose lease holds (the view live_tunnel_sessions). The commands
// (restart, stop, update) are tunnel-session.commands.ts.
import { defineResource } from '../../crud/definition.js';
import type { AgentSessionsTable } from '../../db/schema.js';
import { NoTunnelSessionBody, TunnelSession } from './tunnel-session.schema.js';
import { tunnelSessionCatalogue } from './tunnel-session.errors.js';

export const TUNNEL_SESSION_PREFIX = 'ts';

export const tunnelSessionDefinition = defineResource({
  kind: 'tunnel_session',
  title: 'tunnel session',
  errors: tunnelSessionCatalogue,
  prefix: TUNNEL_SESSION_PREFIX,
  path: '/tunnel_sessions',
  listKey: 'tunnel_sessions',
  table: 'live_tunnel_sessions',
  schemas: { resource: TunnelSession, create: NoTunnelSessionBody, update: NoTunnelSessionBody },
  operations: ['get', 'list'],

  toApi: (row: AgentSessionsTable, view) => ({
    id: row.id,
    agent_version: row.agent_version,
    credential: view.ref(row.credential_id),
    ip: row.ip,
    metadata: row.metadata,
    os: row.os,
    region: row.region,
    started_at: row.started_at,
    transport: row.transport,
  }),
});
