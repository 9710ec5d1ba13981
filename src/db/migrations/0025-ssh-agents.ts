// Frozen: what OpenSSH agents need. `ssh_credentials` are the public keys an account registers
// for `ssh -R` (the key in its authorized_keys form, and its SHA-256 fingerprint, by which a
// login finds it; one credential per key within an account). `ssh_host_keys` holds the SSH
// listener's own host key, sealed with the master key, one row per algorithm: every instance
// presents the same key, so clients see one host whichever instance they reach.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';
import { idType } from './types.js';

export function sshAgents(dialect: Dialect) {
  const id = idType(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('ssh_credentials')
        .addColumn('id', id, (c) => c.primaryKey())
        .addColumn('account_id', id, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('owner_id', id, (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('metadata', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('acl', 'text', (c) => c.notNull())
        .addColumn('public_key', 'text', (c) => c.notNull())
        .addColumn('key_fingerprint', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('ssh_credentials_account_id_id_idx').on('ssh_credentials').columns(['account_id', 'id']).execute();
      await db.schema.createIndex('ssh_credentials_owner_id_idx').on('ssh_credentials').column('owner_id').execute();
      await db.schema
        .createIndex('ssh_credentials_account_fingerprint_key')
        .on('ssh_credentials')
        .columns(['account_id', 'key_fingerprint'])
        .unique()
        .execute();
      await db.schema.createIndex('ssh_credentials_fingerprint_idx').on('ssh_credentials').column('key_fingerprint').execute();
      await db.schema
        .createTable('ssh_host_keys')
        .addColumn('algorithm', 'text', (c) => c.primaryKey())
        .addColumn('private_key_sealed', 'text', (c) => c.notNull())
        .addColumn('public_key', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('ssh_host_keys').execute();
      await db.schema.dropTable('ssh_credentials').execute();
    },
  };
}
