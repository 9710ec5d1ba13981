// Hostile bodies and values: nesting deep enough to overflow a recursive walk, impossible or
// out-of-range certificate times, lax query numbers, lone UTF-16 surrogates and the keys that
// name a JavaScript object's prototype. Each is a 400 with the catalogue body, never a 500.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { it } from 'node:test';
import { describeEachStore, type Api, type Response } from '../helpers/harness.js';

/** The documented nesting limit (docs/errors.md, ERR_EP_270). */
const MAX_BODY_DEPTH = 64;

function assertError(res: Response, status: number, code: string, message?: RegExp, what = ''): void {
  assert.equal(res.status, status, `${what}: ${res.text.slice(0, 300)}`);
  assert.equal(res.json.error_code, code, `${what}: ${res.json.msg}`);
  assert.equal(res.json.status_code, status);
  assert.match(res.json.details.operation_id, /^op_/);
  if (message) assert.match(res.json.msg, message, what);
}

/** Sends `text` as the JSON body as is (JSON.stringify could not write some of these). */
function sendRaw(api: Api, method: string, path: string, text: string): Promise<Response> {
  return api.request(method, path, { raw: text, headers: { 'Content-Type': 'application/json' } });
}

const deepArray = (depth: number, inner = '1') => '['.repeat(depth) + inner + ']'.repeat(depth);
const deepObject = (depth: number, inner = '1') => '{"a":'.repeat(depth) + inner + '}'.repeat(depth);

/** An OpenSSH authorized-keys line for a fresh Ed25519 key, made without ssh-keygen. */
function ed25519PublicKey(): string {
  const raw = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  const sshString = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, b.length]), b]);
  return `ssh-ed25519 ${Buffer.concat([sshString(Buffer.from('ssh-ed25519')), sshString(raw)]).toString('base64')} hostile`;
}

describeEachStore('hostile bodies and values', (h) => {
  it(`refuses bodies nested deeper than ${MAX_BODY_DEPTH} levels on POST and PATCH with a 400 naming the limit, and keeps serving`, async () => {
    const api = await h().newAccount();
    const policy = (await api.post('/ip_policies', {})).json;
    const N = 100_000;
    const bodies: [string, string][] = [
      ['a bare array', deepArray(N)],
      ['an array in a field', `{"description":${deepArray(N)}}`],
      ['an object in a field', `{"description":${deepObject(N)}}`],
      ['a bare object', deepObject(N)],
      ['an array holding a NUL at the bottom', deepArray(N, '"\\u0000"')],
      ['an array with brackets in strings', `{"description":${deepArray(N, '"]]]}}}"')}}`],
    ];
    for (const [what, text] of bodies) {
      assert.ok(Buffer.byteLength(text) < 1024 * 1024, 'under the body limit');
      for (const [method, path] of [
        ['POST', '/ip_policies'],
        ['PATCH', `/ip_policies/${policy.id}`],
      ] as const) {
        const res = await sendRaw(api, method, path, text);
        assertError(res, 400, 'ERR_EP_270', new RegExp(`\\b${MAX_BODY_DEPTH}\\b`), `${method} ${what}`);
      }
    }
    assert.equal((await api.get('/ip_policies')).status, 200, 'still serving');
    assert.equal((await api.get(`/ip_policies/${policy.id}`)).json.description, '', 'nothing was written');
  });

  it('accepts nesting just at the limit as far as depth goes, and counts brackets inside strings as text', async () => {
    const api = await h().newAccount();
    // The body is level 1, so the description's value holds MAX_BODY_DEPTH - 1 levels.
    const atLimit = await sendRaw(api, 'POST', '/ip_policies', `{"description":${deepArray(MAX_BODY_DEPTH - 1)}}`);
    assertError(atLimit, 400, 'ERR_EP_215', /description/, 'at the limit: only the type is wrong');
    const over = await sendRaw(api, 'POST', '/ip_policies', `{"description":${deepArray(MAX_BODY_DEPTH)}}`);
    assertError(over, 400, 'ERR_EP_270', undefined, 'one past the limit');
    const bracketsInText = await api.post('/ip_policies', { description: '['.repeat(200), metadata: '{"a":'.repeat(500) });
    assert.equal(bracketsInText.status, 201, bracketsInText.text);
    const escapedQuote = await api.post('/ip_policies', { description: `\\"${'['.repeat(100)}` });
    assert.equal(escapedQuote.status, 201, escapedQuote.text);
  });

  it('refuses SSH certificate times that do not exist or that a certificate cannot hold', async () => {
    const api = await h().newAccount();
    const ca = (await api.post('/ssh_certificate_authorities', {})).json;
    const base = { ssh_certificate_authority_id: ca.id, public_key: ed25519PublicKey() };
    const refused: [Record<string, string>, string, RegExp][] = [
      [{ valid_after: '1969-12-31T23:59:59Z' }, 'ERR_EP_215', /valid_after.*1970-01-01T00:00:00Z/],
      [{ valid_after: '0000-01-01T00:00:00Z' }, 'ERR_EP_215', /valid_after/],
      [{ valid_after: '1970-01-01T00:30:00+01:00' }, 'ERR_EP_215', /valid_after/],
      [{ valid_after: '2026-02-30T00:00:00Z' }, 'ERR_EP_241', /valid_after '2026-02-30T00:00:00Z'/],
      [{ valid_after: '2025-02-29T00:00:00Z' }, 'ERR_EP_241', /2025-02-29/],
      [{ valid_after: '2026-04-31T00:00:00Z' }, 'ERR_EP_241', /2026-04-31/],
      [{ valid_after: '2026-13-01T00:00:00Z' }, 'ERR_EP_241', /2026-13-01/],
      [{ valid_after: '2026-00-10T00:00:00Z' }, 'ERR_EP_241', /2026-00-10/],
      [{ valid_after: '2026-01-00T00:00:00Z' }, 'ERR_EP_241', /2026-01-00/],
      [{ valid_after: '2026-01-01T24:00:00Z' }, 'ERR_EP_241', /T24:00/],
      [{ valid_after: '2026-01-01T00:00:00+24:00' }, 'ERR_EP_241', /\+24:00/],
      [{ valid_until: '2026-06-31T00:00:00Z' }, 'ERR_EP_241', /valid_until '2026-06-31/],
      // Four-digit years end here; the certificate's unsigned 64-bit seconds would go further,
      // but no RFC 3339 time the API writes back could say so.
      [{ valid_until: '9999-12-31T23:59:59-00:01' }, 'ERR_EP_215', /valid_until.*9999-12-31T23:59:59Z/],
      [{ valid_after: '9999-12-31T00:00:00Z' }, 'ERR_EP_215', /valid_until/],
    ];
    for (const [fields, code, message] of refused) {
      assertError(await api.post('/ssh_user_certificates', { ...base, ...fields }), 400, code, message, JSON.stringify(fields));
    }
    assert.equal((await api.get('/ssh_user_certificates')).json.ssh_user_certificates.length, 0, 'nothing was written');

    const widest = await api.post('/ssh_user_certificates', { ...base, valid_after: '1970-01-01T00:00:00Z', valid_until: '9999-12-31T23:59:59Z' });
    assert.equal(widest.status, 201, widest.text);
    assert.equal(widest.json.valid_after, '1970-01-01T00:00:00Z');
    assert.equal(widest.json.valid_until, '9999-12-31T23:59:59Z');
    const leap = await api.post('/ssh_host_certificates', { ...base, valid_after: '2028-02-29T12:00:00.5+02:00', valid_until: '2028-03-01t00:00:00z' });
    assert.equal(leap.status, 201, leap.text);
    assert.equal(leap.json.valid_after, '2028-02-29T10:00:00Z');
  });

  it('takes query numbers as decimal digits only', async () => {
    const api = await h().newAccount();
    for (const value of ['0x10', '1e1', '+5', ' 5', '5 ', '5.0', '0b101', '0o5', '-5', '5_0', 'Infinity', '']) {
      assertError(await api.get(`/ip_policies?limit=${encodeURIComponent(value)}`), 400, 'ERR_EP_233', undefined, `limit=${JSON.stringify(value)}`);
    }
    for (const value of ['5', '05', '100']) {
      const res = await api.get(`/ip_policies?limit=${value}`);
      assert.equal(res.status, 200, `limit=${value}: ${res.text}`);
    }
  });

  it('refuses strings and keys with a lone UTF-16 surrogate, naming the field', async () => {
    const api = await h().newAccount();
    const cases: [string, string, RegExp][] = [
      ['/ip_policies', '{"description":"ok \\ud800 then"}', /'description'/],
      ['/ip_policies', '{"metadata":"\\udc00"}', /'metadata'/],
      ['/ip_policies', '{"description":"\\ude00\\ud83d"}', /'description'/],
      ['/backends/tunnel_group', '{"labels":{"env":"\\udfff"}}', /'labels\.env'/],
      ['/backends/tunnel_group', '{"labels":{"\\ud800":"x"}}', /'labels\.\\ud800'/],
      ['/backends/failover', '{"backends":["bkdsc_1","\\ud83d"]}', /'backends\[1\]'/],
    ];
    for (const [path, text, field] of cases) {
      assertError(await sendRaw(api, 'POST', path, text), 400, 'ERR_EP_215', field, text);
    }
    assert.equal((await api.get('/ip_policies')).json.ip_policies.length, 0, 'nothing was written');
    const pair = await sendRaw(api, 'POST', '/ip_policies', '{"description":"\\ud83d\\ude00"}');
    assert.equal(pair.status, 201, pair.text);
    assert.equal(pair.json.description, '😀', 'a surrogate pair is a character');
  });

  it('refuses __proto__, constructor and prototype as keys at any depth', async () => {
    const api = await h().newAccount();
    const cases: [string, string, RegExp][] = [
      ['/ip_policies', '{"__proto__":{"description":"x"}}', /'__proto__'/],
      ['/ip_policies', '{"constructor":"x"}', /'constructor'/],
      ['/ip_policies', '{"prototype":{}}', /'prototype'/],
      ['/backends/tunnel_group', '{"labels":{"__proto__":"x"}}', /'labels\.__proto__'/],
      ['/backends/tunnel_group', '{"labels":{"constructor":"x"}}', /'labels\.constructor'/],
      ['/backends/tunnel_group', '{"labels":{"prototype":"x"}}', /'labels\.prototype'/],
      ['/backends/http_response', '{"headers":{"a":"b","__proto__":"c"}}', /'headers\.__proto__'/],
      ['/backends/tunnel_group', '{"labels":{"\\u005f_proto__":"x"}}', /'labels\.__proto__'/],
      ['/ip_policies', '{"description":[{"x":{"constructor":1}}]}', /'description\[0\]\.x\.constructor'/],
    ];
    for (const [path, text, field] of cases) {
      assertError(await sendRaw(api, 'POST', path, text), 400, 'ERR_EP_215', field, text);
    }
    const ca = (await api.post('/ssh_certificate_authorities', {})).json;
    const cert = await api.request('POST', '/ssh_user_certificates', {
      raw: `{"ssh_certificate_authority_id":"${ca.id}","public_key":"${ed25519PublicKey()}","extensions":{"prototype":""}}`,
      headers: { 'Content-Type': 'application/json' },
    });
    assertError(cert, 400, 'ERR_EP_215', /'extensions\.prototype'/);
    const policy = (await api.post('/ip_policies', {})).json;
    assertError(await sendRaw(api, 'PATCH', `/ip_policies/${policy.id}`, '{"__proto__":null}'), 400, 'ERR_EP_215', /'__proto__'/, 'PATCH');
    assert.equal((await api.get('/backends/tunnel_group')).json.backends.length, 0, 'nothing was written');
    const asValues = await api.post('/ip_policies', { description: 'constructor', metadata: '__proto__ prototype' });
    assert.equal(asValues.status, 201, 'the words are fine as values');
  });
});
