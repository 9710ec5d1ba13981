// IP policies and their rules: CRUD, strict CIDRs, uniqueness, cascades and references.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachStore, type Api } from '../helpers/harness.js';

async function policy(api: Api, body: Record<string, unknown> = {}): Promise<string> {
  const res = await api.post('/ip_policies', body);
  assert.equal(res.status, 201, res.text);
  return res.json.id;
}

describeEachStore('IP policies and rules', (h) => {
  it('creates, reads, lists, updates and deletes an IP policy', async () => {
    const api = await h().newAccount();
    const created = await api.post('/ip_policies', { description: 'office', metadata: '{"site":"ber"}' });
    assert.equal(created.status, 201);
    assert.match(created.json.id, /^ipp_[0-9A-Za-z]{27}$/);
    assert.deepEqual(Object.keys(created.json).sort(), ['created_at', 'description', 'id', 'metadata', 'uri']);
    assert.deepEqual((await api.get(`/ip_policies/${created.json.id}`)).json, created.json);
    const list = await api.get('/ip_policies');
    assert.deepEqual(
      list.json.ip_policies.map((p: { id: string }) => p.id),
      [created.json.id],
    );
    assert.equal((await api.patch(`/ip_policies/${created.json.id}`, { description: 'hq' })).json.description, 'hq');
    assert.equal((await api.delete(`/ip_policies/${created.json.id}`)).status, 204);
    assert.equal((await api.get(`/ip_policies/${created.json.id}`)).status, 404);
  });

  it('creates rules with the policy as a Ref and CIDRs in canonical form', async () => {
    const api = await h().newAccount();
    const ipp = await policy(api);
    const v4 = await api.post('/ip_policy_rules', { ip_policy_id: ipp, cidr: '10.0.0.0/8', action: 'allow', description: 'lan' });
    assert.equal(v4.status, 201, v4.text);
    assert.match(v4.json.id, /^ipr_/);
    assert.deepEqual(v4.json.ip_policy, { id: ipp, uri: `${h().baseUrl}/ip_policies/${ipp}` });
    assert.equal(v4.json.action, 'allow');
    const v6 = await api.post('/ip_policy_rules', { ip_policy_id: ipp, cidr: '2001:DB8:0::/32', action: 'deny' });
    assert.equal(v6.json.cidr, '2001:db8::/32');
    const list = await api.get('/ip_policy_rules');
    assert.deepEqual(
      list.json.ip_policy_rules.map((r: { id: string }) => r.id),
      [v6.json.id, v4.json.id],
    );
  });

  it('refuses a CIDR in host form with a suggestion', async () => {
    const api = await h().newAccount();
    const res = await api.post('/ip_policy_rules', { ip_policy_id: await policy(api), cidr: '10.1.2.3/8', action: 'allow' });
    assert.equal(res.status, 400);
    assert.equal(res.json.error_code, 'ERR_EP_1409');
    assert.match(res.json.msg, /'10\.0\.0\.0\/8'/);
  });

  const invalid: [string, string][] = [
    ['300.1.1.1/8', 'ERR_EP_1406'],
    ['10.0.0.0/33', 'ERR_EP_1406'],
    ['::1/129', 'ERR_EP_1406'],
    ['10.0.0.0', 'ERR_EP_1413'],
    ['', 'ERR_EP_1406'],
    ['banana', 'ERR_EP_1406'],
  ];
  for (const [cidr, code] of invalid) {
    it(`refuses cidr ${JSON.stringify(cidr)} with ${code} and writes nothing`, async () => {
      const api = await h().newAccount();
      const res = await api.post('/ip_policy_rules', { ip_policy_id: await policy(api), cidr, action: 'allow' });
      assert.equal(res.status, 400);
      assert.equal(res.json.error_code, code);
      assert.equal((await api.get('/ip_policy_rules')).json.ip_policy_rules.length, 0);
    });
  }

  it('refuses an unknown action, a missing policy, and policies of another account or prefix', async () => {
    const api = await h().newAccount();
    const other = await h().newAccount();
    const ipp = await policy(api);
    const action = await api.post('/ip_policy_rules', { ip_policy_id: ipp, cidr: '10.0.0.0/8', action: 'maybe' });
    assert.equal(action.status, 400);
    assert.match(action.json.msg, /allow, deny/);
    assert.equal((await api.post('/ip_policy_rules', { cidr: '10.0.0.0/8', action: 'allow' })).json.error_code, 'ERR_EP_215');
    for (const id of [await policy(other), 'ipx_000000000000000000000000000', 'nonsense']) {
      const res = await api.post('/ip_policy_rules', { ip_policy_id: id, cidr: '10.0.0.0/8', action: 'allow' });
      assert.equal(res.status, 400, id);
      assert.equal(res.json.error_code, 'ERR_EP_1402');
      assert.ok(res.json.msg.includes(id));
    }
    assert.equal((await other.get('/ip_policy_rules')).json.ip_policy_rules.length, 0);
  });

  it('keeps CIDRs unique within a policy (409), also through canonical forms and updates', async () => {
    const api = await h().newAccount();
    const ipp = await policy(api);
    await api.post('/ip_policy_rules', { ip_policy_id: ipp, cidr: '2001:db8::/32', action: 'allow' });
    const dup = await api.post('/ip_policy_rules', { ip_policy_id: ipp, cidr: '2001:0DB8::/32', action: 'deny' });
    assert.equal(dup.status, 409);
    assert.equal(dup.json.error_code, 'ERR_EP_1408');
    const elsewhere = await api.post('/ip_policy_rules', { ip_policy_id: await policy(api), cidr: '2001:db8::/32', action: 'allow' });
    assert.equal(elsewhere.status, 201, 'the same CIDR in another policy is fine');
    const second = await api.post('/ip_policy_rules', { ip_policy_id: ipp, cidr: '10.0.0.0/8', action: 'allow' });
    const clash = await api.patch(`/ip_policy_rules/${second.json.id}`, { cidr: '2001:db8::/32' });
    assert.equal(clash.status, 409);
    assert.match(clash.json.msg, new RegExp(ipp));
    assert.equal((await api.get(`/ip_policy_rules/${second.json.id}`)).json.cidr, '10.0.0.0/8');
  });

  it('updates description, metadata and cidr; refuses action and ip_policy_id', async () => {
    const api = await h().newAccount();
    const rule = (await api.post('/ip_policy_rules', { ip_policy_id: await policy(api), cidr: '10.0.0.0/8', action: 'allow' })).json;
    const changed = await api.patch(`/ip_policy_rules/${rule.id}`, { cidr: '192.168.0.0/16', metadata: 'm' });
    assert.equal(changed.json.cidr, '192.168.0.0/16');
    assert.equal(changed.json.metadata, 'm');
    assert.equal((await api.patch(`/ip_policy_rules/${rule.id}`, { cidr: '192.168.1.1/16' })).json.error_code, 'ERR_EP_1409');
    assert.equal((await api.patch(`/ip_policy_rules/${rule.id}`, { action: 'deny' })).json.error_code, 'ERR_EP_251');
    assert.equal((await api.patch(`/ip_policy_rules/${rule.id}`, { ip_policy_id: rule.ip_policy.id })).json.error_code, 'ERR_EP_251');
  });

  it("deletes a policy's rules with the policy, in the same transaction", async () => {
    const api = await h().newAccount();
    const ipp = await policy(api);
    const rule = (await api.post('/ip_policy_rules', { ip_policy_id: ipp, cidr: '10.0.0.0/8', action: 'allow' })).json;
    assert.equal((await api.delete(`/ip_policies/${ipp}`)).status, 204);
    assert.equal((await api.get(`/ip_policy_rules/${rule.id}`)).status, 404);
  });

  it('refuses to delete a policy an IP restriction uses, naming the restriction', async () => {
    const api = await h().newAccount();
    const ipp = await policy(api);
    const rule = (await api.post('/ip_policy_rules', { ip_policy_id: ipp, cidr: '0.0.0.0/0', action: 'allow' })).json;
    const ipx = (await api.post('/ip_restrictions', { type: 'dashboard', ip_policy_ids: [ipp] })).json;
    const res = await api.delete(`/ip_policies/${ipp}`);
    assert.equal(res.status, 409);
    assert.equal(res.json.error_code, 'ERR_EP_1420');
    assert.ok(res.json.msg.includes(ipx.id));
    assert.equal((await api.get(`/ip_policy_rules/${rule.id}`)).status, 200, 'nothing was deleted');
    await api.delete(`/ip_restrictions/${ipx.id}`);
    assert.equal((await api.delete(`/ip_policies/${ipp}`)).status, 204);
  });

  it('lets only admins change the rules of a policy that a restriction uses', async () => {
    const api = await h().newAccount();
    const dev = await api.asNewUser('developer');
    const used = await policy(api);
    const free = await policy(api);
    const rule = (await api.post('/ip_policy_rules', { ip_policy_id: used, cidr: '10.0.0.0/8', action: 'allow' })).json;
    await api.post('/ip_restrictions', { type: 'agent', ip_policy_ids: [used] });
    for (const res of [
      await dev.post('/ip_policy_rules', { ip_policy_id: used, cidr: '0.0.0.0/0', action: 'allow' }),
      await dev.patch(`/ip_policy_rules/${rule.id}`, { cidr: '0.0.0.0/0' }),
      await dev.delete(`/ip_policy_rules/${rule.id}`),
    ]) {
      assert.equal(res.status, 403);
      assert.equal(res.json.error_code, 'ERR_EP_4111');
    }
    assert.equal((await api.get(`/ip_policy_rules/${rule.id}`)).json.cidr, '10.0.0.0/8');
    assert.equal((await dev.post('/ip_policy_rules', { ip_policy_id: free, cidr: '0.0.0.0/0', action: 'allow' })).status, 201);
  });
});
