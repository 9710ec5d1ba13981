// Migrations on PostgreSQL go to the store's own schema even when another schema of the same
// database already holds migrated edgeplane tables (instances or test runs side by side), and
// they are not bound by the statement time limit meant for requests.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { PostgresIntrospector, sql } from 'kysely';
import pg from 'pg';
import { migrate, openStore } from '../../src/db/store.js';

const url = process.env.EDGEPLANE_TEST_DATABASE_URL;

describe('migrations in one schema of a shared database', { skip: !url && 'EDGEPLANE_TEST_DATABASE_URL is not set (SQLite has no schemas)' }, () => {
  const schemas = [`ep_mig_${randomBytes(5).toString('hex')}`, `ep_mig_${randomBytes(5).toString('hex')}`];
  let admin: pg.Client;

  before(async () => {
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
    for (const s of schemas) await admin.query(`create schema ${s}`);
  });

  after(async () => {
    for (const s of schemas) await admin.query(`drop schema if exists ${s} cascade`);
    await admin.end();
  });

  it('migrates a second schema while the first already holds the migration tables, by option or by search_path in the URL', async () => {
    const first = openStore({ kind: 'postgres', url: url! }, { schema: schemas[0] });
    try {
      assert.ok((await migrate(first)).includes('0001-foundation'));
    } finally {
      await first.close();
    }
    const scoped = `${url}${url!.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schemas[1]}`)}`;
    const second = openStore({ kind: 'postgres', url: scoped });
    try {
      assert.ok((await migrate(second)).includes('0001-foundation'));
      assert.deepEqual(await migrate(second), [], 'a second run finds them applied');
    } finally {
      await second.close();
    }
    const { rows } = await admin.query(
      `select table_schema, count(*)::int as n from information_schema.tables where table_name = 'api_keys' and table_schema = any($1) group by 1`,
      [schemas],
    );
    assert.equal(rows.length, 2, 'both schemas have the tables');
  });

  it('waits past the statement timeout for what a migration needs, and leaves the limit in place for requests', async () => {
    const store = openStore({ kind: 'postgres', url: url! }, { schema: schemas[0], timeouts: { statementMs: 200 } });
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      // Another instance busy with the migration table for a second.
      await holder.query('begin');
      await holder.query(`lock table ${schemas[0]}.kysely_migration in access exclusive mode`);
      const released = new Promise((resolve) => setTimeout(resolve, 1000)).then(() => holder.query('rollback'));
      const start = Date.now();
      assert.deepEqual(await migrate(store), []);
      assert.ok(Date.now() - start >= 800, 'the migration waited for the lock');
      await released;
      const limits = await Promise.all(Array.from({ length: 3 }, () => sql<{ statement_timeout: string }>`show statement_timeout`.execute(store.db)));
      assert.deepEqual(
        limits.map((r) => r.rows[0]!.statement_timeout),
        ['200ms', '200ms', '200ms'],
      );
    } finally {
      await holder.end();
      await store.close();
    }
  });

  it('introspects the tables of its own schema only, as Kysely’s introspector describes them', async () => {
    const store = openStore({ kind: 'postgres', url: url! }, { schema: schemas[0] });
    try {
      await migrate(store);
      const ours = await store.db.introspection.getTables({ withInternalKyselyTables: true });
      const kysely = (await new PostgresIntrospector(store.db).getTables({ withInternalKyselyTables: true })).filter((t) => t.schema === schemas[0]);
      assert.ok(ours.some((t) => t.name === 'kysely_migration') && ours.some((t) => t.name === 'api_keys'));
      assert.deepEqual(new Set(ours.map((t) => t.schema)), new Set([schemas[0]]), 'no other schema');
      assert.deepEqual(ours, kysely);
      const plain = await store.db.introspection.getTables();
      assert.ok(!plain.some((t) => t.name.startsWith('kysely_migration')), 'the migration tables only when asked for');
      assert.equal(plain.length, ours.length - 2);
    } finally {
      await store.close();
    }
  });

  it('migrates while other schemas of the database are being dropped (test runs and instances side by side)', async () => {
    let dropping = true;
    // Another party creates and drops schemas with tables, over and over.
    const churn = (async () => {
      const other = new pg.Client({ connectionString: url });
      await other.connect();
      try {
        while (dropping) {
          const s = `ep_churn_${randomBytes(5).toString('hex')}`;
          await other.query(`create schema ${s}`);
          for (let i = 0; i < 20; i++) await other.query(`create table ${s}.t${i} (id int primary key, v text)`);
          await other.query(`drop schema ${s} cascade`);
        }
      } finally {
        await other.end();
      }
    })();
    try {
      for (let round = 0; round < 15; round++) {
        const schema = `ep_mig_${randomBytes(5).toString('hex')}`;
        await admin.query(`create schema ${schema}`);
        const store = openStore({ kind: 'postgres', url: url! }, { schema });
        try {
          assert.ok((await migrate(store)).includes('0001-foundation'), `round ${round}`);
        } finally {
          await store.close();
          await admin.query(`drop schema ${schema} cascade`);
        }
      }
    } finally {
      dropping = false;
      await churn;
    }
  });
});
