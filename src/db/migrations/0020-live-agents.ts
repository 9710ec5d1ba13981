// Frozen: the live agents of every instance (src/tunnels/live-records.ts writes them), the
// commands the API queues for a session that another instance holds, and the routes bound.
//
// Each instance writes its own sessions and tunnels, naming itself (`instance_id`) and how long
// the row holds without being written again (`lease_expires_at`, an instant as fixed-width text,
// compared as text as the jobs table's are). An endpoint is the columns `endpoint_*` of its
// tunnel: it lives and dies with it.
//
// The API reads the views `live_*`: the rows whose lease has not run out by the database's clock,
// so a dead instance's agents leave every list at the end of their lease, even before another
// instance's sync deletes the rows. `live_endpoints` shows the tunnels that bound an endpoint,
// under the endpoint's id.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';
import { idType } from './types.js';

export function liveAgents(dialect: Dialect) {
  const id = idType(dialect);
  const instant = id;
  // Now as `toISOString()` writes it, in the store's own terms.
  const now =
    dialect === 'postgres' ? sql`to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') collate "C"` : sql`strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`;
  return {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the views select from tables this migration makes
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('agent_sessions')
        .addColumn('id', id, (c) => c.primaryKey())
        .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('instance_id', 'text', (c) => c.notNull())
        .addColumn('lease_expires_at', instant, (c) => c.notNull())
        // Not a reference: a session outlives nothing, and never holds back its credential's deletion.
        .addColumn('credential_id', id, (c) => c.notNull())
        .addColumn('transport', 'text', (c) => c.notNull())
        .addColumn('region', 'text', (c) => c.notNull())
        .addColumn('ip', 'text', (c) => c.notNull())
        .addColumn('os', 'text', (c) => c.notNull())
        .addColumn('agent_version', 'text', (c) => c.notNull())
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('started_at', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('agent_sessions_account_id_id_idx').on('agent_sessions').columns(['account_id', 'id']).execute();
      await db.schema.createIndex('agent_sessions_instance_id_idx').on('agent_sessions').columns(['instance_id', 'lease_expires_at']).execute();
      await db.schema.createIndex('agent_sessions_lease_expires_at_idx').on('agent_sessions').column('lease_expires_at').execute();

      await db.schema
        .createTable('agent_tunnels')
        .addColumn('id', id, (c) => c.primaryKey())
        .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('session_id', id, (c) => c.notNull().references('agent_sessions.id').onDelete('cascade'))
        .addColumn('instance_id', 'text', (c) => c.notNull())
        .addColumn('lease_expires_at', instant, (c) => c.notNull())
        .addColumn('region', 'text', (c) => c.notNull())
        // A labeled tunnel's labels as a JSON object; null for a bound endpoint.
        .addColumn('labels', 'text')
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('forwards_to', 'text', (c) => c.notNull())
        .addColumn('started_at', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        // The endpoint a bound tunnel serves; all null for a labeled tunnel.
        .addColumn('endpoint_id', id)
        .addColumn('endpoint_proto', 'text')
        .addColumn('endpoint_public_url', 'text')
        .addColumn('endpoint_hostport', 'text')
        .addColumn('endpoint_domain_id', id)
        .addColumn('endpoint_tcp_addr_id', id)
        .execute();
      await db.schema.createIndex('agent_tunnels_account_id_id_idx').on('agent_tunnels').columns(['account_id', 'id']).execute();
      await db.schema.createIndex('agent_tunnels_account_id_endpoint_id_idx').on('agent_tunnels').columns(['account_id', 'endpoint_id']).execute();
      await db.schema.createIndex('agent_tunnels_session_id_idx').on('agent_tunnels').column('session_id').execute();
      await db.schema.createIndex('agent_tunnels_instance_id_idx').on('agent_tunnels').columns(['instance_id', 'lease_expires_at']).execute();
      await db.schema.createIndex('agent_tunnels_lease_expires_at_idx').on('agent_tunnels').column('lease_expires_at').execute();

      await db.schema
        .createTable('agent_session_commands')
        .addColumn('id', id, (c) => c.primaryKey())
        .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        // A command goes with its session: one that ends (or whose instance dies) before running it drops it.
        .addColumn('session_id', id, (c) => c.notNull().references('agent_sessions.id').onDelete('cascade'))
        // The command as JSON: {"kind":"restart"}, {"kind":"update","version":"…","permitMajorVersion":false}.
        .addColumn('command', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('agent_session_commands_account_id_id_idx').on('agent_session_commands').columns(['account_id', 'id']).execute();
      await db.schema.createIndex('agent_session_commands_session_id_idx').on('agent_session_commands').column('session_id').execute();

      // Which tunnel holds each public route (`https:app.example.com`, `tcp:10001`) across
      // instances: a bind claims its route in a transaction (locked per route on PostgreSQL), so
      // two instances cannot both give one URL away; several claims share a route only when all
      // asked for pooling. A claim holds for its lease and is renewed with its instance's rows.
      await db.schema
        .createTable('agent_route_claims')
        .addColumn('route', 'text', (c) => c.notNull())
        .addColumn('tunnel_id', id, (c) => c.notNull())
        .addColumn('instance_id', 'text', (c) => c.notNull())
        .addColumn('pooling', 'integer', (c) => c.notNull())
        .addColumn('lease_expires_at', instant, (c) => c.notNull())
        .addPrimaryKeyConstraint('agent_route_claims_pk', ['route', 'tunnel_id'])
        .execute();
      await db.schema.createIndex('agent_route_claims_instance_id_idx').on('agent_route_claims').column('instance_id').execute();
      await db.schema.createIndex('agent_route_claims_lease_expires_at_idx').on('agent_route_claims').column('lease_expires_at').execute();

      await db.schema
        .createView('live_tunnel_sessions')
        .as(db.selectFrom('agent_sessions').selectAll().where('lease_expires_at', '>', now))
        .execute();
      await db.schema
        .createView('live_tunnels')
        .as(db.selectFrom('agent_tunnels').selectAll().where('lease_expires_at', '>', now))
        .execute();
      await db.schema
        .createView('live_endpoints')
        .as(
          db
            .selectFrom('agent_tunnels')
            .select([
              'endpoint_id as id',
              'account_id',
              'id as tunnel_id',
              'endpoint_proto as proto',
              'endpoint_public_url as public_url',
              'endpoint_hostport as hostport',
              'endpoint_domain_id as domain_id',
              'endpoint_tcp_addr_id as tcp_addr_id',
              'region',
              'metadata',
              'created_at',
              'lease_expires_at',
            ])
            .where('endpoint_id', 'is not', null)
            .where('lease_expires_at', '>', now),
        )
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropView('live_endpoints').execute();
      await db.schema.dropView('live_tunnels').execute();
      await db.schema.dropView('live_tunnel_sessions').execute();
      await db.schema.dropTable('agent_route_claims').execute();
      await db.schema.dropTable('agent_session_commands').execute();
      await db.schema.dropTable('agent_tunnels').execute();
      await db.schema.dropTable('agent_sessions').execute();
    },
  };
}
