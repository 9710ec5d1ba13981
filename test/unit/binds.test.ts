// What binds rest on, without sockets: the ACL's rules as a bind applies them, the tunnel tokens a
// resumed session presents, and the ids derived from a session (stable across its reconnects).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { derivedId, hasPrefix, idTime, newId } from '../../src/core/ids.js';
import { aclAllowsAddress, aclAllowsLabels, aclAllowsName } from '../../src/resources/credentials/credential-acl.js';
import { tunnelToken, urlOfToken } from '../../src/tunnels/binds.js';

describe('ACL rules at bind time', () => {
  it('allow everything when empty, * or bind:*', () => {
    for (const acl of [[], ['*'], ['bind:*'], ['bind:app.example.com', '*']]) {
      assert.ok(aclAllowsName(acl, 'anything.example.org'));
      assert.ok(aclAllowsAddress(acl));
      assert.ok(aclAllowsLabels(acl, { env: 'prod' }));
    }
  });

  it('match a name exactly, or under a wildcard at any depth, never the wildcard base itself', () => {
    const acl = ['bind:app.example.com', 'bind:*.apps.example.com'];
    assert.ok(aclAllowsName(acl, 'app.example.com'));
    assert.ok(!aclAllowsName(acl, 'other.example.com'));
    assert.ok(aclAllowsName(acl, 'a.apps.example.com'));
    assert.ok(aclAllowsName(acl, 'a.b.apps.example.com'));
    assert.ok(aclAllowsName(acl, '*.apps.example.com'));
    assert.ok(!aclAllowsName(acl, 'apps.example.com'));
    assert.ok(!aclAllowsName(acl, 'xapps.example.com'), 'a wildcard is a whole label');
    assert.ok(!aclAllowsAddress(acl), 'no rule names an address');
  });

  it('need every label matched by a label rule, with * for a whole key or value', () => {
    const acl = ['bind:env=prod', 'bind:team=*', 'bind:*=shared', 'bind:app.example.com'];
    assert.ok(aclAllowsLabels(acl, { env: 'prod' }));
    assert.ok(aclAllowsLabels(acl, { env: 'prod', team: 'web' }));
    assert.ok(aclAllowsLabels(acl, { anything: 'shared' }));
    assert.ok(!aclAllowsLabels(acl, { env: 'dev' }));
    assert.ok(!aclAllowsLabels(acl, { env: 'prod', region: 'eu' }), 'one label outside the rules refuses the tunnel');
    assert.ok(!aclAllowsName(['bind:env=prod'], 'env'), 'a label rule allows no name');
  });
});

describe('tunnel tokens', () => {
  const key = randomBytes(32);
  it('give back the URL to the same session and protocol only', () => {
    const token = tunnelToken(key, 'ts_a', 'https', 'https://abc.edgeplane.app:8445');
    assert.equal(urlOfToken(key, 'ts_a', 'https', token), 'https://abc.edgeplane.app:8445');
    assert.equal(urlOfToken(key, 'ts_b', 'https', token), undefined);
    assert.equal(urlOfToken(key, 'ts_a', 'tls', token), undefined);
    assert.equal(urlOfToken(randomBytes(32), 'ts_a', 'https', token), undefined, 'another key (another deployment)');
  });

  it('refuse a token whose URL was changed, and garbage', () => {
    const token = tunnelToken(key, 'ts_a', 'tcp', 'tcp://1.tcp.edgeplane.app:10001');
    const [, mac] = token.split('.');
    const forged = `${Buffer.from('tcp://1.tcp.edgeplane.app:22').toString('base64url')}.${mac}`;
    assert.equal(urlOfToken(key, 'ts_a', 'tcp', forged), undefined);
    for (const garbage of ['', '.', 'abc', 'x.y.z', '.'.repeat(3000)]) assert.equal(urlOfToken(key, 'ts_a', 'tcp', garbage), undefined);
  });
});

describe('derived ids', () => {
  it('are the same for the same seed, differ for another, and keep the time they are given', () => {
    const session = newId('ts');
    const at = idTime(session);
    assert.ok(Math.abs(at.getTime() - Date.now()) < 2_000, 'a new id was made now');
    const a = derivedId('tn', at, `${session}\nhttps\nhttps://a.example.com`);
    assert.equal(a, derivedId('tn', at, `${session}\nhttps\nhttps://a.example.com`));
    assert.notEqual(a, derivedId('tn', at, `${session}\nhttps\nhttps://b.example.com`));
    assert.ok(hasPrefix(a, 'tn'));
    assert.equal(idTime(a).getTime(), Math.floor(at.getTime() / 1000) * 1000);
    assert.equal(idTime('ts_not-base62').getTime(), 1_400_000_000_000);
  });
});
