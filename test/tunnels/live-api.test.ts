// The live state of real agents in the API: an @ngrok/ngrok session and what it binds are listed by
// /tunnel_sessions, /tunnels and /endpoints (on this instance and on a second one of the same store),
// a tunnel-group backend lists the labeled tunnel its labels match, and restart, stop and update
// reach the agent's own handlers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import ngrok from '@ngrok/ngrok';
import { describeEachStore, type Api, type Harness } from '../helpers/harness.js';

function builder(h: Harness, token: string): ngrok.SessionBuilder {
  return new ngrok.SessionBuilder().authtoken(token).serverAddr(`127.0.0.1:${h.agents!.port}`).caCert(Buffer.from(h.agents!.caPem));
}

/** Polls `read` until `check` holds (the records sync within a fraction of the test's short lease). */
async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function token(api: Api): Promise<string> {
  const created = await api.post('/credentials', { description: 'live api test' });
  assert.equal(created.status, 201, created.text);
  return created.json.token as string;
}

describeEachStore(
  'live agents in the API',
  (h) => {
    test('a real session, its endpoint and its labeled tunnel are listed on every instance, and leave when it ends', async () => {
      const api = await h().newAccount();
      const backend = await api.post('/backends/tunnel_group', { labels: { env: 'prod' } });
      assert.equal(backend.status, 201);
      const session = await builder(h(), await token(api))
        .metadata('box 7')
        .connect();
      const second = await h().secondInstance();
      let closed = false;
      try {
        const endpoint = await session.httpEndpoint().metadata('web').listen(false);
        const labeled = await session.labeledListener().label('env', 'prod').listen(false);
        const sessions = await eventually(
          () => api.get('/tunnel_sessions'),
          (r) => r.json.tunnel_sessions?.length === 1,
          'the session to be listed',
        );
        const shown = sessions.json.tunnel_sessions[0];
        assert.match(shown.id, /^ts_/);
        assert.equal(shown.metadata, 'box 7');
        assert.equal(shown.ip, '127.0.0.1');
        assert.equal(shown.transport, 'ngrok/tls');

        const tunnels = await eventually(
          () => api.get('/tunnels'),
          (r) => r.json.tunnels?.length === 2,
          'both tunnels to be listed',
        );
        const byId = new Map((tunnels.json.tunnels as { id: string }[]).map((t) => [t.id, t as Record<string, unknown>]));
        assert.equal(byId.get(endpoint.id())?.public_url, endpoint.url());
        assert.equal(byId.get(endpoint.id())?.metadata, 'web');
        assert.deepEqual(byId.get(labeled.id())?.labels, { env: 'prod' });
        assert.deepEqual((byId.get(labeled.id())?.tunnel_session as { id: string }).id, shown.id);

        const endpoints = (await api.get('/endpoints')).json.endpoints as Record<string, unknown>[];
        assert.equal(endpoints.length, 1);
        assert.equal(endpoints[0]!.public_url, endpoint.url());
        assert.equal(endpoints[0]!.type, 'ephemeral');
        assert.equal((endpoints[0]!.tunnel as { id: string }).id, endpoint.id());

        const group = await api.get(`/backends/tunnel_group/${backend.json.id}`);
        assert.deepEqual(
          (group.json.tunnels as { id: string }[]).map((t) => t.id),
          [labeled.id()],
        );

        // Another instance of the same store lists the same.
        const fromSecond = await fetch(`${second.baseUrl}/tunnel_sessions`, { headers: { authorization: `Bearer ${api.token}`, 'service-version': '2' } });
        assert.equal(((await fromSecond.json()) as { tunnel_sessions: { id: string }[] }).tunnel_sessions[0]?.id, shown.id);

        await session.close();
        closed = true;
        await eventually(
          () => api.get('/tunnel_sessions'),
          (r) => r.json.tunnel_sessions?.length === 0,
          'the ended session to leave the list',
        );
        assert.equal((await api.get('/tunnels')).json.tunnels.length, 0);
        assert.equal((await api.get(`/tunnels/${endpoint.id()}`)).status, 404);
      } finally {
        if (!closed) await session.close();
        await second.close();
      }
    });

    test("restart, stop and update reach the agent's handlers; an agent without them says so", async () => {
      const api = await h().newAccount();
      const calls: string[] = [];
      let updated: unknown;
      const handled = await builder(h(), await token(api))
        .handleRestartCommand(() => calls.push('restart'))
        .handleStopCommand(() => calls.push('stop'))
        .handleUpdateCommand((update) => {
          calls.push('update');
          updated = update;
        })
        .connect();
      const bare = await builder(h(), await token(api)).connect();
      try {
        const listed = await eventually(
          () => api.get('/tunnel_sessions'),
          (r) => r.json.tunnel_sessions?.length === 2,
          'both sessions to be listed',
        );
        const ids = (listed.json.tunnel_sessions as { id: string }[]).map((s) => s.id);
        const handledId =
          h()
            .agents!.registry.list(api.info.accountId)
            .find((s) => s.unsupported?.restart === '')?.id ?? ids[0]!;
        const bareId = ids.find((id) => id !== handledId)!;

        for (const command of ['restart', 'stop'] as const) {
          const answer = await api.post(`/tunnel_sessions/${handledId}/${command}`, {});
          assert.equal(answer.status, 204, answer.text);
        }
        const update = await api.post(`/tunnel_sessions/${handledId}/update`, { version: '9.9.9', permit_major_version: true });
        assert.equal(update.status, 204, update.text);
        assert.deepEqual(calls, ['restart', 'stop', 'update']);
        assert.ok(updated, 'the update handler got the request');

        const refused = await api.post(`/tunnel_sessions/${bareId}/restart`, {});
        assert.equal(refused.status, 409, refused.text);
        assert.equal(refused.json.error_code, 'ERR_EP_8100');

        const other = await h().newAccount();
        assert.equal((await other.post(`/tunnel_sessions/${handledId}/stop`, {})).status, 404);
      } finally {
        await Promise.all([handled.close(), bare.close()]);
      }
    });
  },
  { agents: { heartbeatIntervalMs: 1_000 }, leaseMs: 600 },
);
