// Agent ingresses: their fields (a path uri, an absolute list uri and next_page_uri, the
// nameservers and region domains of the operator's settings), the name rules they share with
// reserved domains (no wildcard, nothing service-owned), uniqueness within and across accounts,
// a fixed domain, and certificate management with its policy detached by DELETE. A second
// server with other operator settings shows those settings are the ones served.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { it } from 'node:test';
import { describeEachStore, type Api } from '../helpers/harness.js';
import { assertError, created } from '../helpers/assertions.js';

const ingress = (api: Api, body: Record<string, unknown>) => created(api, '/agent_ingresses', body);
const domain = () => `${randomBytes(4).toString('hex')}.example.com`;
const count = async (api: Api) => (await api.get('/agent_ingresses')).json.ingresses.length as number;
/** The stored resource, to compare before and after a refused request. */
const stored = async (api: Api, id: string) => (await api.get(`/agent_ingresses/${id}`)).json;

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
const REGIONS = ['us', 'eu', 'ap', 'au', 'sa', 'jp', 'in'];
const PROVISIONING = 'Managed certificate provisioning in progress.';

describeEachStore('agent ingresses', (h) => {
  it('fields: a path uri, the nameservers, a region domain per region in order, no management', async () => {
    const api = await h().newAccount();
    const name = domain();
    const ai = await ingress(api, { domain: `Tunnels.${name.toUpperCase()}.`, description: 'agents', metadata: '{"env":"prod"}' });
    assert.match(ai.id, /^agin_/);
    assert.deepEqual(Object.keys(ai).sort(), [
      'certificate_management_policy',
      'certificate_management_status',
      'created_at',
      'description',
      'domain',
      'id',
      'metadata',
      'ns_targets',
      'region_domains',
      'uri',
    ]);
    assert.equal(ai.uri, `/agent_ingresses/${ai.id}`, 'a path, not an absolute address');
    assert.equal(ai.domain, `tunnels.${name}`, 'lower case, the trailing dot dropped');
    assert.deepEqual(ai.ns_targets, ['ns1.edgeplane.app.', 'ns2.edgeplane.app.']);
    assert.deepEqual(
      ai.region_domains,
      REGIONS.map((r) => `tunnel.${r}.tunnels.${name}`),
    );
    assert.match(ai.created_at, RFC3339);
    assert.equal(ai.description, 'agents');
    assert.equal(ai.metadata, '{"env":"prod"}');
    assert.equal(ai.certificate_management_policy, null);
    assert.equal(ai.certificate_management_status, null);
    assert.deepEqual(await stored(api, ai.id), ai);

    const idn = await ingress(api, { domain: `Bücher.${name}` });
    assert.equal(idn.domain, `xn--bcher-kva.${name}`);
    assert.equal(idn.region_domains[0], `tunnel.us.xn--bcher-kva.${name}`);
  });

  it('list: an absolute uri with path uris inside; next_page_uri absolute with limit=1, followed to the end', async () => {
    const api = await h().newAccount();
    const older = await ingress(api, { domain: domain() });
    const newer = await ingress(api, { domain: domain() });
    const list = await api.get('/agent_ingresses');
    assert.deepEqual(Object.keys(list.json).sort(), ['ingresses', 'next_page_uri', 'uri']);
    assert.equal(list.json.uri, `${h().baseUrl}/agent_ingresses`);
    assert.equal(list.json.next_page_uri, null);
    assert.deepEqual(
      list.json.ingresses.map((i: { uri: string }) => i.uri),
      [`/agent_ingresses/${newer.id}`, `/agent_ingresses/${older.id}`],
    );

    const first = await api.get('/agent_ingresses?limit=1');
    assert.deepEqual(
      first.json.ingresses.map((i: { id: string }) => i.id),
      [newer.id],
    );
    assert.equal(first.json.uri, `${h().baseUrl}/agent_ingresses`);
    assert.ok(first.json.next_page_uri.startsWith(`${h().baseUrl}/agent_ingresses?`), first.json.next_page_uri);
    const second = await api.get(first.json.next_page_uri);
    assert.equal(second.status, 200, second.text);
    assert.deepEqual(
      second.json.ingresses.map((i: { id: string }) => i.id),
      [older.id],
    );
    assert.equal(second.json.next_page_uri, null, 'the last page');
  });

  it('names: the reserved-domain codes, no wildcard (6704), nothing service-owned (6705); nothing written', async () => {
    const api = await h().newAccount();
    const cases: [string, number, string][] = [
      ['', 400, 'ERR_EP_401'],
      ['a_b.example.com', 400, 'ERR_EP_406'],
      ['-a.example.com', 400, 'ERR_EP_407'],
      ['a-.example.com', 400, 'ERR_EP_408'],
      ['example..com', 400, 'ERR_EP_409'],
      ['ab--c.example.com', 400, 'ERR_EP_410'],
      ['1.2.3.4', 400, 'ERR_EP_411'],
      ['xn--zz.example.com', 400, 'ERR_EP_429'],
      [`${'a'.repeat(64)}.example.com`, 400, 'ERR_EP_513'],
      ['com', 400, 'ERR_EP_448'],
      [`*.${domain()}`, 400, 'ERR_EP_6704'],
      [`a.*.${domain()}`, 400, 'ERR_EP_6704'],
      ['edgeplane.app', 400, 'ERR_EP_6705'],
      ['Agents.EdgePlane.App', 400, 'ERR_EP_6705'],
      [`${randomBytes(3).toString('hex')}.edgeplane.app`, 400, 'ERR_EP_6705'],
      ['x.edgeplane-cname.app', 400, 'ERR_EP_6705'],
      ['edgeplane-acme.app', 400, 'ERR_EP_6705'],
    ];
    for (const [value, status, code] of cases) await assertError(await api.post('/agent_ingresses', { domain: value }), status, code);
    await assertError(await api.post('/agent_ingresses', {}), 400, 'ERR_EP_215', 'domain');
    assert.equal(await count(api), 0);
  });

  it('uniqueness: 6706 naming the existing id in the same account, 6707 revealing nothing across accounts', async () => {
    const api = await h().newAccount();
    const other = await h().newAccount();
    const name = domain();
    const mine = await ingress(api, { domain: name, description: 'first' });

    const again = await api.post('/agent_ingresses', { domain: name.toUpperCase(), description: 'second' });
    await assertError(again, 409, 'ERR_EP_6706', mine.id);
    assert.equal(await count(api), 1);

    const theirs = await other.post('/agent_ingresses', { domain: `${name}.` });
    await assertError(theirs, 409, 'ERR_EP_6707', name);
    for (const secret of [mine.id, api.info.accountId, api.info.userId]) assert.ok(!theirs.text.includes(secret), `${secret} is not revealed`);
    assert.equal(await count(other), 0);
    assert.deepEqual(await stored(api, mine.id), mine, 'the holder is unchanged');
  });

  it("another account's ingress under an ingress domain is 455, revealing nothing; siblings and the ingress's parent are free", async () => {
    const owner = await h().newAccount();
    const other = await h().newAccount();
    const parent = domain();
    const x = `connect.${parent}`;
    const mine = await ingress(owner, { domain: x });
    for (const nested of [`tunnel.us.${x}`, `a.${x}`]) {
      const res = await other.post('/agent_ingresses', { domain: nested });
      await assertError(res, 409, 'ERR_EP_455', nested);
      for (const secret of [mine.id, owner.info.accountId, owner.info.userId]) assert.ok(!res.text.includes(secret), res.text);
    }
    assert.equal(await count(other), 0, 'nothing written');
    assert.equal((await ingress(other, { domain: `sibling.${parent}` })).domain, `sibling.${parent}`);
    assert.equal((await owner.delete(`/agent_ingresses/${mine.id}`)).status, 204);
    assert.equal((await ingress(other, { domain: `tunnel.us.${x}` })).domain, `tunnel.us.${x}`, 'free once the ingress is deleted');
  });

  it("an ingress over another account's names: 456 for its reserved domain or wildcard at or under it and its ingress under it, 455 under its wildcard", async () => {
    const owner = await h().newAccount();
    const other = await h().newAccount();
    const [a, b, c, d, e] = [domain(), domain(), domain(), domain(), domain()];
    const held = [
      await created(other, '/reserved_domains', { domain: a }),
      await created(other, '/reserved_domains', { domain: `app.${b}` }),
      await created(other, '/reserved_domains', { domain: `*.q.${c}` }),
      await ingress(other, { domain: `sub.${d}` }),
      await created(other, '/reserved_domains', { domain: `*.${e}` }),
    ];
    for (const [name, code] of [
      [a, 'ERR_EP_456'],
      [b, 'ERR_EP_456'],
      [c, 'ERR_EP_456'],
      [d, 'ERR_EP_456'],
      [e, 'ERR_EP_456'],
      [`x.${e}`, 'ERR_EP_455'],
      [`x.y.${e}`, 'ERR_EP_455'],
    ]) {
      const res = await owner.post('/agent_ingresses', { domain: name });
      await assertError(res, 409, code, name);
      for (const secret of [...held.map((r) => r.id), other.info.accountId]) assert.ok(!res.text.includes(secret), res.text);
    }
    assert.equal(await count(owner), 0, 'nothing written');
    // A plain reserved name holds only itself: an ingress under it, or beside one, is free.
    assert.equal((await ingress(owner, { domain: `tunnel.${a}` })).domain, `tunnel.${a}`);
    assert.equal((await ingress(owner, { domain: `other.${b}` })).domain, `other.${b}`);
  });

  it('an account nests its own names: an ingress under its own ingress, and one over its own reserved domains and ingresses', async () => {
    const api = await h().newAccount();
    const x = domain();
    await ingress(api, { domain: x });
    assert.equal((await ingress(api, { domain: `tunnel.us.${x}` })).domain, `tunnel.us.${x}`);
    assert.equal((await created(api, '/reserved_domains', { domain: `app.${x}` })).domain, `app.${x}`);
    assert.equal((await created(api, '/reserved_domains', { domain: `*.${x}` })).domain, `*.${x}`);
    assert.equal((await created(api, '/reserved_domains', { domain: x })).domain, x, 'the same name as a reserved domain too');
    const y = domain();
    await created(api, '/reserved_domains', { domain: `*.${y}` });
    await created(api, '/reserved_domains', { domain: `app.b.${y}` });
    await ingress(api, { domain: `deep.b.${y}` });
    assert.equal((await ingress(api, { domain: `b.${y}` })).domain, `b.${y}`);
    assert.equal((await ingress(api, { domain: y })).domain, y);
  });

  it('gives an ingress domain and a name under it to one account only, when two accounts create them at once', async () => {
    const [a, b] = [await h().newAccount(), await h().newAccount()];
    const rounds = 60;
    const outcomes = new Map<string, number>();
    for (let round = 0; round < rounds; round++) {
      const x = `r${round}-${randomBytes(3).toString('hex')}.example.com`;
      // Alternate who asks for the ingress, and what the other asks for under it.
      const [ingressOwner, nameOwner] = round % 2 === 0 ? [a, b] : [b, a];
      const [path, name] = (
        [
          ['/reserved_domains', `app.${x}`],
          ['/reserved_domains', `*.${x}`],
          ['/agent_ingresses', `tunnel.us.${x}`],
        ] as const
      )[round % 3]!;
      const [outer, inner] = await Promise.all([ingressOwner.post('/agent_ingresses', { domain: x }), nameOwner.post(path, { domain: name })]);
      const key = `${outer.status}/${inner.status}`;
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      assert.ok(key === '201/409' || key === '409/201', `exactly one wins (${key}): ${outer.text} ${inner.text}`);
      const expected = outer.status === 409 ? 'ERR_EP_456' : path === '/agent_ingresses' ? 'ERR_EP_455' : 'ERR_EP_454';
      assert.equal((outer.status === 409 ? outer : inner).json.error_code, expected);
    }
    const db = h().deps.store.db;
    const accounts = [a.info.accountId, b.info.accountId];
    const ingresses = await db.selectFrom('agent_ingresses').select('domain').where('account_id', 'in', accounts).execute();
    const reserved = await db.selectFrom('reserved_domains').select('domain').where('account_id', 'in', accounts).execute();
    assert.equal(ingresses.length + reserved.length, rounds, `one name a round (outcomes: ${JSON.stringify([...outcomes])})`);
  });

  it('PATCH: description and metadata change, the domain is fixed (251)', async () => {
    const api = await h().newAccount();
    const ai = await ingress(api, { domain: domain(), description: 'a', metadata: 'm1' });
    await assertError(await api.patch(`/agent_ingresses/${ai.id}`, { domain: domain() }), 400, 'ERR_EP_251', 'domain');
    assert.deepEqual(await stored(api, ai.id), ai);
    const patched = await api.patch(`/agent_ingresses/${ai.id}`, { description: 'b' });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.json.description, 'b');
    assert.equal(patched.json.metadata, 'm1', 'an absent field is unchanged');
    assert.equal(patched.json.domain, ai.domain);
  });

  it('certificate management: set on create with defaults, by PATCH, refused values, detached by DELETE', async () => {
    const api = await h().newAccount();
    const managed = await ingress(api, { domain: domain(), certificate_management_policy: {} });
    assert.deepEqual(managed.certificate_management_policy, { authority: 'letsencrypt', private_key_type: 'rsa' });
    const job = managed.certificate_management_status.provisioning_job;
    assert.deepEqual(managed.certificate_management_status, {
      renews_at: null,
      provisioning_job: { error_code: null, msg: PROVISIONING, started_at: job.started_at, retries_at: null },
    });
    assert.match(job.started_at, RFC3339);

    const plain = await ingress(api, { domain: domain() });
    const set = await api.patch(`/agent_ingresses/${plain.id}`, { certificate_management_policy: { authority: 'letsencrypt', private_key_type: 'ecdsa' } });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(set.json.certificate_management_policy, { authority: 'letsencrypt', private_key_type: 'ecdsa' });
    assert.equal(set.json.certificate_management_status.provisioning_job.msg, PROVISIONING);

    for (const [policy, code, value] of [
      [{ authority: 'zerossl' }, 'ERR_EP_1908', 'zerossl'],
      [{ private_key_type: 'ed25519' }, 'ERR_EP_1909', 'ed25519'],
    ] as const) {
      await assertError(await api.post('/agent_ingresses', { domain: domain(), certificate_management_policy: policy }), 400, code, value);
      await assertError(await api.patch(`/agent_ingresses/${plain.id}`, { certificate_management_policy: policy }), 400, code, value);
    }
    await assertError(
      await api.post('/agent_ingresses', { domain: domain(), certificate_management_policy: { authority: 'letsencrypt', x: 1 } }),
      400,
      'ERR_EP_214',
    );
    assert.equal(await count(api), 2);
    assert.deepEqual(await stored(api, plain.id), set.json, 'the refused PATCHes changed nothing');

    const detached = await api.delete(`/agent_ingresses/${plain.id}/certificate_management_policy`);
    assert.equal(detached.status, 204, detached.text);
    const after = await stored(api, plain.id);
    assert.equal(after.certificate_management_policy, null);
    assert.equal(after.certificate_management_status, null);
    assert.equal((await api.delete(`/agent_ingresses/${plain.id}/certificate_management_policy`)).status, 204, 'detaching nothing is 204 too');
    assert.equal((await api.delete(`/agent_ingresses/agin_000000000000000000000000000/certificate_management_policy`)).status, 404);
  });

  it('certificate management: the same policy keeps the job, a new key type restarts it', async () => {
    const api = await h().newAccount();
    const ai = await ingress(api, { domain: domain(), certificate_management_policy: { authority: 'letsencrypt', private_key_type: 'rsa' } });
    const startedAt: string = ai.certificate_management_status.provisioning_job.started_at;
    await sleep(1100);
    const same = await api.patch(`/agent_ingresses/${ai.id}`, { certificate_management_policy: { private_key_type: 'rsa' }, description: 'x' });
    assert.equal(same.status, 200, same.text);
    assert.equal(same.json.certificate_management_status.provisioning_job.started_at, startedAt, 'the running job is kept');
    const changed = await api.patch(`/agent_ingresses/${ai.id}`, { certificate_management_policy: { private_key_type: 'ecdsa' } });
    assert.equal(changed.json.certificate_management_policy.private_key_type, 'ecdsa');
    const restarted: string = changed.json.certificate_management_status.provisioning_job.started_at;
    assert.ok(Date.parse(restarted) > Date.parse(startedAt), `${restarted} is after ${startedAt}`);
    assert.deepEqual(await stored(api, ai.id), changed.json);
  });
});

describeEachStore(
  'agent ingresses under other operator settings',
  (h) => {
    it("serves the operator's regions, nameservers and service domain", async () => {
      const api = await h().newAccount();
      const name = domain();
      const ai = await ingress(api, { domain: name });
      assert.deepEqual(ai.region_domains, [`tunnel.eu.${name}`, `tunnel.us.${name}`]);
      assert.deepEqual(ai.ns_targets, ['a.ns.example.net.']);
      await assertError(await api.post('/agent_ingresses', { domain: 'x.corp.test' }), 400, 'ERR_EP_6705', 'corp.test');
      await assertError(await api.post('/agent_ingresses', { domain: 'corp.test' }), 400, 'ERR_EP_6705');
      assert.equal(await count(api), 1);
      const formerlyOwned = `${randomBytes(3).toString('hex')}.edgeplane.app`;
      assert.equal((await ingress(api, { domain: formerlyOwned })).domain, formerlyOwned, 'edgeplane.app is no service domain here');
    });
  },
  { domains: { regions: ['eu', 'us'], nameservers: ['a.ns.example.net.'], serviceDomains: ['corp.test'] } },
);
