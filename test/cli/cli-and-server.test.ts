// The CLI and a running server write the same store at once (on SQLite: one file, several
// processes). Transactions that read and then write must neither fail nor lose a write.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { it } from 'node:test';
import { describeEachStore } from '../helpers/harness.js';

const root = path.resolve(import.meta.dirname, '../..');

/** The CLI as a real process; resolves with its exit code and output. */
function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/cli.ts'), ...args], {
      cwd: root,
      env: { ...process.env, EDGEPLANE_LOG_LEVEL: 'silent', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const CLI_RUNS = 12;
const CLI_PARALLEL = 3;

describeEachStore(
  'the CLI and a server writing the same store',
  (h) => {
    it('loses no write and answers no 5xx', async (t) => {
      const api = await h().newAccount();
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'edgeplane-shared-'));
      const env = { EDGEPLANE_DATABASE_URL: h().databaseUrl, EDGEPLANE_DATA_DIR: dataDir };

      // HTTP: keys created, changed and some deleted, as fast as the server answers.
      let stop = false;
      const answers = new Map<number, number>();
      const unexpected: string[] = [];
      const createdKeys = new Set<string>();
      const deletedKeys = new Set<string>();
      const patchedKeys = new Set<string>();
      const expect = (res: { status: number; text: string }, status: number, what: string) => {
        answers.set(res.status, (answers.get(res.status) ?? 0) + 1);
        if (res.status !== status) unexpected.push(`${what}: ${res.status} ${res.text.slice(0, 300)}`);
        return res.status === status;
      };
      const worker = async (n: number) => {
        for (let i = 0; !stop; i++) {
          const created = await api.post('/api_keys', { description: `http ${n}.${i}` });
          if (!expect(created, 201, 'POST')) continue;
          const id = created.json.id as string;
          createdKeys.add(id);
          if (expect(await api.patch(`/api_keys/${id}`, { metadata: 'patched' }), 200, 'PATCH')) patchedKeys.add(id);
          if (i % 3 === 0 && expect(await api.delete(`/api_keys/${id}`), 204, 'DELETE')) deletedKeys.add(id);
        }
      };
      const workers = Array.from({ length: 4 }, (_, n) => worker(n));

      // CLI: users of the same account (reads the account, then writes the user and its key)
      // and new accounts, in parallel processes.
      const cliUsers = new Map<string, string>();
      const cliAccounts = new Set<string>();
      const cliFailures: string[] = [];
      let next = 0;
      const cliLoop = async () => {
        while (next < CLI_RUNS) {
          const n = next++;
          const args =
            n % 3 === 2
              ? ['accounts', 'create', '--name', `cli-account-${n}`, '--json']
              : ['users', 'create', '--account', api.info.accountId, '--name', `cli-user-${n}`, '--role', 'developer', '--json'];
          const res = await cli(args, env);
          if (res.code !== 0) {
            cliFailures.push(`${args.join(' ')} → ${res.code}: ${res.stderr.slice(0, 500)}`);
            continue;
          }
          const issued = JSON.parse(res.stdout);
          if (args[0] === 'accounts') cliAccounts.add(issued.account_id);
          else cliUsers.set(issued.user_id, issued.api_key_id);
        }
      };
      try {
        await Promise.all(Array.from({ length: CLI_PARALLEL }, cliLoop));
      } finally {
        stop = true;
        await Promise.all(workers);
        fs.rmSync(dataDir, { recursive: true, force: true });
      }

      t.diagnostic(`CLI: ${CLI_RUNS - cliFailures.length}/${CLI_RUNS} succeeded; HTTP answers: ${JSON.stringify([...answers])}`);
      assert.deepEqual(cliFailures, [], 'every CLI write succeeded');
      assert.deepEqual(unexpected, [], `every HTTP write succeeded (answers: ${JSON.stringify([...answers])})`);
      assert.ok(createdKeys.size > CLI_RUNS, `the server wrote while the CLI ran (${createdKeys.size} keys)`);

      // Everything written on both sides is there.
      const db = h().deps.store.reader;
      const keys = await db.selectFrom('api_keys').select(['id', 'metadata', 'owner_id']).where('account_id', '=', api.info.accountId).execute();
      const stored = new Map(keys.map((k) => [k.id, k]));
      const expected = new Set([api.info.keyId, ...[...createdKeys].filter((id) => !deletedKeys.has(id)), ...cliUsers.values()]);
      assert.deepEqual(new Set(stored.keys()), expected);
      for (const id of patchedKeys) if (!deletedKeys.has(id)) assert.equal(stored.get(id)?.metadata, 'patched', id);
      const users = await db.selectFrom('users').select('id').where('account_id', '=', api.info.accountId).execute();
      assert.deepEqual(new Set(users.map((u) => u.id)), new Set([api.info.userId, ...cliUsers.keys()]));
      for (const [userId, keyId] of cliUsers) assert.equal(stored.get(keyId)?.owner_id, userId);
      const accounts = await db.selectFrom('accounts').select('id').execute();
      for (const id of cliAccounts)
        assert.ok(
          accounts.some((a) => a.id === id),
          `account ${id} created by the CLI is stored`,
        );
      assert.equal(cliUsers.size + cliAccounts.size, CLI_RUNS);
    });
  },
  // As fast as the server answers, from one account: the rate limit would refuse most of it.
  { rateLimit: { perMinute: 0 } },
);
