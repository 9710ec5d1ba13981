// The agent listener against the real agent: @ngrok/ngrok (the Node SDK over ngrok-rust) dials in
// over TLS, authenticates with a credential's authtoken, and is listed; bad tokens, deleted
// credentials, garbage and silent connections are dealt with one session at a time.
import assert from 'node:assert/strict';
import { randomBytes, X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import net from 'node:net';
import tls from 'node:tls';
import { test } from 'node:test';
import ngrok from '@ngrok/ngrok';
import { selfSigned } from '../helpers/certs.js';
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
  const socket = tls.connect({ host: '127.0.0.1', port: h.agents!.port, ca: h.agents!.caPem });
  socket.resume(); // what the server says is not read; its end is awaited
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
      // The SDK's close() leaves the connection open and stops echoing: edgeplane's heartbeat
      // drops it after 3 missed intervals (1 s each here).
      await until(() => h().agents!.registry.count(api.info.accountId) === 0, 'the session to end');
      const ended = h().logs.find((l) => l.msg === 'agent session ended' && l.account_id === api.info.accountId);
      assert.match(String(ended?.reason), /heartbeat/);
    });

    test('a bad token is refused with the SDK authtoken error codes: 107 unknown, 105 malformed', async () => {
      const api = await h().newAccount();
      const cred = await credential(api);
      const wrong = cred.token.slice(0, -4) + (cred.token.endsWith('AAAA') ? 'BBBB' : 'AAAA');
      for (const [token, code] of [
        [wrong, 'ERR_NGROK_107'],
        ['not-a-token', 'ERR_NGROK_105'],
      ]) {
        await assert.rejects(builder(h(), token!).connect(), (err: Error & { errorCode?: string }) => {
          assert.equal(err.errorCode, code, err.message);
          return true;
        });
      }
      assert.equal(h().agents!.registry.count(api.info.accountId), 0);
    });

    test('deleting the credential ends its session: the agent sees the disconnect', async () => {
      const api = await h().newAccount();
      const cred = await credential(api);
      let disconnected!: (error: string) => void;
      const sawDisconnect = new Promise<string>((resolve) => (disconnected = resolve));
      const session = await builder(h(), cred.token)
        .handleDisconnection((_addr, error) => {
          disconnected(error);
          // No reconnecting: the credential is gone, and an agent retrying for the rest of the run
          // calls into JavaScript while the process exits (the SDK then aborts it).
          return false;
        })
        .connect();
      try {
        assert.equal(h().agents!.registry.count(api.info.accountId), 1);
        assert.equal((await api.delete(`/credentials/${cred.id}`)).status, 204);
        // Deleted through the instance that holds the session: at once; through another: at the holder's next check of its credentials.
        if (!h().acrossInstances) assert.equal(h().agents!.registry.count(api.info.accountId), 0);
        await sawDisconnect;
        assert.equal(h().agents!.registry.count(api.info.accountId), 0);
        const ended = h().logs.find((l) => l.msg === 'agent session ended' && l.account_id === api.info.accountId);
        assert.match(String(ended?.reason), /credential was deleted/);
      } finally {
        await session.close();
      }
    });

    test('a credential made unusable otherwise (its bot made inactive, or deleted with it) ends its sessions too', async () => {
      const api = await h().newAccount();
      for (const change of ['deactivate', 'delete'] as const) {
        const bot = (await api.post('/bot_users', { name: `agents-${change}` })).json.id as string;
        const cred = (await api.post('/credentials', { owner_id: bot })).json as { id: string; token: string };
        const session = await builder(h(), cred.token).connect();
        try {
          await until(() => h().agents!.registry.count(api.info.accountId) === 1, 'the session to be listed');
          const res = change === 'delete' ? await api.delete(`/bot_users/${bot}`) : await api.patch(`/bot_users/${bot}`, { active: false });
          assert.ok(res.status < 300, JSON.stringify(res.json));
          await until(() => h().agents!.registry.count(api.info.accountId) === 0, `the session to end after the bot's ${change}`);
        } finally {
          await session.close();
        }
      }
    });

    test('an agent that reconnects resumes its session id', async () => {
      const api = await h().newAccount();
      const cred = await credential(api);
      let disconnects = 0;
      const session = await builder(h(), cred.token)
        .handleDisconnection(() => {
          disconnects++;
          // Reconnect once, as the test asks; never again after it (see above).
          return disconnects === 1;
        })
        .connect();
      try {
        const [first] = h().agents!.registry.list(api.info.accountId);
        assert.ok(h().agents!.registry.end(first!.id, 'ended by the test'));
        await until(() => disconnects === 1 && h().agents!.registry.count(api.info.accountId) === 1, 'the agent to reconnect');
        const [again] = h().agents!.registry.list(api.info.accountId);
        assert.equal(again!.id, first!.id);
        assert.ok(h().logs.some((l) => l.msg === 'agent session started' && l.session_id === first!.id && l.resumed === true));
      } finally {
        await session.close();
      }
    });

    test('garbage and silence are dropped without disturbing a live agent', async () => {
      const api = await h().newAccount();
      const cred = await credential(api);
      const session = await builder(h(), cred.token).connect();
      try {
        const garbage = await rawTls(h());
        const garbageClosed = once(garbage, 'close');
        garbage.on('error', () => {});
        garbage.write(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
        await garbageClosed;

        // Not even TLS.
        const plain = net.connect({ host: '127.0.0.1', port: h().agents!.port });
        plain.on('error', () => {});
        plain.resume();
        plain.write('hello\r\n');
        await once(plain, 'close');

        // A valid frame, then JSON that is not: that session ends, alone.
        const badJson = await rawTls(h());
        const badJsonClosed = once(badJson, 'close');
        badJson.on('error', () => {});
        const body = Buffer.concat([Buffer.from([0, 0, 0, 0]), Buffer.from('{"Version": [}')]);
        const head = Buffer.alloc(8);
        head.writeUInt32BE((body.length << 8) | (1 << 4) | 0x2, 0);
        head.writeUInt32BE(3, 4);
        badJson.write(Buffer.concat([head, body]));
        await badJsonClosed;

        // Says nothing after the handshake: dropped after the auth timeout (1 s here).
        const silent = await rawTls(h());
        silent.on('error', () => {});
        const openedAt = Date.now();
        await once(silent, 'close');

        assert.ok(Date.now() - openedAt < 5_000);

        const listed = h().agents!.registry.list(api.info.accountId);
        assert.equal(listed.length, 1, 'the real agent is still there');
        // And it still works: a Bind is answered.
        const bound = await session.tcpEndpoint().listen(false);
        assert.match(bound.url() ?? '', /^tcp:\/\//);
        await bound.close();
        assert.equal(h().agents!.registry.count(api.info.accountId), 1);
      } finally {
        await session.close();
      }
    });

    test("an agent ingress's certificate is served for the names under its domain, the default for others", async () => {
      const api = await h().newAccount();
      const domain = `connect-${randomBytes(4).toString('hex')}.example.com`;
      const ingress = await api.post('/agent_ingresses', { domain });
      assert.equal(ingress.status, 201, ingress.text);
      const leaf = await selfSigned({ names: [`*.us.${domain}`, `tunnel.us.${domain}`] });
      const uploaded = await api.post('/tls_certificates', { certificate_pem: leaf.certPem, private_key_pem: leaf.keyPem });
      assert.equal(uploaded.status, 201, uploaded.text);
      // What certificate automation does once the ingress's certificate is issued.
      await h().deps.store.db.updateTable('agent_ingresses').set({ certificate_id: uploaded.json.id }).where('id', '=', ingress.json.id).execute();
      const presented = async (servername: string) => {
        const socket = tls.connect({ host: '127.0.0.1', port: h().agents!.port, servername, rejectUnauthorized: false });
        await once(socket, 'secureConnect');
        const fingerprint = socket.getPeerX509Certificate()?.fingerprint256;
        socket.destroy();
        return fingerprint;
      };
      const own = new X509Certificate(leaf.certPem).fingerprint256;
      assert.equal(await presented(`tunnel.us.${domain}`), own);
      assert.notEqual(await presented('localhost'), own);
      assert.notEqual(await presented(`tunnel.us.other-${domain}`), own);
    });

    test('past the connections waiting to authenticate, the next is closed at once', async () => {
      const waiting = [await rawTls(h()), await rawTls(h())];
      for (const s of waiting) s.on('error', () => {});
      const refused = net.connect({ host: '127.0.0.1', port: h().agents!.port });
      refused.on('error', () => {});
      refused.resume();
      const openedAt = Date.now();
      await once(refused, 'close');
      assert.ok(Date.now() - openedAt < 900, 'closed before the auth timeout');
      assert.ok(h().logs.some((l) => l.msg === 'agent connection refused: too many connections waiting to authenticate'));
      await Promise.all(waiting.map((s) => once(s, 'close')));
    });

    test('past the sessions of an account, the next agent is refused with ERR_NGROK_108', async () => {
      const api = await h().newAccount();
      const cred = await credential(api);
      const first = await builder(h(), cred.token).connect();
      const second = await builder(h(), cred.token).connect();
      try {
        await assert.rejects(builder(h(), cred.token).connect(), (err: Error & { errorCode?: string }) => {
          assert.equal(err.errorCode, 'ERR_NGROK_108', err.message);
          return true;
        });
        assert.equal(h().agents!.registry.count(api.info.accountId), 2);
      } finally {
        await Promise.all([first.close(), second.close()]);
      }
    });
  },
  {
    agents: { authTimeoutMs: 1_000, heartbeatIntervalMs: 1_000, maxSessionsPerAccount: 2, maxUnauthenticated: 2, credentialCheckMs: 200 },
    acrossInstances: true,
  },
);
