import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chooseVersion } from '../../src/tunnels/agent-listener.js';
import type { LiveTunnel, TunnelTarget } from '../../src/core/live-agents.js';
import { AgentSessionRegistry, routeKey, type AgentSessionInfo, type SessionHandle } from '../../src/tunnels/registry.js';

function handle(end: (why: string) => void = () => {}): SessionHandle {
  return {
    end,
    open() {
      throw new Error('no streams in this test');
    },
  };
}

function tunnel(id: string, sessionId: string, route?: string, pooling = false, release?: () => void) {
  const live: LiveTunnel = { id, accountId: 'acct_1', sessionId, metadata: '', forwardsTo: '', startedAt: new Date(0) };
  const target: TunnelTarget = {
    tunnelId: id,
    accountId: 'acct_1',
    proto: 'https',
    connect() {
      throw new Error('not connected in this test');
    },
  };
  return { live, target, pooling, ...(route !== undefined && { route }), ...(release && { release }) };
}

function info(id: string, accountId = 'acct_1', credentialId = 'cr_1'): AgentSessionInfo {
  return {
    id,
    accountId,
    credentialId,
    os: 'linux',
    version: '1.7.0',
    clientType: 'library/official/nodejs',
    metadata: '',
    ip: '127.0.0.1',
    startedAt: new Date(0),
    cookie: `cookie-of-${id}`,
  };
}

describe('agent session registry', () => {
  it('lists live sessions by account, copies only', () => {
    const r = new AgentSessionRegistry();
    r.add(info('ts_a'), handle());
    r.add(info('ts_b', 'acct_2', 'cr_2'), handle());
    assert.deepEqual(
      r.list('acct_1').map((s) => s.id),
      ['ts_a'],
    );
    r.list('acct_1')[0]!.id = 'changed';
    assert.equal(r.list('acct_1')[0]!.id, 'ts_a');
    assert.equal(r.count('acct_2'), 1);
  });

  it('resumes a live or recently ended session of the same credential only', () => {
    let now = 1_000_000;
    const r = new AgentSessionRegistry({ resumeWindowMs: 60_000, now: () => now });
    const a = info('ts_a');
    r.add(a, handle());
    assert.deepEqual(r.sessionIdFor('cr_1', 'ts_a', 'cookie-of-ts_a'), { id: 'ts_a', resumed: true });
    const other = r.sessionIdFor('cr_2', 'ts_a', 'cookie-of-ts_a');
    assert.equal(other.resumed, false);
    assert.notEqual(other.id, 'ts_a');
    assert.equal(r.sessionIdFor('cr_1', '', '').resumed, false);
    assert.equal(r.sessionIdFor('cr_1', 'ts_a', 'another cookie').resumed, false, 'the id alone does not resume a session');
    assert.equal(r.sessionIdFor('cr_1', 'ts_a', '').resumed, false);
    assert.equal(r.sessionIdFor('cr_1', 'ts_unknown', 'cookie-of-ts_unknown').resumed, false);
    r.remove(a);
    assert.deepEqual(r.sessionIdFor('cr_1', 'ts_a', 'cookie-of-ts_a'), { id: 'ts_a', resumed: true });
    now += 60_001;
    assert.equal(r.sessionIdFor('cr_1', 'ts_a', 'cookie-of-ts_a').resumed, false);
  });

  it('ends the old connection when a session is resumed on a new one, and ignores its late removal', () => {
    const r = new AgentSessionRegistry();
    const ended: string[] = [];
    const old = info('ts_a');
    r.add(
      old,
      handle((why) => ended.push(why)),
    );
    const fresh = info('ts_a');
    r.add(fresh, handle());
    assert.equal(ended.length, 1);
    r.remove(old); // the old connection's close comes after
    assert.equal(r.count('acct_1'), 1);
  });

  it('ends the sessions of a deleted credential, which can then not be resumed', () => {
    const r = new AgentSessionRegistry();
    const ended: string[] = [];
    r.add(
      info('ts_a'),
      handle((why) => ended.push(why)),
    );
    r.add(
      info('ts_b', 'acct_1', 'cr_2'),
      handle((why) => ended.push(why)),
    );
    const gone = info('ts_c');
    r.add(gone, handle());
    r.remove(gone);
    assert.equal(r.endForCredential('cr_1', 'deleted'), 1);
    assert.deepEqual(ended, ['deleted']);
    assert.equal(r.count('acct_1'), 1);
    assert.equal(r.sessionIdFor('cr_1', 'ts_c', 'cookie-of-ts_c').resumed, false);
  });

  it('remembers a bounded number of ended sessions, forgetting the oldest', () => {
    const r = new AgentSessionRegistry({ maxRemembered: 2 });
    for (const id of ['ts_1', 'ts_2', 'ts_3']) {
      const s = info(id);
      r.add(s, handle());
      r.remove(s);
    }
    assert.equal(r.sessionIdFor('cr_1', 'ts_1', 'cookie-of-ts_1').resumed, false);
    assert.equal(r.sessionIdFor('cr_1', 'ts_3', 'cookie-of-ts_3').resumed, true);
  });
});

describe('agent session registry: tunnels', () => {
  it('routes names exactly, then to the nearest wildcard endpoint', () => {
    const r = new AgentSessionRegistry();
    r.add(info('ts_a'), handle());
    assert.ok(r.addTunnel(tunnel('tn_exact', 'ts_a', routeKey('https', 'app.example.com'))));
    assert.ok(r.addTunnel(tunnel('tn_wild', 'ts_a', routeKey('https', '*.example.com'))));
    assert.ok(r.addTunnel(tunnel('tn_deeper', 'ts_a', routeKey('https', '*.b.example.com'))));
    assert.equal(r.http('app.example.com', 'https')?.tunnelId, 'tn_exact');
    assert.equal(r.http('other.example.com', 'https')?.tunnelId, 'tn_wild');
    assert.equal(r.http('a.b.example.com', 'https')?.tunnelId, 'tn_deeper');
    assert.equal(r.http('x.y.example.com', 'https')?.tunnelId, 'tn_wild');
    assert.equal(r.http('example.com', 'https'), undefined);
    assert.equal(r.http('app.example.com', 'http'), undefined, 'an https endpoint is not served over plain HTTP');
    assert.equal(r.tls('app.example.com'), undefined);
  });

  it('refuses a second tunnel on a route unless both pool, and takes turns among pooled ones', () => {
    const r = new AgentSessionRegistry();
    r.add(info('ts_a'), handle());
    r.add(info('ts_b'), handle());
    const route = routeKey('tcp', 10001);
    r.addTunnel(tunnel('tn_1', 'ts_a', route, true));
    assert.equal(r.conflict(route, false)?.live.id, 'tn_1');
    assert.equal(r.conflict(route, true), undefined);
    r.addTunnel(tunnel('tn_2', 'ts_b', route, true));
    const picked = [r.tcp(10001), r.tcp(10001), r.tcp(10001), r.tcp(10001)].map((t) => t?.tunnelId);
    assert.deepEqual(picked, ['tn_1', 'tn_2', 'tn_1', 'tn_2']);
    const single = routeKey('tls', 'db.example.com');
    r.addTunnel(tunnel('tn_3', 'ts_a', single, false));
    assert.equal(r.conflict(single, true)?.live.id, 'tn_3', 'pooling needs both to ask for it');
  });

  it("drops a session's tunnels, releasing each once, when the session ends", () => {
    const r = new AgentSessionRegistry();
    let changes = 0;
    const counting = new AgentSessionRegistry({ onChange: () => changes++ });
    const released: string[] = [];
    const a = info('ts_a');
    for (const reg of [r, counting]) {
      reg.add(a, handle());
      reg.addTunnel(tunnel('tn_1', 'ts_a', routeKey('tcp', 10001), false, () => released.push('tn_1')));
      reg.addTunnel(tunnel('tn_2', 'ts_a'));
    }
    assert.equal(r.tunnelsOf('ts_a').length, 2);
    assert.equal(r.tunnelCount('acct_1'), 2);
    r.remove(a);
    assert.deepEqual(released, ['tn_1']);
    assert.equal(r.tcp(10001), undefined);
    assert.equal(r.tunnels().length, 0);
    assert.equal(r.addTunnel(tunnel('tn_3', 'ts_a')), false, 'no tunnel for a session that is gone');
    const before = changes;
    counting.remove(a);
    assert.ok(changes > before, 'an ended session is a change the records are told of');
  });

  it('removes one tunnel (Unbind) and frees its route', () => {
    const r = new AgentSessionRegistry();
    r.add(info('ts_a'), handle());
    r.addTunnel(tunnel('tn_1', 'ts_a', routeKey('https', 'app.example.com')));
    assert.ok(r.removeTunnel('tn_1'));
    assert.equal(r.removeTunnel('tn_1'), false);
    assert.equal(r.http('app.example.com', 'https'), undefined);
    assert.equal(r.conflict(routeKey('https', 'app.example.com'), false), undefined);
  });
});

describe('agent protocol version', () => {
  it('is the highest both speak', () => {
    assert.equal(chooseVersion(['3', '2']), '3');
    assert.equal(chooseVersion(['2']), '2');
    assert.equal(chooseVersion(['2', '3']), '3');
    assert.equal(chooseVersion(['1', '4']), undefined);
    assert.equal(chooseVersion([]), undefined);
  });
});
