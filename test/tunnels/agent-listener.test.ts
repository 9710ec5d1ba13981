// The agent listener against the real agent: @ngrok/ngrok (the Node SDK over ngrok-rust) dials in
// over TLS, authenticates with a credential's authtoken, and is listed; bad tokens, deleted
// credentials, garbage and silent connections are dealt with one session at a time.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import tls from 'node:tls';
import { test } from 'node:test';
import ngrok from '@ngrok/ngrok';
import { describeEachStore, type Api, type Harness } from '../helpers/harness.js';

async function credential(api: Api): Promise<{ id: string; token: string }> {
  const created = await api.post('/credentials', { description: 'agent test' });
  assert.equal(created.status, 201, created.text);
  return { id: created.json.id, token: created.json.token };
}

function builder(h: Harness, token: string): ngrok.SessionBuilder {
  const agents = h.agents!;
  return new ngrok.SessionBuilder()
    .authtoken(token)
    .serverAddr(`127.0.0.1:${agents.port}`)
    .caCert(Buffer.from(agents.caPem))
    .clientInfo('edgeplane-test', '1.0.0');
}

/** Resolves once `check` holds, polled on the event loop's own schedule (no fixed sleep). */
async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

function rawTls(h: Harness): Promise<tls.TLSSocket> {
  const socket = tls.connect({ host: '127.0.0.1', port: h.agents!.port, ca: h.agents!.caPem, servername: '127.0.0.1' });
  return once(socket, 'secureConnect').then(() => socket);
}

describeEachStore(
  'agent listener',
  (h) => {
    test('the real agent authenticates with a credential and is listed with its account', async () => {
      const api = await h().newAccount();
      const cred = await credential(api);
      const session = await builder(h(), cred.token).metadata('{"box":7}').connect();
      try {
        const listed = h().agents!.registry.list(api.info.accountId);
        assert.equal(listed.length, 1);
        assert.equal(listed[0]!.credentialId, cred.id);
        assert.equal(listed[0]!.accountId, api.info.accountId);
        assert.equal(listed[0]!.metadata, '{"box":7}');
        assert.match(listed[0]!.id, /^ts_/);
        assert.equal(listed[0]!.ip, '127.0.0.1');
        assert.ok(listed[0]!.os.length > 0);
        const started = h().logs.find((l) => l.msg === 'agent session started' && l.session_id === listed[0]!.id);
        assert.ok(started, 'one log line per session start');
        assert.ok(!JSON.stringify(h().logs).includes(cred.token), 'the token is never logged');
      } finally {
        await session.close();
      }
      await until(() => h().agents!.registry.count(api.info.accountId) === 0, 'the session to end');
    });

    test('a bad token is refused with the SDK authtoken error code', async () => {
      const api = await h().newAccount();
      const cred = await credential(api);
      const wrong = cred.token.slice(0, -4) + (cred.token.endsWith('AAAA') ? 'BBBB' : 'AAAA');
      for (const token of [wrong, 'not-a-token']) {
        await assert.rejects(builder(h(), token).connect(), (err: Error & { errorCode?: string }) => {
          assert.equal(err.errorCode, 'ERR_NGROK_107', err.message);
          return true;
        });
      }
      assert.equal(h().agents!.registry.count(api.info.accountId), 0);
    });
  },
  { agents: { authTimeoutMs: 1_000, heartbeatIntervalMs: 1_000 } },
);
