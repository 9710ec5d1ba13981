import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chooseVersion } from '../../src/tunnels/agent-listener.js';
import { AgentSessionRegistry, type AgentSessionInfo } from '../../src/tunnels/registry.js';

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
  };
}

describe('agent session registry', () => {
  it('lists live sessions by account, copies only', () => {
    const r = new AgentSessionRegistry();
    r.add(info('ts_a'), () => {});
    r.add(info('ts_b', 'acct_2', 'cr_2'), () => {});
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
    r.add(a, () => {});
    assert.deepEqual(r.sessionIdFor('cr_1', 'ts_a'), { id: 'ts_a', resumed: true });
    const other = r.sessionIdFor('cr_2', 'ts_a');
    assert.equal(other.resumed, false);
    assert.notEqual(other.id, 'ts_a');
    assert.equal(r.sessionIdFor('cr_1', '').resumed, false);
    assert.equal(r.sessionIdFor('cr_1', 'ts_unknown').resumed, false);
    r.remove(a);
    assert.deepEqual(r.sessionIdFor('cr_1', 'ts_a'), { id: 'ts_a', resumed: true });
    now += 60_001;
    assert.equal(r.sessionIdFor('cr_1', 'ts_a').resumed, false);
  });

  it('ends the old connection when a session is resumed on a new one, and ignores its late removal', () => {
    const r = new AgentSessionRegistry();
    const ended: string[] = [];
    const old = info('ts_a');
    r.add(old, (why) => ended.push(why));
    const fresh = info('ts_a');
    r.add(fresh, () => {});
    assert.equal(ended.length, 1);
    r.remove(old); // the old connection's close comes after
    assert.equal(r.count('acct_1'), 1);
  });

  it('ends the sessions of a deleted credential, which can then not be resumed', () => {
    const r = new AgentSessionRegistry();
    const ended: string[] = [];
    r.add(info('ts_a'), (why) => ended.push(why));
    r.add(info('ts_b', 'acct_1', 'cr_2'), (why) => ended.push(why));
    const gone = info('ts_c');
    r.add(gone, () => {});
    r.remove(gone);
    assert.equal(r.endForCredential('cr_1', 'deleted'), 1);
    assert.deepEqual(ended, ['deleted']);
    assert.equal(r.count('acct_1'), 1);
    assert.equal(r.sessionIdFor('cr_1', 'ts_c').resumed, false);
  });

  it('remembers a bounded number of ended sessions, forgetting the oldest', () => {
    const r = new AgentSessionRegistry({ maxRemembered: 2 });
    for (const id of ['ts_1', 'ts_2', 'ts_3']) {
      const s = info(id);
      r.add(s, () => {});
      r.remove(s);
    }
    assert.equal(r.sessionIdFor('cr_1', 'ts_1').resumed, false);
    assert.equal(r.sessionIdFor('cr_1', 'ts_3').resumed, true);
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
