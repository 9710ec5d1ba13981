// IP restrictions: the resource, and the `api` restriction enforced on this API itself.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { it } from 'node:test';
import { describeEachStore, type Api } from '../helpers/harness.js';

/** A policy with the given rules; returns its id. */
async function policyWith(api: Api, rules: [string, 'allow' | 'deny'][]): Promise<string> {
  const ipp = (await api.post('/ip_policies', {})).json.id;
  for (const [cidr, action] of rules) {
    const res = await api.post('/ip_policy_rules', { ip_policy_id: ipp, cidr, action });
    assert.equal(res.status, 201, res.text);
  }
  return ipp;
}

async function restrictApi(api: Api, rules: [string, 'allow' | 'deny'][], enforced = true) {
  const res = await api.post('/ip_restrictions', { type: 'api', enforced, ip_policy_ids: [await policyWith(api, rules)] });
  assert.equal(res.status, 201, res.text);
  return res.json;
}

/**
 * Probes until `ok`. A probe that fails to connect counts as "not yet": after a test blocks the
 * event loop (a CLI run with spawnSync), the server closes the client's idle keep-alive socket
 * as the loop resumes, and the next request on it fails before it reaches the server.
 */
async function until<T>(what: string, probe: () => Promise<T>, ok: (v: T) => boolean, ms = 2500): Promise<{ value: T; after: number }> {
  const start = Date.now();
  for (;;) {
    const value = await probe().catch((error: unknown) => {
      if (Date.now() - start > ms) throw error;
      return undefined;
    });
    if (value !== undefined && ok(value)) return { value, after: Date.now() - start };
    if (Date.now() - start > ms) assert.fail(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describeEachStore('IP restrictions', (h) => {
  it('creates, reads, lists, updates and deletes a restriction with its policies as Refs', async () => {
    const api = await h().newAccount();
    const a = await policyWith(api, []);
    const b = await policyWith(api, []);
    const created = await api.post('/ip_restrictions', { type: 'dashboard', ip_policy_ids: [b, a], description: 'office only' });
    assert.equal(created.status, 201, created.text);
    assert.match(created.json.id, /^ipx_/);
    assert.equal(created.json.enforced, false, 'a new restriction only warns unless asked to enforce');
    assert.deepEqual(
      created.json.ip_policies,
      [b, a].map((id) => ({ id, uri: `${h().baseUrl}/ip_policies/${id}` })),
    );
    assert.deepEqual((await api.get(`/ip_restrictions/${created.json.id}`)).json, created.json);
    assert.deepEqual((await api.get('/ip_restrictions')).json.ip_restrictions, [created.json]);

    const updated = await api.patch(`/ip_restrictions/${created.json.id}`, { enforced: true, ip_policy_ids: [a] });
    assert.equal(updated.json.enforced, true);
    assert.deepEqual(
      updated.json.ip_policies.map((p: { id: string }) => p.id),
      [a],
    );
    const described = await api.patch(`/ip_restrictions/${created.json.id}`, { metadata: 'x' });
    assert.deepEqual(
      described.json.ip_policies.map((p: { id: string }) => p.id),
      [a],
      'an absent ip_policy_ids is unchanged',
    );
    assert.equal((await api.delete(`/ip_restrictions/${created.json.id}`)).status, 204);
    assert.equal((await api.get(`/ip_restrictions/${created.json.id}`)).status, 404);
  });

  it('refuses type in a PATCH, unknown types, and a second restriction of a type', async () => {
    const api = await h().newAccount();
    const ipp = await policyWith(api, []);
    const first = (await api.post('/ip_restrictions', { type: 'agent', ip_policy_ids: [ipp] })).json;
    assert.equal((await api.patch(`/ip_restrictions/${first.id}`, { type: 'api' })).json.error_code, 'ERR_EP_251');
    const bad = await api.post('/ip_restrictions', { type: 'ssh', ip_policy_ids: [ipp] });
    assert.equal(bad.status, 400);
    assert.match(bad.json.msg, /dashboard, api, agent, endpoints/);
    const dup = await api.post('/ip_restrictions', { type: 'agent', ip_policy_ids: [ipp] });
    assert.equal(dup.status, 409);
    assert.equal(dup.json.error_code, 'ERR_EP_1802');
    assert.ok(dup.json.msg.includes(first.id));
    assert.equal((await api.get('/ip_restrictions')).json.ip_restrictions.length, 1);
  });

  it('refuses policy ids that are missing, of another account, malformed, repeated or none', async () => {
    const api = await h().newAccount();
    const other = await h().newAccount();
    const mine = await policyWith(api, []);
    const theirs = await policyWith(other, []);
    for (const id of [theirs, 'ipp_000000000000000000000000000', 'bot_000000000000000000000000000']) {
      const res = await api.post('/ip_restrictions', { type: 'api', ip_policy_ids: [mine, id] });
      assert.equal(res.status, 400);
      assert.equal(res.json.error_code, 'ERR_EP_1402');
      assert.ok(res.json.msg.includes(id), res.json.msg);
    }
    assert.equal((await api.post('/ip_restrictions', { type: 'api', ip_policy_ids: [] })).status, 400);
    assert.equal((await api.post('/ip_restrictions', { type: 'api', ip_policy_ids: [mine, mine] })).status, 400);
    assert.equal((await api.get('/ip_restrictions')).json.ip_restrictions.length, 0, 'nothing was written');
    const ipx = (await api.post('/ip_restrictions', { type: 'api', ip_policy_ids: [mine] })).json;
    const patch = await api.patch(`/ip_restrictions/${ipx.id}`, { ip_policy_ids: [theirs] });
    assert.equal(patch.json.error_code, 'ERR_EP_1402');
    assert.deepEqual(
      (await api.get(`/ip_restrictions/${ipx.id}`)).json.ip_policies.map((p: { id: string }) => p.id),
      [mine],
    );
  });

  it('lets only admins manage restrictions', async () => {
    const api = await h().newAccount();
    const dev = await api.asNewUser('developer');
    const ipp = await policyWith(api, []);
    const res = await dev.post('/ip_restrictions', { type: 'api', ip_policy_ids: [ipp] });
    assert.equal(res.status, 403);
    assert.equal(res.json.error_code, 'ERR_EP_4111');
    assert.equal((await dev.get('/ip_restrictions')).status, 200);
  });

  it('lets a caller in when an allow rule matches its address', async () => {
    const api = await h().newAccount();
    await restrictApi(api, [['127.0.0.1/32', 'allow']]);
    const res = await api.get('/api_keys');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('ip-restriction-warning'), null);
  });

  it('refuses a caller no allow rule matches with 403 ERR_EP_220, and does nothing', async () => {
    const api = await h().newAccount();
    const ipx = await restrictApi(api, [['10.0.0.0/8', 'allow']]);
    const before = (await h().deps.store.db.selectFrom('api_keys').select('id').where('account_id', '=', api.info.accountId).execute()).length;
    const res = await api.post('/api_keys', { description: 'should not exist' });
    assert.equal(res.status, 403);
    assert.equal(res.json.error_code, 'ERR_EP_220');
    assert.ok(res.json.msg.includes('127.0.0.1') && res.json.msg.includes(ipx.id));
    const after = (await h().deps.store.db.selectFrom('api_keys').select('id').where('account_id', '=', api.info.accountId).execute()).length;
    assert.equal(after, before);
    assert.equal((await api.get('/api_keys')).status, 403);
  });

  it('lets deny win over allow', async () => {
    const api = await h().newAccount();
    await restrictApi(api, [
      ['127.0.0.0/8', 'allow'],
      ['127.0.0.1/32', 'deny'],
    ]);
    assert.equal((await api.get('/api_keys')).json.error_code, 'ERR_EP_220');
  });

  it('applies only to the account that has it', async () => {
    const api = await h().newAccount();
    const other = await h().newAccount();
    await restrictApi(api, [['10.0.0.0/8', 'allow']]);
    assert.equal((await api.get('/api_keys')).status, 403);
    assert.equal((await other.get('/api_keys')).status, 200);
  });

  it('lets a caller through with a warning header and a log line when not enforced', async () => {
    const api = await h().newAccount();
    const ipx = await restrictApi(api, [['10.0.0.0/8', 'allow']], false);
    const res = await api.post('/api_keys', { description: 'allowed with a warning' });
    assert.equal(res.status, 201);
    assert.match(res.headers.get('ip-restriction-warning') ?? '', new RegExp(`127\\.0\\.0\\.1 .*${ipx.id}`));
    const line = h().logs.find((l) => l.ip_restriction_id === ipx.id);
    assert.ok(line, 'a warning was logged');
    assert.equal(line.level, 40);
    assert.equal(line.account_id, api.info.accountId);
    assert.equal(line.key_id, api.info.keyId);
    assert.equal(line.ip, '127.0.0.1');
    // Through the request's own logger, made when it first logs: bound to the request's operation id.
    assert.equal(line.operation_id, res.headers.get('operation-id'));
    assert.ok(!JSON.stringify(line).includes(api.token!), 'the token is not logged');
  });

  it('takes effect at once on this instance when the restriction changes', async () => {
    const api = await h().newAccount();
    const ipx = await restrictApi(api, [['10.0.0.0/8', 'allow']], false);
    assert.equal((await api.get('/api_keys')).status, 200);
    assert.equal((await api.patch(`/ip_restrictions/${ipx.id}`, { enforced: true })).status, 200);
    assert.equal((await api.get('/api_keys')).status, 403);
  });

  it('takes effect within 2 s on another instance, with no database read per request', async () => {
    const api = await h().newAccount();
    const second = await h().secondInstance();
    try {
      const viaSecond = api.at(second.baseUrl);
      assert.equal((await viaSecond.get('/api_keys')).status, 200);
      const ipx = await restrictApi(api, [['10.0.0.0/8', 'allow']]);
      const blocked = await until(
        'the second instance enforces the new restriction',
        () => viaSecond.get('/api_keys'),
        (r) => r.status === 403,
      );
      assert.ok(blocked.after <= 2500);
      assert.equal((await api.delete(`/ip_restrictions/${ipx.id}`)).status, 403, 'locked out here too');
      // A change written by another process (as the CLI does): an allow rule and a revision bump.
      const ipp = ipx.ip_policies[0].id;
      await h()
        .deps.store.db.insertInto('ip_policy_rules')
        .values({
          id: 'ipr_000000000000000000000000001',
          account_id: api.info.accountId,
          ip_policy_id: ipp,
          cidr: '127.0.0.1/32',
          action: 'allow',
          description: '',
          metadata: '',
          created_at: '2026-01-01T00:00:00Z',
        })
        .execute();
      const { bumpIpRevision } = await import('../../src/resources/ip-policies/ip-revision.js');
      const { scopedTx } = await import('../../src/db/scoped.js');
      await scopedTx(h().deps.store, { accountId: api.info.accountId }, bumpIpRevision);
      await until(
        'the first instance sees a change written by another process',
        () => api.get('/api_keys'),
        (r) => r.status === 200,
      );
      await until(
        'the second instance too',
        () => viaSecond.get('/api_keys'),
        (r) => r.status === 200,
      );
    } finally {
      await second.close();
    }
  });

  it('can be lifted by an operator with the CLI when an account locked itself out', async () => {
    const api = await h().newAccount();
    const ipx = await restrictApi(api, [['10.0.0.0/8', 'allow']]);
    assert.equal((await api.get('/api_keys')).status, 403);
    const root = path.resolve(import.meta.dirname, '../..');
    const cli = (...args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', path.join(root, 'src/cli.ts'), ...args], {
        cwd: root,
        encoding: 'utf8',
        env: { ...process.env, EDGEPLANE_DATABASE_URL: h().databaseUrl, EDGEPLANE_LOG_LEVEL: 'silent' },
      });
    const listed = cli('ip-restrictions', 'list', '--account', api.info.accountId, '--json');
    assert.equal(listed.status, 0, listed.stderr);
    assert.deepEqual(
      JSON.parse(listed.stdout).ip_restrictions.map((r: { id: string; type: string; enforced: boolean }) => [r.id, r.type, r.enforced]),
      [[ipx.id, 'api', true]],
    );
    const deleted = cli('ip-restrictions', 'delete', '--account', api.info.accountId, '--type', 'api');
    assert.equal(deleted.status, 0, deleted.stderr);
    assert.match(deleted.stdout, new RegExp(`deleted ${ipx.id}`));
    await until(
      'the running server lets the account in again',
      () => api.get('/api_keys'),
      (r) => r.status === 200,
    );
    const again = cli('ip-restrictions', 'delete', '--account', api.info.accountId, '--id', ipx.id);
    assert.equal(again.status, 2);
    assert.match(again.stderr, /has no IP restriction/);
  });
});

describeEachStore(
  'IP restrictions over IPv6',
  (h) => {
    it('matches IPv6 callers against IPv6 rules', async () => {
      const api = await h().newAccount();
      await restrictApi(api, [['::1/128', 'allow']]);
      assert.equal((await api.get('/api_keys')).status, 200);
      await api.post('/ip_policy_rules', {
        ip_policy_id: (await api.get('/ip_restrictions')).json.ip_restrictions[0].ip_policies[0].id,
        cidr: '::/0',
        action: 'deny',
      });
      const res = await api.get('/api_keys');
      assert.equal(res.status, 403);
      assert.match(res.json.msg, /::1/);
    });
  },
  { host: '::1' },
);

describeEachStore(
  'IP restrictions behind trusted proxies',
  (h) => {
    it('uses the first untrusted hop of X-Forwarded-For', async () => {
      const api = await h().newAccount();
      await restrictApi(api, [['203.0.113.0/24', 'allow']]);
      assert.equal((await api.get('/api_keys', { headers: { 'X-Forwarded-For': '203.0.113.5, 10.0.0.7' } })).status, 200, '10.0.0.7 is a trusted proxy');
      assert.equal(
        (await api.get('/api_keys', { headers: { 'X-Forwarded-For': '203.0.113.5, 198.51.100.1' } })).status,
        403,
        '198.51.100.1 is the first untrusted hop',
      );
      assert.equal((await api.get('/api_keys')).status, 403, 'the proxy itself is not the client');
    });

    it('matches an IPv4-mapped IPv6 address against IPv4 rules', async () => {
      const api = await h().newAccount();
      await restrictApi(api, [['203.0.113.0/24', 'allow']]);
      assert.equal((await api.get('/api_keys', { headers: { 'X-Forwarded-For': '::ffff:203.0.113.9' } })).status, 200);
      assert.equal((await api.get('/api_keys', { headers: { 'X-Forwarded-For': '::ffff:198.51.100.9' } })).status, 403);
    });
  },
  { trustedProxies: ['127.0.0.1/32', '10.0.0.0/8'] },
);

describeEachStore('IP restrictions without trusted proxies', (h) => {
  it('ignores X-Forwarded-For, so it cannot be spoofed', async () => {
    const api = await h().newAccount();
    await restrictApi(api, [['203.0.113.0/24', 'allow']]);
    assert.equal((await api.get('/api_keys', { headers: { 'X-Forwarded-For': '203.0.113.5' } })).status, 403);
  });
});
