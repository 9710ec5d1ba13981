// The one log line per request: every answer has one, refusals included, with the client's
// address, and with the caller's account and key whenever the key was recognised.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, it } from 'node:test';
import { Api, describeEachStore, type Harness } from '../helpers/harness.js';

/** The request line the server wrote for the response with this operation id. */
function lineFor(h: Harness, res: { headers: Headers }): Record<string, unknown> {
  const operationId = res.headers.get('operation-id');
  const line = h.logs.find((l) => l.msg === 'request' && l.operation_id === operationId);
  assert.ok(line, `no request line for ${operationId}`);
  return line;
}

describeEachStore('request log lines', (h) => {
  it('name the client address on a 401 and on an unknown path, where no caller is known', async () => {
    const api = await h().newAccount();
    const anonymous = new Api(api.baseUrl, undefined, api.info, h());
    for (const res of [await anonymous.get('/api_keys'), await api.get('/no_such_path')]) {
      const line = lineFor(h(), res);
      assert.equal(line.ip, '127.0.0.1');
      assert.equal(line.status, res.status);
      assert.equal(line.account_id, undefined);
    }
  });

  it("name the caller's account and key on a 403 of a role", async () => {
    const api = await h().newAccount();
    const reader = await h().deps.accounts.createUser({ accountId: api.info.accountId, name: 'reader', role: 'read_only' });
    const res = await new Api(api.baseUrl, reader.token, api.info, h()).post('/api_keys', {});
    assert.equal(res.status, 403, res.text);
    const line = lineFor(h(), res);
    assert.deepEqual([line.ip, line.account_id, line.key_id], ['127.0.0.1', api.info.accountId, reader.api_key_id]);
  });

  it("name the caller's account and key on a 403 of an enforced IP restriction", async () => {
    const api = await h().newAccount();
    const ipp = (await api.post('/ip_policies', {})).json.id;
    assert.equal((await api.post('/ip_policy_rules', { ip_policy_id: ipp, cidr: '10.0.0.0/8', action: 'allow' })).status, 201);
    assert.equal((await api.post('/ip_restrictions', { type: 'api', enforced: true, ip_policy_ids: [ipp] })).status, 201);
    const res = await api.get('/api_keys');
    assert.equal(res.status, 403, res.text);
    const line = lineFor(h(), res);
    assert.deepEqual([line.ip, line.account_id, line.key_id, line.status], ['127.0.0.1', api.info.accountId, api.info.keyId, 403]);
  });

  it('answer a trailing slash with the 404 of an unknown path, not as an empty id', async () => {
    const api = await h().newAccount();
    for (const path of ['/api_keys/', '/ip_policies/', '/backends/failover/']) {
      const res = await api.get(path);
      assert.equal(res.status, 404, path);
      assert.equal(res.json.error_code, 'ERR_EP_253', `${path}: ${res.text}`);
    }
    assert.equal((await api.get('/api_keys')).status, 200, 'without the slash it is the list');
  });
});

// The production logger (src/logger.ts), as `serve` makes it: its own writer, batched and
// asynchronous, and its redaction; the request line made without a logger of the request's own.
const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'edgeplane-log-'));
after(() => fs.rmSync(logDir, { recursive: true, force: true }));

describeEachStore(
  'request log lines through the production logger',
  (h) => {
    /** Every line written so far, once the writer's buffer is flushed. */
    async function written(): Promise<Record<string, unknown>[]> {
      await new Promise<void>((resolve, reject) => h().deps.logger.flush((error) => (error ? reject(error) : resolve())));
      const text = fs.readFileSync(path.join(logDir, 'server.log'), 'utf8');
      return text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    }

    it('hold every documented field, in the order operators read them, and never the token', async () => {
      const api = await h().newAccount();
      const res = await api.get(`/api_keys/${api.info.keyId}`);
      assert.equal(res.status, 200, res.text);
      const refused = await api.withToken(undefined).get('/api_keys');
      assert.equal(refused.status, 401);
      const lines = await written();
      const line = lines.find((l) => l.msg === 'request' && l.operation_id === res.headers.get('operation-id'));
      assert.ok(line, 'the request line was written');
      assert.deepEqual(Object.keys(line), [
        'level',
        'time',
        'pid',
        'hostname',
        'operation_id',
        'method',
        'path',
        'status',
        'ms',
        'ip',
        'account_id',
        'key_id',
        'msg',
      ]);
      assert.deepEqual(
        [line.level, line.method, line.path, line.status, line.ip, line.account_id, line.key_id],
        [30, 'GET', `/api_keys/${api.info.keyId}`, 200, '127.0.0.1', api.info.accountId, api.info.keyId],
      );
      assert.equal(typeof line.ms, 'number');
      const anonymous = lines.find((l) => l.msg === 'request' && l.operation_id === refused.headers.get('operation-id'));
      assert.ok(anonymous, 'the refusal has its line too');
      assert.equal(anonymous.status, 401);
      assert.equal(anonymous.account_id, undefined);
      assert.ok(!lines.some((l) => JSON.stringify(l).includes(api.token!)), 'the token is in no line');
    });

    it('still redact token-like fields on every other line', async () => {
      h().deps.logger.info({ token: 'tok-123', nested: { secret: 'sec-456', authorization: 'Bearer x' } }, 'redaction probe');
      const probe = (await written()).find((l) => l.msg === 'redaction probe');
      assert.ok(probe);
      assert.equal(probe.token, '[redacted]');
      assert.deepEqual(probe.nested, { secret: '[redacted]', authorization: '[redacted]' });
    });
  },
  { logFile: path.join(logDir, 'server.log') },
);
