// Live agent records and their API: what LiveRecords writes from a LiveState is what
// /tunnel_sessions, /tunnels, /endpoints and the tunnel-group backends show, on each store; the
// commands reach the session here or are queued for the instance that holds it; leases.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { before, it } from 'node:test';
import { pino } from 'pino';
import { newId } from '../../src/core/ids.js';
import { LiveRecords } from '../../src/tunnels/live-records.js';
import type { SessionCommands } from '../../src/core/live-agents.js';
import { describeEachStore, freshStore, type Harness } from '../helpers/harness.js';
import { boundTunnel, FakeLiveState, FakeSessionCommands, labeledTunnel, liveSession, silentLog } from '../helpers/live-agents.js';

function records(h: Harness, state: FakeLiveState, options: { commands?: SessionCommands; leaseMs?: number; offsetMs?: number; instanceId?: string } = {}) {
  const offset = options.offsetMs ?? 0;
  return new LiveRecords({
    store: h.deps.store,
    instanceId: options.instanceId ?? newId('inst'),
    state,
    commands: options.commands ?? new FakeSessionCommands(),
    log: silentLog,
    leaseMs: options.leaseMs,
    clock: { now: () => new Date(Date.now() + offset) },
  });
}

async function rowCount(h: Harness, table: 'agent_sessions' | 'agent_tunnels', instanceId?: string): Promise<number> {
  let q = h.deps.store.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n'));
  if (instanceId) q = q.where('instance_id', '=', instanceId);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

describeEachStore('live agents: records and API', (h) => {
  /** The commands of the API's own instance: a session is here when the test says so. */
  const here = new FakeSessionCommands();
  before(() => {
    h().deps.sessionCommands = here;
  });

  it('lists and gets what LiveRecords wrote, and drops what the state drops', async () => {
    const api = await h().newAccount();
    const backend = (await api.post('/backends/tunnel_group', { labels: { env: 'prod' } })).json;
    const other = (await api.post('/backends/tunnel_group', { labels: { env: 'prod', tier: 'db' } })).json;
    const state = new FakeLiveState();
    const session = liveSession(api.info.accountId, { metadata: 'm', agentVersion: '3.5.0' });
    const domainId = newId('rd');
    const bound = boundTunnel(session, 'app.example.com');
    bound.endpoint!.domainId = domainId;
    const labeled = labeledTunnel(session, { env: 'prod', region: 'eu' });
    state.sessionList.push(session);
    state.tunnelList.push(bound, labeled);
    const live = records(h(), state);
    const outcome = await live.sync();
    assert.deepEqual({ sessions: outcome?.sessions, tunnels: outcome?.tunnels }, { sessions: 1, tunnels: 2 });

    const sessions = await api.get('/tunnel_sessions');
    assert.equal(sessions.status, 200);
    assert.equal(sessions.json.tunnel_sessions.length, 1);
    const shown = sessions.json.tunnel_sessions[0];
    assert.deepEqual(shown, {
      id: session.id,
      uri: `${h().baseUrl}/tunnel_sessions/${session.id}`,
      agent_version: '3.5.0',
      credential: { id: session.credentialId, uri: `${h().baseUrl}/credentials/${session.credentialId}` },
      ip: '192.0.2.10',
      metadata: 'm',
      os: 'linux',
      region: 'local',
      started_at: session.startedAt.toISOString().replace('.000Z', 'Z'),
      transport: 'ngrok/tls',
    });
    assert.deepEqual((await api.get(`/tunnel_sessions/${session.id}`)).json, shown);

    const tunnels = (await api.get('/tunnels')).json.tunnels as Record<string, unknown>[];
    assert.deepEqual(tunnels.map((t) => t.id).sort(), [bound.id, labeled.id].sort());
    const b = (await api.get(`/tunnels/${bound.id}`)).json;
    assert.equal(b.public_url, 'https://app.example.com');
    assert.equal(b.proto, 'https');
    assert.equal(b.labels, null);
    assert.equal(b.backends, null);
    assert.deepEqual(b.endpoint, { id: bound.endpoint!.id, uri: `${h().baseUrl}/endpoints/${bound.endpoint!.id}` });
    assert.deepEqual(b.tunnel_session, { id: session.id, uri: `${h().baseUrl}/tunnel_sessions/${session.id}` });
    assert.equal(b.forwards_to, 'http://localhost:8080');
    const l = (await api.get(`/tunnels/${labeled.id}`)).json;
    assert.equal(l.public_url, null);
    assert.equal(l.endpoint, null);
    assert.deepEqual(l.labels, { env: 'prod', region: 'eu' });
    // Every label of the backend, with the same value: {env: prod} matches, {env: prod, tier: db} does not.
    assert.deepEqual(l.backends, [{ id: backend.id, uri: `${h().baseUrl}/backends/tunnel_group/${backend.id}` }]);

    const endpoints = (await api.get('/endpoints')).json.endpoints;
    assert.equal(endpoints.length, 1);
    const e = endpoints[0];
    assert.equal(e.id, bound.endpoint!.id);
    assert.equal(e.type, 'ephemeral');
    assert.equal(e.public_url, 'https://app.example.com');
    assert.equal(e.hostport, 'app.example.com:443');
    assert.equal(e.proto, 'https');
    assert.deepEqual(e.domain, { id: domainId, uri: `${h().baseUrl}/reserved_domains/${domainId}` });
    assert.equal(e.tcp_addr, null);
    assert.deepEqual(e.tunnel, { id: bound.id, uri: `${h().baseUrl}/tunnels/${bound.id}` });
    assert.deepEqual((await api.get(`/endpoints/${e.id}`)).json, e);

    const tg = (await api.get(`/backends/tunnel_group/${backend.id}`)).json;
    assert.deepEqual(tg.tunnels, [{ id: labeled.id, uri: `${h().baseUrl}/tunnels/${labeled.id}` }]);
    assert.deepEqual((await api.get(`/backends/tunnel_group/${other.id}`)).json.tunnels, []);

    // The agent unbinds its endpoint: the tunnel and the endpoint go.
    state.tunnelList = [labeled];
    await live.sync();
    assert.deepEqual(
      ((await api.get('/tunnels')).json.tunnels as { id: string }[]).map((t) => t.id),
      [labeled.id],
    );
    assert.equal((await api.get(`/endpoints/${bound.endpoint!.id}`)).status, 404);
    assert.equal((await api.get(`/tunnels/${bound.id}`)).status, 404);
    assert.deepEqual((await api.get('/endpoints')).json.endpoints, []);

    // The session ends: everything goes, the backend's tunnels too.
    state.sessionList = [];
    state.tunnelList = [];
    await live.sync();
    assert.equal((await api.get(`/tunnel_sessions/${session.id}`)).status, 404);
    assert.deepEqual((await api.get('/tunnel_sessions')).json.tunnel_sessions, []);
    assert.deepEqual((await api.get('/tunnels')).json.tunnels, []);
    assert.deepEqual((await api.get(`/backends/tunnel_group/${backend.id}`)).json.tunnels, []);
  });

  it('pages newest first with before_id and limit', async () => {
    const api = await h().newAccount();
    const state = new FakeLiveState();
    for (let i = 0; i < 5; i++) state.sessionList.push(liveSession(api.info.accountId));
    await records(h(), state).sync();
    const expected = state.sessionList
      .map((s) => s.id)
      .sort()
      .reverse();
    const seen: string[] = [];
    let next: string | null = '/tunnel_sessions?limit=2';
    let pages = 0;
    while (next) {
      const page = await api.get(next);
      assert.equal(page.status, 200);
      assert.ok(page.json.tunnel_sessions.length <= 2);
      seen.push(...page.json.tunnel_sessions.map((s: { id: string }) => s.id));
      next = page.json.next_page_uri;
      pages++;
    }
    assert.equal(pages, 3);
    assert.deepEqual(seen, expected);
    const bad = await api.get('/tunnels?before_id=ts_nope');
    assert.equal(bad.status, 400);
  });

  it("answers another account's sessions, tunnels and endpoints with 404, and lists none of them", async () => {
    const owner = await h().newAccount();
    const intruder = await h().newAccount();
    const state = new FakeLiveState();
    const session = liveSession(owner.info.accountId);
    const bound = boundTunnel(session);
    state.sessionList.push(session);
    state.tunnelList.push(bound);
    await records(h(), state).sync();
    for (const path of [`/tunnel_sessions/${session.id}`, `/tunnels/${bound.id}`, `/endpoints/${bound.endpoint!.id}`]) {
      const res = await intruder.get(path);
      assert.equal(res.status, 404, path);
      assert.equal(res.json.error_code, 'ERR_EP_252');
      assert.equal((await owner.get(path)).status, 200, path);
    }
    for (const [path, key] of [
      ['/tunnel_sessions', 'tunnel_sessions'],
      ['/tunnels', 'tunnels'],
      ['/endpoints', 'endpoints'],
    ] as const) {
      assert.deepEqual((await intruder.get(path)).json[key], [], path);
    }
    for (const command of ['restart', 'stop', 'update']) {
      const res = await intruder.post(`/tunnel_sessions/${session.id}/${command}`, {});
      assert.equal(res.status, 404, command);
    }
    assert.equal(here.received.filter((r) => r.sessionId === session.id).length, 0);
  });

  it('sends a command to a session held here: 204, and the agent’s refusal or silence as errors', async () => {
    const api = await h().newAccount();
    const state = new FakeLiveState();
    const session = liveSession(api.info.accountId);
    state.sessionList.push(session);
    await records(h(), state).sync();
    here.here.set(session.id, { outcome: 'sent' });
    const before = here.received.length;

    const restart = await api.post(`/tunnel_sessions/${session.id}/restart`, {});
    assert.equal(restart.status, 204, restart.text);
    const stop = await api.post(`/tunnel_sessions/${session.id}/stop`, { id: session.id });
    assert.equal(stop.status, 204);
    const update = await api.post(`/tunnel_sessions/${session.id}/update`, { id: session.id, version: '3.6.0', permit_major_version: true });
    assert.equal(update.status, 204);
    assert.equal((await api.post(`/tunnel_sessions/${session.id}/update`)).status, 204);
    assert.deepEqual(
      here.received.slice(before).map((r) => r.command),
      [
        { kind: 'restart' },
        { kind: 'stop' },
        { kind: 'update', version: '3.6.0', permitMajorVersion: true },
        { kind: 'update', version: '', permitMajorVersion: false },
      ],
    );
    const audit = (await api.get('/audit_events')).json.audit_events.map((a: { operation: string }) => a.operation);
    assert.ok(audit.includes('tunnel_session.restart') && audit.includes('tunnel_session.stop'));

    const mismatch = await api.post(`/tunnel_sessions/${session.id}/restart`, { id: newId('ts') });
    assert.equal(mismatch.json.error_code, 'ERR_EP_255');
    // What the official client's restart(id) sends: the bare id, which is not JSON, is taken as no body;
    // another id or other text is not.
    const bare = await api.request('POST', `/tunnel_sessions/${session.id}/restart`, { raw: session.id, headers: { 'Content-Type': 'application/json' } });
    assert.equal(bare.status, 204, bare.text);
    const otherBare = await api.request('POST', `/tunnel_sessions/${session.id}/stop`, { raw: newId('ts'), headers: { 'Content-Type': 'application/json' } });
    assert.equal(otherBare.json.error_code, 'ERR_EP_213');
    assert.equal((await api.post('/tunnel_sessions', {})).status, 405);
    // Endpoints take DELETE now (cloud endpoints): an agent's endpoint is refused, an unknown one is not found.
    assert.equal((await api.delete(`/endpoints/${newId('ep')}`)).status, 404);
    const unknownField = await api.post(`/tunnel_sessions/${session.id}/restart`, { force: true });
    assert.equal(unknownField.json.error_code, 'ERR_EP_214');

    here.here.set(session.id, { outcome: 'refused', error: 'updates are disabled' });
    const refused = await api.post(`/tunnel_sessions/${session.id}/update`, {});
    assert.equal(refused.status, 409);
    assert.equal(refused.json.error_code, 'ERR_EP_8100');
    assert.match(refused.json.msg, /updates are disabled/);

    here.here.set(session.id, { outcome: 'failed', reason: 'the agent did not answer in 10 s' });
    const failed = await api.post(`/tunnel_sessions/${session.id}/restart`, {});
    assert.equal(failed.status, 503);
    assert.equal(failed.json.error_code, 'ERR_EP_8101');

    here.here.set(session.id, { outcome: 'sent' });
    const readOnly = await api.asNewUser('read_only');
    const refusedRole = await readOnly.post(`/tunnel_sessions/${session.id}/stop`, {});
    assert.equal(refusedRole.status, 403);
    assert.equal((await readOnly.get(`/tunnel_sessions/${session.id}`)).status, 200);
    assert.equal((await api.post(`/tunnel_sessions/ts_nope/stop`, {})).status, 404);
    assert.equal((await api.post(`/tunnel_sessions/${newId('ts')}/stop`, {})).status, 404);
  });

  it('queues a command for a session another instance holds, which that instance runs at its next sync', async () => {
    const api = await h().newAccount();
    const state = new FakeLiveState();
    const session = liveSession(api.info.accountId);
    state.sessionList.push(session);
    const owner = new FakeSessionCommands();
    owner.here.set(session.id, { outcome: 'sent' });
    const other = records(h(), state, { commands: owner });
    await other.sync();

    // Not here: queued, 204.
    const res = await api.post(`/tunnel_sessions/${session.id}/update`, { version: '3.7.0' });
    assert.equal(res.status, 204, res.text);
    assert.equal(owner.received.length, 0);
    const outcome = await other.sync();
    assert.equal(outcome?.commands.length, 1);
    await owner.receivedCount(1);
    assert.deepEqual(owner.received[0], { sessionId: session.id, command: { kind: 'update', version: '3.7.0', permitMajorVersion: false } });
    // Taken off the queue: the next sync runs nothing.
    assert.equal((await other.sync())?.commands.length, 0);

    // A bounded queue.
    for (let i = 0; i < 10; i++) assert.equal((await api.post(`/tunnel_sessions/${session.id}/restart`, {})).status, 204);
    const full = await api.post(`/tunnel_sessions/${session.id}/restart`, {});
    assert.equal(full.status, 409);
    assert.equal(full.json.error_code, 'ERR_EP_8102');
    // The session ends before its instance ran them: they go with it.
    state.sessionList = [];
    assert.equal((await other.sync())?.commands.length, 0);
    const left = await h().deps.store.db.selectFrom('agent_session_commands').selectAll().where('session_id', '=', session.id).execute();
    assert.deepEqual(left, []);
  });

  it("hides a row whose lease ran out, and deletes a stopped instance's rows at the next sync of another", async () => {
    const api = await h().newAccount();
    // An instance whose clock says an hour ago wrote leases that have run out now.
    const staleState = new FakeLiveState();
    const stale = liveSession(api.info.accountId);
    staleState.sessionList.push(stale);
    staleState.tunnelList.push(boundTunnel(stale));
    await records(h(), staleState, { offsetMs: -3_600_000 }).sync();
    assert.deepEqual((await api.get('/tunnel_sessions')).json.tunnel_sessions, []);
    assert.equal((await api.get(`/tunnel_sessions/${stale.id}`)).status, 404);
    assert.deepEqual((await api.get('/endpoints')).json.endpoints, []);

    // An instance that syncs once, with a 30 s lease, then stops.
    const stoppedId = newId('inst');
    const stoppedState = new FakeLiveState();
    const stopped = liveSession(api.info.accountId);
    stoppedState.sessionList.push(stopped);
    stoppedState.tunnelList.push(boundTunnel(stopped));
    await records(h(), stoppedState, { instanceId: stoppedId, leaseMs: 30_000 }).sync();
    assert.equal((await api.get(`/tunnel_sessions/${stopped.id}`)).status, 200);

    // Another instance syncing within the lease leaves them; once it has run out, deletes them.
    const survivor = new FakeLiveState();
    assert.equal((await records(h(), survivor, { offsetMs: 20_000 }).sync())?.sessions, 0);
    assert.equal(await rowCount(h(), 'agent_sessions', stoppedId), 1);
    const later = await records(h(), survivor, { offsetMs: 31_000 }).sync();
    assert.ok((later?.expired ?? 0) >= 2, `expired ${later?.expired}`);
    assert.equal(await rowCount(h(), 'agent_sessions', stoppedId), 0);
    assert.equal(await rowCount(h(), 'agent_tunnels', stoppedId), 0);
  });

  it('close() deletes the rows of its instance, and changed() coalesces into one sync', async () => {
    const api = await h().newAccount();
    const state = new FakeLiveState();
    let reads = 0;
    let firstRead!: () => void;
    const read = new Promise<void>((resolve) => (firstRead = resolve));
    const counting: FakeLiveState = Object.assign(Object.create(state) as FakeLiveState, {
      sessions: () => {
        reads++;
        firstRead();
        return state.sessionList;
      },
      tunnels: () => state.tunnelList,
    });
    const session = liveSession(api.info.accountId);
    state.sessionList.push(session);
    const instanceId = newId('inst');
    const live = records(h(), counting, { instanceId });
    for (let i = 0; i < 5; i++) live.changed();
    await read;
    await live.sync();
    assert.equal(reads, 2, 'five changes, one sync; then the one asked for');
    assert.equal((await api.get(`/tunnel_sessions/${session.id}`)).status, 200);
    await live.close();
    assert.equal(await rowCount(h(), 'agent_sessions', instanceId), 0);
    assert.equal((await api.get(`/tunnel_sessions/${session.id}`)).status, 404);
    assert.equal(await live.sync(), undefined, 'no sync after close');
  });

  it('skips the sessions of an account deleted meanwhile, and tunnels of sessions it does not hold, writing the rest', async () => {
    const api = await h().newAccount();
    const state = new FakeLiveState();
    const gone = liveSession(newId('acct'));
    const kept = liveSession(api.info.accountId);
    const orphan = boundTunnel(liveSession(api.info.accountId));
    state.sessionList.push(gone, kept);
    state.tunnelList.push(boundTunnel(gone), orphan, boundTunnel(kept));
    const outcome = await records(h(), state).sync();
    assert.deepEqual({ sessions: outcome?.sessions, tunnels: outcome?.tunnels }, { sessions: 1, tunnels: 1 });
    assert.equal((await api.get('/tunnel_sessions')).json.tunnel_sessions.length, 1);
  });

  it('logs a failing store and goes on: a sync never throws', async () => {
    const broken = await freshStore(h().kind);
    await broken.dispose();
    const lines: Record<string, unknown>[] = [];
    const log = pino(
      { level: 'warn' },
      new Writable({
        write(chunk, _e, done) {
          lines.push(JSON.parse(String(chunk)));
          done();
        },
      }),
    );
    const state = new FakeLiveState();
    state.sessionList.push(liveSession(newId('acct')));
    const live = new LiveRecords({ store: broken.store, instanceId: newId('inst'), state, commands: new FakeSessionCommands(), log, leaseMs: 30_000 });
    assert.equal(await live.sync(), undefined);
    assert.equal(await live.sync(), undefined);
    await live.close();
    assert.ok(lines.filter((l) => String(l.msg).includes('the sync failed')).length >= 2, JSON.stringify(lines));
  });
});
