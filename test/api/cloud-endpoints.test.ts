// Cloud endpoints through the API, on each store: the shape of one and the list beside the
// agents' endpoints, URL rules (reserved domain or under a wildcard one, one cloud endpoint per
// URL, http/https/tcp only, no .internal host), the traffic policy check (forward-internal's URL
// included), PATCH (policy, URL, description) and DELETE, the in-use rules (a domain a cloud
// endpoint serves: 446; an IP policy its policy names), an agent's endpoint refused for PATCH and
// DELETE, other accounts' ids not found, read-only users, and one audit event per change. TCP
// cloud endpoints: a reserved address of the account (not a TCP edge's: 409 either way; not
// deletable while served: 520), an on_tcp_connect policy (forward-internal to tcp://x.internal:port).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { it } from 'node:test';
import { newId } from '../../src/core/ids.js';
import { describeEachStore, type Api, type Harness } from '../helpers/harness.js';
import { assertError, created } from '../helpers/assertions.js';
import { seedLiveSession } from '../helpers/live-agents.js';

const KEYS =
  'bindings created_at description domain hostport id metadata pooling_enabled proto public_url region tcp_addr traffic_policy tunnel type updated_at uri url'.split(
    ' ',
  );
const FORWARD = JSON.stringify({ on_http_request: [{ actions: [{ type: 'forward-internal', config: { url: 'https://svc.internal' } }] }] });
const DENY = 'on_http_request:\n  - actions:\n      - type: deny\n        config:\n          status_code: 404\n';

/** A 400 of the traffic policy checker (its codes are ERR_EP_22xx), mentioning `mentions`. */
function policyRefused(res: { status: number; json: { error_code: string; msg: string } }, mentions?: string): void {
  assert.equal(res.status, 400, JSON.stringify(res.json));
  assert.match(res.json.error_code, /^ERR_EP_22\d\d$/, res.json.msg);
  if (mentions !== undefined) assert.ok(res.json.msg.includes(mentions), `${res.json.msg} should mention ${mentions}`);
}

const TCP_FORWARD = JSON.stringify({ on_tcp_connect: [{ actions: [{ type: 'forward-internal', config: { url: 'tcp://db.internal:5432' } }] }] });

const unique = () => `${randomBytes(5).toString('hex')}.example.com`;
const domain = async (api: Api, name: string) => (await created(api, '/reserved_domains', { domain: name })).id as string;
const endpoint = (api: Api, body: Record<string, unknown>) => created(api, '/endpoints', { type: 'cloud', traffic_policy: FORWARD, ...body });

describeEachStore('cloud endpoints', (h: () => Harness) => {
  it('creates a cloud endpoint with every key; GET and the list show it beside an agent endpoint', async () => {
    const api = await h().newAccount();
    const name = unique();
    const rd = await domain(api, name);
    const e = await endpoint(api, { url: `https://${name}:443`, description: 'cloud', metadata: '{"env":"prod"}', bindings: ['public'] });
    assert.match(e.id, /^ep_/);
    assert.deepEqual(Object.keys(e).sort(), KEYS);
    assert.equal(e.uri, `${h().baseUrl}/endpoints/${e.id}`);
    assert.equal(e.type, 'cloud');
    assert.equal(e.url, `https://${name}`);
    assert.equal(e.public_url, `https://${name}`);
    assert.equal(e.hostport, `${name}:443`);
    assert.equal(e.proto, 'https');
    assert.equal(e.traffic_policy, FORWARD);
    assert.deepEqual(e.bindings, ['public']);
    assert.equal(e.pooling_enabled, false);
    assert.deepEqual(e.domain, { id: rd, uri: `${h().baseUrl}/reserved_domains/${rd}` });
    assert.equal(e.tunnel, null);
    assert.equal(e.description, 'cloud');
    assert.equal(e.metadata, '{"env":"prod"}');
    assert.equal(e.created_at, e.updated_at);
    assert.deepEqual((await api.get(`/endpoints/${e.id}`)).json, e);

    const { bound } = await seedLiveSession(h().deps.store, api.info.accountId);
    const list = (await api.get('/endpoints')).json.endpoints as Record<string, unknown>[];
    assert.deepEqual(list.map((x) => x.id).sort(), [e.id, bound.endpoint!.id].sort());
    const agents = list.find((x) => x.type === 'ephemeral')!;
    assert.deepEqual(Object.keys(agents).sort(), KEYS);
    assert.deepEqual(agents.bindings, ['public']);
    assert.equal(agents.traffic_policy, '');
    assert.deepEqual(
      list.find((x) => x.type === 'cloud'),
      e,
    );
    // Pages hold both kinds, in id order.
    const first = (await api.get('/endpoints?limit=1')).json;
    assert.equal(first.endpoints.length, 1);
    assert.ok(first.next_page_uri);
    const second = (await api.get(`/endpoints?limit=1&before_id=${first.endpoints[0].id}`)).json;
    assert.equal(second.endpoints.length, 1);
    assert.notEqual(second.endpoints[0].id, first.endpoints[0].id);
  });

  it('takes http:// URLs, YAML policies, and names under a wildcard domain (nested too)', async () => {
    const api = await h().newAccount();
    const base = unique();
    const rd = await domain(api, `*.${base}`);
    const a = await endpoint(api, { url: `http://app.${base}`, traffic_policy: DENY });
    assert.equal(a.proto, 'http');
    assert.equal(a.hostport, `app.${base}:80`);
    assert.equal(a.domain.id, rd);
    assert.equal(a.traffic_policy, DENY);
    const nested = await endpoint(api, { url: `https://a.b.${base}` });
    assert.equal(nested.domain.id, rd);
    // The same name over both schemes: two URLs.
    await endpoint(api, { url: `https://app.${base}` });
  });

  it('refuses bad URLs with a clear 400 and writes nothing', async () => {
    const api = await h().newAccount();
    const name = unique();
    await domain(api, name);
    const cases: [unknown, string, string | RegExp][] = [
      [`ftp://${name}`, 'ERR_EP_18001', "scheme 'ftp'"],
      [`https://${name}/path`, 'ERR_EP_18001', 'no path'],
      [`https://${name}:8443`, 'ERR_EP_18001', 'names no port but 443'],
      [`https://bad_name!.com`, 'ERR_EP_18001', 'not a domain name'],
      [`tls://${name}`, 'ERR_EP_18002', 'tls endpoint'],
      [`https://svc.internal`, 'ERR_EP_18005', 'internal'],
      [`https://other.${name}`, 'ERR_EP_18003', `'other.${name}' is not one of this account's reserved domains`],
      [`https://${unique()}`, 'ERR_EP_18003', 'reserve it first'],
    ];
    for (const [url, code, mentions] of cases) assertError(await api.post('/endpoints', { type: 'cloud', url, traffic_policy: FORWARD }), 400, code, mentions);
    assertError(await api.post('/endpoints', { url: `https://${name}`, traffic_policy: FORWARD, type: 'ephemeral' }), 400, 'ERR_EP_215', 'cloud');
    assertError(await api.post('/endpoints', { url: `https://${name}`, traffic_policy: FORWARD, bindings: ['internal'] }), 400, 'ERR_EP_18006');
    assert.equal((await api.post('/endpoints', { url: `https://${name}` })).status, 400, 'traffic_policy is required');
    assert.deepEqual((await api.get('/endpoints')).json.endpoints, []);
  });

  it("another account's domain is not this account's; one cloud endpoint per URL (409 naming it)", async () => {
    const api = await h().newAccount();
    const other = await h().newAccount();
    const name = unique();
    await domain(other, name);
    assertError(await api.post('/endpoints', { url: `https://${name}`, traffic_policy: FORWARD }), 400, 'ERR_EP_18003');
    const e = await endpoint(other, { url: `https://${name}` });
    assertError(await other.post('/endpoints', { url: `https://${name}`, traffic_policy: FORWARD }), 409, 'ERR_EP_18004', e.id);
    // Concurrent creates of one URL: exactly one is made.
    const name2 = unique();
    await domain(api, name2);
    const answers = await Promise.all(Array.from({ length: 5 }, () => api.post('/endpoints', { url: `https://${name2}`, traffic_policy: FORWARD })));
    assert.deepEqual(answers.map((r) => r.status).sort(), [201, 409, 409, 409, 409]);
  });

  it('checks the traffic policy: it must compile, and forward-internal takes an internal URL', async () => {
    const api = await h().newAccount();
    const name = unique();
    await domain(api, name);
    const post = (traffic_policy: string) => api.post('/endpoints', { url: `https://${name}`, traffic_policy });
    const fi = (config: unknown) => JSON.stringify({ on_http_request: [{ actions: [{ type: 'forward-internal', config }] }] });
    policyRefused(await post(fi({ url: 'https://svc.example.com' })), 'ending in .internal');
    policyRefused(await post(fi({ url: 'tcp://svc.internal:80' })), 'only http and https');
    policyRefused(await post(fi({ url: 'https://svc.internal/path' })), 'no path');
    policyRefused(await post(fi({})), 'url');
    policyRefused(await post(fi({ url: 'https://svc.internal', on_error: 'continue' })), 'on_error');
    policyRefused(await post('{"on_http_request": [{"expressions": ["req.nope == 1"], "actions": [{"type": "deny"}]}]}'));
    policyRefused(await post('on_tcp_connect: []'));
    policyRefused(await post('{'));
    policyRefused(
      await post(JSON.stringify({ on_http_response: [{ actions: [{ type: 'forward-internal', config: { url: 'https://svc.internal' } }] }] })),
      'not allowed here',
    );
    assert.equal((await post(fi({ url: 'http://svc.internal', binding: 'internal', on_error: 'halt' }))).status, 201);
  });

  it('PATCH changes the policy, URL, description and bindings; DELETE removes it', async () => {
    const api = await h().newAccount();
    const a = unique();
    const b = unique();
    await domain(api, a);
    const rdB = await domain(api, b);
    const e = await endpoint(api, { url: `https://${a}` });
    const changed = await api.patch(`/endpoints/${e.id}`, { id: e.id, traffic_policy: DENY, description: 'now', url: `https://${b}` });
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.json.traffic_policy, DENY);
    assert.equal(changed.json.description, 'now');
    assert.equal(changed.json.url, `https://${b}`);
    assert.equal(changed.json.domain.id, rdB);
    assert.equal(changed.json.metadata, '');
    assert.ok(changed.json.updated_at >= e.updated_at);
    assert.deepEqual((await api.get(`/endpoints/${e.id}`)).json, changed.json);
    policyRefused(await api.patch(`/endpoints/${e.id}`, { traffic_policy: 'on_http_request: 3' }));
    assertError(await api.patch(`/endpoints/${e.id}`, { url: `https://${unique()}` }), 400, 'ERR_EP_18003');
    assertError(await api.patch(`/endpoints/${e.id}`, { type: 'cloud' }), 400, 'ERR_EP_214');
    assert.equal((await api.get(`/endpoints/${e.id}`)).json.url, `https://${b}`, 'a refused PATCH changes nothing');
    // The freed domain can go; the one it serves cannot (446).
    assert.equal(
      (await api.delete(`/reserved_domains/${(await api.get('/reserved_domains')).json.reserved_domains.find((d: { domain: string }) => d.domain === a).id}`))
        .status,
      204,
    );
    assertError(await api.delete(`/reserved_domains/${rdB}`), 409, 'ERR_EP_446', e.id);
    assert.equal((await api.delete(`/endpoints/${e.id}`)).status, 204);
    assert.equal((await api.get(`/endpoints/${e.id}`)).status, 404);
    assert.equal((await api.delete(`/endpoints/${e.id}`)).status, 404);
    assert.equal((await api.delete(`/reserved_domains/${rdB}`)).status, 204);
    const audit = ((await api.get('/audit_events')).json.audit_events as { operation_id?: string; operation?: string }[]).map(
      (x) => x.operation_id ?? x.operation,
    );
    for (const op of ['endpoint.create', 'endpoint.update', 'endpoint.delete']) assert.ok(audit.includes(op), `${op} in ${audit.join(', ')}`);
  });

  it('an IP policy that a cloud endpoint policy names must exist, and cannot be deleted while named', async () => {
    const api = await h().newAccount();
    const name = unique();
    await domain(api, name);
    const ipp = (await created(api, '/ip_policies', {})).id as string;
    const restrict = (id: string) => JSON.stringify({ on_http_request: [{ actions: [{ type: 'restrict-ips', config: { ip_policies: [id] } }] }] });
    assertError(await api.post('/endpoints', { url: `https://${name}`, traffic_policy: restrict(newId('ipp')) }), 400, 'ERR_EP_1402');
    const e = await endpoint(api, { url: `https://${name}`, traffic_policy: restrict(ipp) });
    assert.equal((await api.delete(`/ip_policies/${ipp}`)).status, 409);
    await api.patch(`/endpoints/${e.id}`, { traffic_policy: FORWARD });
    assert.equal((await api.delete(`/ip_policies/${ipp}`)).status, 204);
  });

  it("refuses PATCH and DELETE of an agent's endpoint (400), and 404s other accounts' ids and read-only writes are 403", async () => {
    const api = await h().newAccount();
    const { bound } = await seedLiveSession(h().deps.store, api.info.accountId);
    const ephemeral = bound.endpoint!.id;
    assertError(await api.patch(`/endpoints/${ephemeral}`, { description: 'x' }), 400, 'ERR_EP_18007', 'ephemeral');
    assertError(await api.delete(`/endpoints/${ephemeral}`), 400, 'ERR_EP_18007');

    const name = unique();
    await domain(api, name);
    const e = await endpoint(api, { url: `https://${name}` });
    const other = await h().newAccount();
    for (const id of [e.id, ephemeral]) {
      assert.equal((await other.get(`/endpoints/${id}`)).status, 404);
      assert.equal((await other.patch(`/endpoints/${id}`, { description: 'x' })).status, 404);
      assert.equal((await other.delete(`/endpoints/${id}`)).status, 404);
    }
    assert.deepEqual((await other.get('/endpoints')).json.endpoints, []);
    const readOnly = await api.asNewUser('read_only');
    assert.equal((await readOnly.get(`/endpoints/${e.id}`)).status, 200);
    assert.equal((await readOnly.patch(`/endpoints/${e.id}`, { description: 'x' })).status, 403);
    assert.equal((await readOnly.delete(`/endpoints/${e.id}`)).status, 403);
    assert.equal((await readOnly.post('/endpoints', { url: `https://x.${name}`, traffic_policy: FORWARD })).status, 403);
  });

  it('tcp:// cloud endpoints serve a reserved address of the account with an on_tcp_connect policy; bad URLs and policies are 400', async () => {
    const api = await h().newAccount();
    const addr = await created(api, '/reserved_addrs', {});
    const e = await endpoint(api, { url: `TCP://${String(addr.addr).toUpperCase()}`, traffic_policy: TCP_FORWARD });
    assert.deepEqual(Object.keys(e).sort(), KEYS);
    assert.equal(e.url, `tcp://${addr.addr}`);
    assert.equal(e.public_url, `tcp://${addr.addr}`);
    assert.equal(e.proto, 'tcp');
    assert.equal(e.hostport, addr.addr);
    assert.deepEqual(e.tcp_addr, { id: addr.id, uri: `${h().baseUrl}/reserved_addrs/${addr.id}` });
    assert.equal(e.domain, null);
    assert.deepEqual(e.bindings, ['public']);
    assert.deepEqual((await api.get(`/endpoints/${e.id}`)).json, e);
    assertError(await api.post('/endpoints', { url: `tcp://${addr.addr}`, traffic_policy: TCP_FORWARD }), 409, 'ERR_EP_18004', e.id);

    const free = await created(api, '/reserved_addrs', {});
    const [host, port] = String(free.addr).split(':');
    const other = await h().newAccount();
    const theirs = await created(other, '/reserved_addrs', {});
    const cases: [string, number, string, string][] = [
      [`tcp://${host}`, 400, 'ERR_EP_18001', 'tcp://host:port'],
      [`tcp://${host}:0`, 400, 'ERR_EP_18001', 'tcp://host:port'],
      [`tcp://${host}:${port}/x`, 400, 'ERR_EP_18001', 'no path'],
      [`tcp://db.internal:5432`, 400, 'ERR_EP_18005', 'internal'],
      [`tcp://${host}:1`, 400, 'ERR_EP_18008', `'${host}:1' is not one of this account's reserved addresses`],
      [`tcp://${theirs.addr}`, 400, 'ERR_EP_18008', 'POST /reserved_addrs'],
      [`tls://${host}:443`, 400, 'ERR_EP_18002', 'tls endpoint'],
    ];
    for (const [url, status, code, mentions] of cases) assertError(await api.post('/endpoints', { url, traffic_policy: TCP_FORWARD }), status, code, mentions);

    // The policy is checked for TCP: its phase, its actions, forward-internal's tcp URL.
    const post = (traffic_policy: string) => api.post('/endpoints', { url: `tcp://${free.addr}`, traffic_policy });
    const connect = (...actions: unknown[]) => JSON.stringify({ on_tcp_connect: [{ actions }] });
    policyRefused(await post(FORWARD), 'on_http_request');
    policyRefused(await post(connect({ type: 'forward-internal', config: { url: 'https://svc.internal' } })), 'internal TCP URL');
    policyRefused(await post(connect({ type: 'forward-internal', config: { url: 'tcp://svc.internal' } })), 'internal TCP URL');
    policyRefused(await post(connect({ type: 'forward-internal', config: { url: 'tcp://svc.example.com:80' } })), 'internal TCP URL');
    policyRefused(await post(connect({ type: 'add-headers', config: { headers: { a: 'b' } } })), 'add-headers');
    policyRefused(await post(connect({ type: 'close-connection', config: { status_code: 403 } })), 'status_code');
    const full = connect(
      { type: 'log', config: { metadata: { who: '${conn.client_ip}' } } },
      { type: 'restrict-ips', config: { deny: ['192.0.2.0/24'] } },
      { type: 'forward-internal', config: { url: 'tcp://DB.internal:5432', binding: 'internal', on_error: 'halt' } },
    );
    const ok = await post(full);
    assert.equal(ok.status, 201, ok.text);
    const denying = JSON.stringify({
      on_tcp_connect: [{ expressions: ["conn.client_ip == '192.0.2.1'"], actions: [{ type: 'deny' }, { type: 'close-connection' }] }],
    });
    assert.equal((await api.patch(`/endpoints/${ok.json.id}`, { traffic_policy: denying })).status, 200);
    // An HTTP policy does not fit a TCP endpoint, nor a TCP one an HTTPS URL.
    policyRefused(await api.patch(`/endpoints/${ok.json.id}`, { traffic_policy: FORWARD }));
    const name = unique();
    await domain(api, name);
    policyRefused(await api.patch(`/endpoints/${ok.json.id}`, { url: `https://${name}` }), 'on_tcp_connect');
    const moved = await api.patch(`/endpoints/${ok.json.id}`, { url: `https://${name}`, traffic_policy: FORWARD });
    assert.equal(moved.status, 200, moved.text);
    assert.equal(moved.json.tcp_addr, null);
    assert.equal(moved.json.proto, 'https');
    assert.equal(moved.json.domain.uri.endsWith('/reserved_domains/' + moved.json.domain.id), true);
  });

  it('a reserved address a TCP cloud endpoint serves cannot be deleted (520); an edge and an endpoint never share an address (409)', async () => {
    const api = await h().newAccount();
    const addr = await created(api, '/reserved_addrs', {});
    const e = await endpoint(api, { url: `tcp://${addr.addr}`, traffic_policy: TCP_FORWARD });
    assertError(await api.delete(`/reserved_addrs/${addr.id}`), 409, 'ERR_EP_520', e.id);
    assertError(await api.post('/edges/tcp', { hostports: [addr.addr] }), 409, 'ERR_EP_18011', e.id);
    // An endpoint configuration is not attached to it, nor is one with a configuration taken.
    const tcpConfiguration = (await created(api, '/endpoint_configurations', { type: 'tcp' })).id as string;
    assertError(await api.patch(`/reserved_addrs/${addr.id}`, { endpoint_configuration_id: tcpConfiguration }), 409, 'ERR_EP_520', e.id);
    const configured = await created(api, '/reserved_addrs', {});
    assert.equal((await api.patch(`/reserved_addrs/${configured.id}`, { endpoint_configuration_id: tcpConfiguration })).status, 200);
    assertError(await api.post('/endpoints', { url: `tcp://${configured.addr}`, traffic_policy: TCP_FORWARD }), 400, 'ERR_EP_18009', configured.id);

    const edged = await created(api, '/reserved_addrs', {});
    const edge = await created(api, '/edges/tcp', { hostports: [edged.addr] });
    assertError(await api.post('/endpoints', { url: `tcp://${edged.addr}`, traffic_policy: TCP_FORWARD }), 409, 'ERR_EP_18010', edge.id);
    assertError(await api.patch(`/endpoints/${e.id}`, { url: `tcp://${edged.addr}` }), 409, 'ERR_EP_18010', edge.id);
    assertError(await api.patch(`/edges/tcp/${edge.id}`, { hostports: [edged.addr, addr.addr] }), 409, 'ERR_EP_18011');

    // Moved to a free address: the first one is free to go.
    const next = await created(api, '/reserved_addrs', {});
    const moved = await api.patch(`/endpoints/${e.id}`, { url: `tcp://${next.addr}` });
    assert.equal(moved.status, 200, moved.text);
    assert.equal(moved.json.tcp_addr.id, next.id);
    assert.equal((await api.delete(`/reserved_addrs/${addr.id}`)).status, 204);
    assertError(await api.delete(`/reserved_addrs/${next.id}`), 409, 'ERR_EP_520');
    assert.equal((await api.delete(`/endpoints/${e.id}`)).status, 204);
    assert.equal((await api.delete(`/reserved_addrs/${next.id}`)).status, 204);
  });
});
