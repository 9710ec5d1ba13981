// Frozen: what one instance needs to carry a public connection to an agent held by another.
//
// `peer_instances`: each instance that listens for its peers (EDGEPLANE_PEER_LISTEN) writes the
// address they dial, with the same lease as its live agents' rows, so a dead instance's address
// is forgotten with its agents. `agent_tunnels.sealed_options`: the options of an endpoint's Bind
// (basic auth digests, OAuth secrets, a traffic policy…), sealed with the master key as every
// private key at rest is, so that the instance a public request reaches enforces them itself.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';
import { idType } from './types.js';

export function peerInstances(dialect: Dialect) {
  const instant = idType(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('peer_instances')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('peer_address', 'text', (c) => c.notNull())
        .addColumn('lease_expires_at', instant, (c) => c.notNull())
        .execute();
      await db.schema.alterTable('agent_tunnels').addColumn('sealed_options', 'text').execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('agent_tunnels').dropColumn('sealed_options').execute();
      await db.schema.dropTable('peer_instances').execute();
    },
  };
}
