// The conventions every operation shares: version header, JSON bodies, error body, status
// codes, pagination, routing (404/405), CORS. Run against /api_keys as the representative.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachStore, rawRequest } from '../helpers/harness.js';

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function assertError(
  res: { status: number; json: { error_code: string; status_code: number; msg: string; details: { operation_id: string } }; headers: Headers },
  status: number,
  code: string,
) {
  assert.equal(res.status, status, JSON.stringify(res.json));
  assert.equal(res.json.error_code, code, res.json.msg);
  assert.equal(res.json.status_code, status);
  assert.equal(typeof res.json.msg, 'string');
  assert.match(res.json.details.operation_id, /^op_[0-9A-Za-z]{27}$/);
  assert.equal(res.headers.get('operation-id'), res.json.details.operation_id);
}

describeEachStore('conventions', (h) => {
  it('refuses a missing version header with ERR_EP_218 before checking credentials', async () => {
    const api = (await h().newAccount()).withToken(undefined);
    const res = await api.get('/api_keys', { noVersion: true });
    assertError(res, 400, 'ERR_EP_218');
  });

  it('refuses an unsupported version with ERR_EP_217 naming the supported one', async () => {
    const api = await h().newAccount();
    const res = await api.get('/api_keys', { headers: { 'Service-Version': '3' } });
    assertError(res, 400, 'ERR_EP_217');
    assert.match(res.json.msg, /Supported versions: 2/);
  });

  it('accepts Ngrok-Version as a synonym of Service-Version', async () => {
    const api = await h().newAccount();
    const res = await api.get('/api_keys', { noVersion: true, headers: { 'Ngrok-Version': '2' } });
    assert.equal(res.status, 200);
  });

  it('answers create 201, get/list/update 200 and delete 204 with an empty body', async () => {
    const api = await h().newAccount();
    const created = await api.post('/api_keys', { description: 'conv' });
    assert.equal(created.status, 201);
    assert.equal((await api.get(`/api_keys/${created.json.id}`)).status, 200);
    assert.equal((await api.get('/api_keys')).status, 200);
    assert.equal((await api.patch(`/api_keys/${created.json.id}`, { metadata: 'm' })).status, 200);
    const deleted = await api.delete(`/api_keys/${created.json.id}`);
    assert.equal(deleted.status, 204);
    assert.equal(deleted.text, '');
  });

  it('writes RFC 3339 times and absolute uris', async () => {
    const api = await h().newAccount();
    const created = await api.post('/api_keys', {});
    assert.match(created.json.created_at, RFC3339);
    assert.equal(created.json.uri, `${h().baseUrl}/api_keys/${created.json.id}`);
    assert.match(created.json.id, /^ak_[0-9A-Za-z]{27}$/);
  });

  it('refuses a body that is not application/json with 415', async () => {
    const api = await h().newAccount();
    const res = await api.post('/api_keys', undefined, { raw: 'description=x', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    assertError(res, 415, 'ERR_EP_210');
    const none = await api.post('/api_keys', undefined, { raw: '{}', headers: { 'Content-Type': undefined } });
    // fetch labels a string body text/plain when no type is given
    assert.equal(none.status, 415);
    const withCharset = await api.post('/api_keys', undefined, { raw: '{"description":"x"}', headers: { 'Content-Type': 'application/json; charset=utf-8' } });
    assert.equal(withCharset.status, 201);
  });

  it('refuses malformed JSON with ERR_EP_213 and writes nothing', async () => {
    const api = await h().newAccount();
    const res = await api.post('/api_keys', undefined, { raw: '{"description": ', headers: { 'Content-Type': 'application/json' } });
    assertError(res, 400, 'ERR_EP_213');
    const list = await api.get('/api_keys');
    assert.equal(list.json.keys.length, 1);
  });

  it('refuses invalid UTF-8 with ERR_EP_212', async () => {
    const api = await h().newAccount();
    const bytes = Buffer.concat([Buffer.from('{"description":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    const res = await api.post('/api_keys', undefined, { raw: bytes, headers: { 'Content-Type': 'application/json' } });
    assertError(res, 400, 'ERR_EP_212');
  });

  it('refuses the NUL character in any string, on every store alike', async () => {
    const api = await h().newAccount();
    const res = await api.post('/api_keys', { description: 'a\u0000b' });
    assertError(res, 400, 'ERR_EP_237');
    assert.match(res.json.msg, /'description'/);
    const escapedBackslash = await api.post('/api_keys', { description: 'C:\\u0000' });
    assert.equal(escapedBackslash.status, 201, 'a backslash followed by u0000 is no NUL');
  });

  it('refuses a body over 1 MiB with 413', async () => {
    const api = await h().newAccount();
    const res = await api.post('/api_keys', { description: 'x'.repeat(1024 * 1024) });
    assertError(res, 413, 'ERR_EP_219');
  });

  it('refuses a body that is not an object, and fields of the wrong type', async () => {
    const api = await h().newAccount();
    assertError(await api.post('/api_keys', [1, 2]), 400, 'ERR_EP_215');
    const wrongType = await api.post('/api_keys', { description: 12 });
    assertError(wrongType, 400, 'ERR_EP_215');
    assert.equal(wrongType.json.msg, "'description' must be a string; got the number 12.");
    assert.equal((await api.post('/api_keys', { description: null })).json.msg, "'description' must be a string; got null.");
    assert.equal((await api.post('/ip_policies', { metadata: ['x'] })).json.msg, "'metadata' must be a string; got an array.");
  });

  it('names a kind with the article that reads right', async () => {
    const api = await h().newAccount();
    const key = await api.post('/api_keys', { description: 'k' });
    const changed = await api.patch(`/api_keys/${key.json.id}`, { owner_id: api.info.userId });
    assertError(changed, 400, 'ERR_EP_251');
    assert.equal(changed.json.msg, "'owner_id' of an API key cannot be changed after creation; create a new one instead.");
  });

  it('refuses unknown body fields naming the field and the supported ones', async () => {
    const api = await h().newAccount();
    const res = await api.post('/api_keys', { description: 'x', colour: 'red' });
    assertError(res, 400, 'ERR_EP_214');
    assert.match(res.json.msg, /'colour'/);
    assert.match(res.json.msg, /description, metadata, owner_id/);
  });

  it('refuses unknown and repeated query parameters', async () => {
    const api = await h().newAccount();
    const unknown = await api.get('/api_keys?colour=red');
    assertError(unknown, 400, 'ERR_EP_231');
    assert.match(unknown.json.msg, /limit, before_id/);
    assertError(await api.get('/api_keys?limit=1&limit=2'), 400, 'ERR_EP_232');
    assertError(await api.get(`/api_keys/${api.info.keyId}?x=1`), 400, 'ERR_EP_231');
  });

  for (const limit of ['0', '101', 'abc', '1.5', '-1', '']) {
    it(`refuses limit=${limit} with ERR_EP_233`, async () => {
      const api = await h().newAccount();
      assertError(await api.get(`/api_keys?limit=${limit}`), 400, 'ERR_EP_233');
    });
  }

  it('refuses a before_id of another kind or malformed, and beforeId=garbage, with ERR_EP_234', async () => {
    const api = await h().newAccount();
    assertError(await api.get('/api_keys?before_id=bot_000000000000000000000000000'), 400, 'ERR_EP_234');
    assertError(await api.get('/api_keys?before_id=nonsense'), 400, 'ERR_EP_234');
    const camel = await api.get('/api_keys?beforeId=garbage');
    assertError(camel, 400, 'ERR_EP_234');
    assert.match(camel.json.msg, /^beforeId 'garbage'/, 'names the parameter the client sent');
  });

  it('refuses before_id and beforeId together with ERR_EP_238', async () => {
    const api = await h().newAccount();
    assertError(await api.get(`/api_keys?before_id=${api.info.keyId}&beforeId=${api.info.keyId}`), 400, 'ERR_EP_238');
  });

  it('accepts beforeId (the TypeScript client) as before_id', async () => {
    const api = await h().newAccount();
    const older = (await api.post('/api_keys', {})).json.id;
    const newer = (await api.post('/api_keys', {})).json.id;
    const viaCamel = await api.get(`/api_keys?beforeId=${newer}&limit=1`);
    const viaSnake = await api.get(`/api_keys?before_id=${newer}&limit=1`);
    assert.equal(viaCamel.status, 200);
    assert.deepEqual(
      viaCamel.json.keys.map((k: { id: string }) => k.id),
      [older],
    );
    assert.deepEqual(viaCamel.json, viaSnake.json);
  });

  it('takes before_id as a position: a deleted item is still a cursor, so list-delete-follow pages through everything', async () => {
    const api = await h().newAccount();
    for (let i = 0; i < 5; i++) await api.post('/api_keys', { description: `page ${i}` });
    const all = (await api.get('/api_keys')).json.keys.map((k: { id: string }) => k.id);
    const toDelete = all.filter((id: string) => id !== api.info.keyId);
    const seen: string[] = [];
    let next: string | null = '/api_keys?limit=2';
    while (next) {
      const page = await api.get(next);
      assert.equal(page.status, 200, page.text);
      for (const key of page.json.keys) {
        seen.push(key.id);
        if (key.id !== api.info.keyId) assert.equal((await api.delete(`/api_keys/${key.id}`)).status, 204);
      }
      next = page.json.next_page_uri;
    }
    assert.deepEqual(seen, all, 'every key was seen once, newest first, although each page was deleted before the next was read');
    for (const id of toDelete) assert.equal((await api.get(`/api_keys/${id}`)).status, 404);
  });

  it("learns nothing about another account from a cursor: its id is only a position among this account's ids", async () => {
    const api = await h().newAccount();
    const mine = [(await api.post('/api_keys', {})).json.id];
    const other = await h().newAccount();
    const foreign = (await other.post('/api_keys', {})).json.id;
    mine.push((await api.post('/api_keys', {})).json.id);
    // A made-up id just after the foreign one in id order answers exactly the same page.
    // The neighbouring base62 digit (0-9A-Za-z, which is also byte order) keeps the id well formed.
    const digits = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
    const at = digits.indexOf(foreign.at(-1));
    const madeUp = foreign.slice(0, -1) + digits[at === digits.length - 1 ? at - 1 : at + 1];
    const byForeign = await api.get(`/api_keys?before_id=${foreign}`);
    const byMadeUp = await api.get(`/api_keys?before_id=${madeUp}`);
    assert.equal(byForeign.status, 200);
    const older = byForeign.json.keys.map((k: { id: string }) => k.id);
    assert.ok(
      older.every((id: string) => id < foreign),
      'only older ids of this account',
    );
    assert.ok(!older.includes(foreign) && older.includes(mine[0]) && !older.includes(mine[1]));
    assert.deepEqual(byMadeUp.json.keys, byForeign.json.keys);
    assert.equal(byMadeUp.json.next_page_uri, byForeign.json.next_page_uri);
  });

  it('accepts the path id in the body of an update, as every official client sends it, and refuses another with ERR_EP_255', async () => {
    const api = await h().newAccount();
    const key = (await api.post('/api_keys', { description: 'before' })).json;
    const same = await api.patch(`/api_keys/${key.id}`, { id: key.id, description: 'after' });
    assert.equal(same.status, 200, same.text);
    assert.equal(same.json.description, 'after');
    const other = (await api.post('/api_keys', {})).json.id;
    const mismatch = await api.patch(`/api_keys/${key.id}`, { id: other, description: 'hijack' });
    assertError(mismatch, 400, 'ERR_EP_255');
    assert.ok(mismatch.json.msg.includes(other) && mismatch.json.msg.includes(key.id), 'names both ids');
    assert.equal((await api.get(`/api_keys/${key.id}`)).json.description, 'after', 'nothing written');
    assert.equal((await api.get(`/api_keys/${other}`)).json.description, '', 'nothing written to the other');
    assertError(await api.patch(`/api_keys/${key.id}`, { id: key.id }), 400, 'ERR_EP_250');
  });

  it('pages newest first with limit, before_id and next_page_uri', async () => {
    const api = await h().newAccount();
    const ids = [api.info.keyId];
    for (let i = 0; i < 4; i++) ids.push((await api.post('/api_keys', { description: `k${i}` })).json.id);
    const newestFirst = [...ids].reverse();

    const first = await api.get('/api_keys?limit=2');
    assert.deepEqual(
      first.json.keys.map((k: { id: string }) => k.id),
      newestFirst.slice(0, 2),
    );
    assert.equal(first.json.uri, `${h().baseUrl}/api_keys`);
    assert.equal(first.json.next_page_uri, `${h().baseUrl}/api_keys?before_id=${newestFirst[1]}&limit=2`);

    const second = await api.get(first.json.next_page_uri);
    assert.deepEqual(
      second.json.keys.map((k: { id: string }) => k.id),
      newestFirst.slice(2, 4),
    );
    const third = await api.get(second.json.next_page_uri);
    assert.deepEqual(
      third.json.keys.map((k: { id: string }) => k.id),
      newestFirst.slice(4),
    );
    assert.equal(third.json.next_page_uri, null);

    const exact = await api.get('/api_keys?limit=5');
    assert.equal(exact.json.keys.length, 5);
    assert.equal(exact.json.next_page_uri, null, 'no next page when nothing older exists');
  });

  it('answers an unknown path with 404 and a wrong method with 405 and Allow', async () => {
    const api = await h().newAccount();
    assertError(await api.get('/no_such_thing'), 404, 'ERR_EP_253');
    const wrong = await api.put('/api_keys', {});
    assertError(wrong, 405, 'ERR_EP_254');
    assert.equal(wrong.headers.get('allow'), 'GET, HEAD, POST, OPTIONS');
    const wrongItem = await api.post(`/api_keys/${api.info.keyId}`, {});
    assertError(wrongItem, 405, 'ERR_EP_254');
    assert.equal(wrongItem.headers.get('allow'), 'GET, HEAD, PATCH, DELETE, OPTIONS');
  });

  it('answers ids with the wrong prefix, malformed ids and unknown ids with 404', async () => {
    const api = await h().newAccount();
    assertError(await api.get('/api_keys/bot_000000000000000000000000000'), 404, 'ERR_EP_222');
    assertError(await api.get('/api_keys/100'), 404, 'ERR_EP_222');
    assertError(await api.get('/api_keys/ak_000000000000000000000000000'), 404, 'ERR_EP_252');
    assertError(await api.get(`/api_keys/ak_${'x'.repeat(300)}`), 404, 'ERR_EP_252');
    assertError(await api.get('/api_keys/%zz'), 400, 'ERR_EP_230');
  });

  it('answers HTTP it cannot parse with the error body', async () => {
    const { port } = new URL(h().baseUrl);
    const net = await import('node:net');
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1', () => socket.write('GET /api_keys HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n'));
      let out = '';
      socket.on('data', (c) => (out += c));
      socket.on('end', () => resolve(out));
      socket.on('error', reject);
    });
    assert.match(raw, /^HTTP\/1.1 400 /);
    const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
    assert.equal(body.error_code, 'ERR_EP_230');
    assert.match(body.details.operation_id, /^op_/);
  });

  it('answers a CORS preflight without credentials', async () => {
    const api = (await h().newAccount()).withToken(undefined);
    const res = await api.request('OPTIONS', '/api_keys', {
      noVersion: true,
      headers: {
        Origin: 'https://console.example.com',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization, content-type',
      },
    });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), 'https://console.example.com');
    assert.equal(res.headers.get('access-control-allow-methods'), 'GET, HEAD, POST, OPTIONS');
    assert.equal(res.headers.get('access-control-allow-headers'), 'authorization, content-type');
    assert.equal(res.headers.get('access-control-max-age'), '600');
  });

  it('refuses a body on GET and on DELETE, and ignores an empty one', async () => {
    const api = await h().newAccount();
    assertError(await api.request('DELETE', `/api_keys/${api.info.keyId}`, { body: { x: 1 } }), 400, 'ERR_EP_211');
    // fetch cannot send a GET body; node:http can.
    assertError(
      await rawRequest(
        h().baseUrl,
        'GET',
        '/api_keys',
        { 'Service-Version': '2', Authorization: `Bearer ${api.token}`, 'Content-Type': 'application/json' },
        '{"x":1}',
      ),
      400,
      'ERR_EP_211',
    );
    const key = await api.post('/api_keys', {});
    const emptyDelete = await api.request('DELETE', `/api_keys/${key.json.id}`, { raw: '', headers: { 'Content-Type': 'text/plain' } });
    assert.equal(emptyDelete.status, 204);
  });

  it('treats a POST with no body as an empty object', async () => {
    const api = await h().newAccount();
    const res = await api.request('POST', '/api_keys');
    assert.equal(res.status, 201);
    assert.equal(res.json.description, '');
  });

  it('serves the OpenAPI document without credentials', async () => {
    const api = (await h().newAccount()).withToken(undefined);
    const res = await api.get('/openapi.json', { noVersion: true });
    assert.equal(res.status, 200);
    assert.equal(res.json.openapi, '3.1.0');
  });
});
