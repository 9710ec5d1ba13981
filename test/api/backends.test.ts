// Backends: the five kinds, their values, children, cycles and references.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachStore, type Api } from '../helpers/harness.js';
import { assertError, created } from '../helpers/assertions.js';

const tg = (api: Api, labels: Record<string, string> = { app: 'web' }) => created(api, '/backends/tunnel_group', { labels });

describeEachStore('backends', (h) => {
  it('tunnel group: labels, an empty tunnels list, and labels kept when a PATCH omits them', async () => {
    const api = await h().newAccount();
    const b = await tg(api, { env: 'prod', team: 'edge' });
    assert.match(b.id, /^bkdtg_/);
    assert.deepEqual(b.labels, { env: 'prod', team: 'edge' });
    assert.deepEqual(b.tunnels, []);
    const patched = await api.patch(`/backends/tunnel_group/${b.id}`, { description: 'web pool' });
    assert.deepEqual(patched.json.labels, { env: 'prod', team: 'edge' });
    const relabelled = await api.patch(`/backends/tunnel_group/${b.id}`, { labels: { env: 'dev' } });
    assert.deepEqual(relabelled.json.labels, { env: 'dev' });
    const list = await api.get('/backends/tunnel_group');
    assert.deepEqual(Object.keys(list.json).sort(), ['backends', 'next_page_uri', 'uri']);
  });

  it('tunnel group: refuses "=" in keys, empty or long keys, long values and too many labels', async () => {
    const api = await h().newAccount();
    await assertError(await api.post('/backends/tunnel_group', { labels: { 'a=b': 'x' } }), 400, 'ERR_EP_6531', 'a=b');
    await assertError(await api.post('/backends/tunnel_group', { labels: { '': 'x' } }), 400, 'ERR_EP_6509');
    await assertError(await api.post('/backends/tunnel_group', { labels: { ['k'.repeat(129)]: 'x' } }), 400, 'ERR_EP_6509');
    await assertError(await api.post('/backends/tunnel_group', { labels: { k: 'v'.repeat(257) } }), 400, 'ERR_EP_6510');
    const many = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, 'v']));
    await assertError(await api.post('/backends/tunnel_group', { labels: many }), 400, 'ERR_EP_6508');
    await assertError(await api.post('/backends/tunnel_group', { labels: { k: 5 } }), 400, 'ERR_EP_215', 'labels.k');
    assert.equal((await api.get('/backends/tunnel_group')).json.backends.length, 0);
  });

  it('HTTP response: body, lower-cased headers, status code with 200 by default', async () => {
    const api = await h().newAccount();
    const b = await created(api, '/backends/http_response', {
      body: '<h1>down</h1>',
      headers: { 'Content-Type': 'text/html', 'X-Trace': 'a b' },
      status_code: 503,
    });
    assert.match(b.id, /^bkdhr_/);
    assert.deepEqual(b.headers, { 'content-type': 'text/html', 'x-trace': 'a b' });
    assert.equal(b.status_code, 503);
    assert.equal((await created(api, '/backends/http_response', {})).status_code, 200);
    const patched = await api.patch(`/backends/http_response/${b.id}`, { status_code: 200 });
    assert.equal(patched.json.body, '<h1>down</h1>');
    assert.deepEqual(patched.json.headers, { 'content-type': 'text/html', 'x-trace': 'a b' });
  });

  it('HTTP response: refuses bad header names and values, status codes 99 and 600, and an oversized body', async () => {
    const api = await h().newAccount();
    await assertError(await api.post('/backends/http_response', { headers: { 'Bad Name': 'x' } }), 400, 'ERR_EP_6518', 'Bad Name');
    await assertError(await api.post('/backends/http_response', { headers: { 'x-a': 'line\r\nInjected: yes' } }), 400, 'ERR_EP_6519', 'x-a');
    await assertError(await api.post('/backends/http_response', { headers: { 'X-A': '1', 'x-a': '2' } }), 400, 'ERR_EP_6520');
    await assertError(await api.post('/backends/http_response', { status_code: 99 }), 400, 'ERR_EP_6517', '99');
    await assertError(await api.post('/backends/http_response', { status_code: 600 }), 400, 'ERR_EP_6517', '600');
    await assertError(await api.post('/backends/http_response', { status_code: 200.5 }), 400, 'ERR_EP_215', 'status_code');
    await assertError(await api.post('/backends/http_response', { body: 'é'.repeat(70_000) }), 400, 'ERR_EP_6516');
    assert.equal((await api.get('/backends/http_response')).json.backends.length, 0);
  });

  it('static: host:port addresses with TLS, and clear errors for bad ones', async () => {
    const api = await h().newAccount();
    const b = await created(api, '/backends/static', { address: 'app.internal:8080', tls: { enabled: true } });
    assert.match(b.id, /^bkdsc_/);
    assert.deepEqual(b.tls, { enabled: true });
    assert.deepEqual((await created(api, '/backends/static', { address: '10.0.0.5:443', tls: {} })).tls, { enabled: false });
    assert.equal((await created(api, '/backends/static', { address: '[2001:db8::1]:443' })).address, '[2001:db8::1]:443');
    for (const address of ['app.internal', 'app.internal:0', 'app.internal:65536', ':80', 'a b:80', '[nope]:80', '300.1.1.1:80', '2001:db8::1:443']) {
      await assertError(await api.post('/backends/static', { address }), 400, 'ERR_EP_6505', address);
    }
    await assertError(await api.post('/backends/static', {}), 400, 'ERR_EP_215', 'address');
    const patched = await api.patch(`/backends/static/${b.id}`, { tls: { enabled: false } });
    assert.equal(patched.json.address, 'app.internal:8080');
    assert.deepEqual(patched.json.tls, { enabled: false });
  });

  it('failover: an ordered list of backends of the account, kept when a PATCH omits it', async () => {
    const api = await h().newAccount();
    const a = await tg(api);
    const b = await created(api, '/backends/static', { address: 'b:80' });
    const fo = await created(api, '/backends/failover', { backends: [b.id, a.id] });
    assert.match(fo.id, /^bkdfo_/);
    assert.deepEqual(fo.backends, [b.id, a.id]);
    assert.deepEqual((await api.get(`/backends/failover/${fo.id}`)).json.backends, [b.id, a.id]);
    assert.deepEqual((await api.patch(`/backends/failover/${fo.id}`, { metadata: 'x' })).json.backends, [b.id, a.id]);
    assert.deepEqual((await api.patch(`/backends/failover/${fo.id}`, { backends: [a.id] })).json.backends, [a.id]);
    assert.deepEqual((await api.patch(`/backends/failover/${fo.id}`, { backends: [] })).json.backends, []);
    await assertError(await api.post('/backends/failover', { backends: [a.id, a.id] }), 400, 'ERR_EP_6515', a.id);
  });

  it('weighted: a map of backend to weight, kept when a PATCH omits it (unlike the spec example)', async () => {
    const api = await h().newAccount();
    const a = await tg(api);
    const b = await tg(api, { app: 'canary' });
    const wd = await created(api, '/backends/weighted', { backends: { [a.id]: 9000, [b.id]: 1000 } });
    assert.match(wd.id, /^bkdwd_/);
    assert.deepEqual(wd.backends, { [a.id]: 9000, [b.id]: 1000 });
    const onlyMetadata = await api.patch(`/backends/weighted/${wd.id}`, { metadata: '{"rollout":"canary"}' });
    assert.deepEqual(onlyMetadata.json.backends, { [a.id]: 9000, [b.id]: 1000 });
    const reweighted = await api.patch(`/backends/weighted/${wd.id}`, { backends: { [a.id]: 0, [b.id]: 10000 } });
    assert.deepEqual(reweighted.json.backends, { [a.id]: 0, [b.id]: 10000 });
  });

  for (const [weight, code] of [
    [-1, 'ERR_EP_6512'],
    [10001, 'ERR_EP_6512'],
    [1.5, 'ERR_EP_215'],
    ['5', 'ERR_EP_215'],
  ] as const) {
    it(`weighted: refuses weight ${JSON.stringify(weight)} naming the value and the backend`, async () => {
      const api = await h().newAccount();
      const a = await tg(api);
      const res = await api.post('/backends/weighted', { backends: { [a.id]: weight } });
      await assertError(res, 400, code, a.id);
      assert.ok(res.json.msg.includes(String(weight)), res.json.msg);
      assert.equal((await api.get('/backends/weighted')).json.backends.length, 0);
    });
  }

  it('refuses 33 children, with the limit of 32 in the message', async () => {
    const api = await h().newAccount();
    const ids: string[] = [];
    for (let i = 0; i < 33; i++) ids.push((await created(api, '/backends/static', { address: `h${i}:80` })).id);
    await assertError(await api.post('/backends/weighted', { backends: Object.fromEntries(ids.map((id) => [id, 1])) }), 400, 'ERR_EP_6511', '32');
    await assertError(await api.post('/backends/failover', { backends: ids }), 400, 'ERR_EP_6511', '32');
    assert.equal((await created(api, '/backends/failover', { backends: ids.slice(0, 32) })).backends.length, 32);
  });

  it('refuses children of another account, with the wrong prefix, or missing, as 400 naming the id', async () => {
    const api = await h().newAccount();
    const other = await h().newAccount();
    const theirs = await tg(other);
    const ipp = (await api.post('/ip_policies', {})).json.id;
    for (const id of [theirs.id, ipp, 'bkdtg_000000000000000000000000000', 'garbage']) {
      await assertError(await api.post('/backends/failover', { backends: [id] }), 400, 'ERR_EP_6501', id);
      await assertError(await api.post('/backends/weighted', { backends: { [id]: 1 } }), 400, 'ERR_EP_6501', id);
    }
    assert.equal((await api.get('/backends/failover')).json.backends.length, 0);
    assert.equal((await other.get(`/backends/tunnel_group/${theirs.id}`)).status, 200);
  });

  it('refuses a self-reference and cycles through other backends, naming the cycle; nothing changes', async () => {
    const api = await h().newAccount();
    const leaf = await tg(api);
    const a = await created(api, '/backends/weighted', { backends: { [leaf.id]: 1 } });
    await assertError(await api.patch(`/backends/weighted/${a.id}`, { backends: { [a.id]: 1 } }), 400, 'ERR_EP_6530', `${a.id} → ${a.id}`);

    const b = await created(api, '/backends/failover', { backends: [a.id] });
    const abCycle = await api.patch(`/backends/weighted/${a.id}`, { backends: { [b.id]: 5, [leaf.id]: 5 } });
    await assertError(abCycle, 400, 'ERR_EP_6530', `${a.id} → ${b.id} → ${a.id}`);

    const c = await created(api, '/backends/weighted', { backends: { [b.id]: 1 } });
    await assertError(await api.patch(`/backends/weighted/${a.id}`, { backends: { [c.id]: 1 } }), 400, 'ERR_EP_6530', `${a.id} → ${c.id} → ${b.id} → ${a.id}`);
    assert.deepEqual((await api.get(`/backends/weighted/${a.id}`)).json.backends, { [leaf.id]: 1 }, 'the refused updates changed nothing');

    // A diamond is no cycle.
    const d = await created(api, '/backends/failover', { backends: [b.id, c.id] });
    assert.deepEqual(d.backends, [b.id, c.id]);
  });

  it('refuses to delete a backend that another backend uses, naming the users', async () => {
    const api = await h().newAccount();
    const leaf = await tg(api);
    const wd = await created(api, '/backends/weighted', { backends: { [leaf.id]: 1 } });
    const fo = await created(api, '/backends/failover', { backends: [leaf.id, wd.id] });
    const res = await api.delete(`/backends/tunnel_group/${leaf.id}`);
    await assertError(res, 409, 'ERR_EP_6502', leaf.id);
    assert.ok(res.json.msg.includes(wd.id) && res.json.msg.includes(fo.id), res.json.msg);
    await assertError(await api.delete(`/backends/weighted/${wd.id}`), 409, 'ERR_EP_6502', fo.id);
    assert.equal((await api.delete(`/backends/failover/${fo.id}`)).status, 204);
    assert.equal((await api.delete(`/backends/weighted/${wd.id}`)).status, 204);
    assert.equal((await api.delete(`/backends/tunnel_group/${leaf.id}`)).status, 204);
  });

  it("answers the wrong kind's path with 404: a static backend is not a tunnel group", async () => {
    const api = await h().newAccount();
    const s = await created(api, '/backends/static', { address: 'a:1' });
    assert.equal((await api.get(`/backends/tunnel_group/${s.id}`)).status, 404);
  });
});
