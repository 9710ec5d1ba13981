import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { Sealer } from '../../src/lib/crypto/sealer.js';
import { loadMasterKey } from '../../src/master-key.js';

describe('sealing private keys at rest', () => {
  const sealer = new Sealer(randomBytes(32));

  it('round-trips, and never stores the plaintext', () => {
    const secret = '-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----\n';
    const sealed = sealer.seal(secret, 'sshca_1');
    assert.ok(!sealed.includes('PRIVATE KEY') && !sealed.includes('abc'));
    assert.equal(sealer.open(sealed, 'sshca_1'), secret);
    assert.notEqual(sealer.seal(secret, 'sshca_1'), sealed, 'a fresh IV every time');
  });

  it('refuses a value moved to another row, tampered with, or opened with another key', () => {
    const sealed = sealer.seal('secret', 'sshca_1');
    assert.throws(() => sealer.open(sealed, 'sshca_2'));
    const parts = sealed.split(':');
    parts[3] = Buffer.from('x' + Buffer.from(parts[3]!, 'base64').toString('latin1'), 'latin1').toString('base64');
    assert.throws(() => sealer.open(parts.join(':'), 'sshca_1'));
    assert.throws(() => new Sealer(randomBytes(32)).open(sealed, 'sshca_1'));
  });

  it('creates the key file once with mode 0600, or takes EDGEPLANE_MASTER_KEY', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'edgeplane-key-'));
    try {
      const first = loadMasterKey(dir, undefined);
      assert.equal(fs.statSync(path.join(dir, 'master.key')).mode & 0o777, 0o600);
      assert.deepEqual(loadMasterKey(dir, undefined).key, first.key);
      const hex = randomBytes(32).toString('hex');
      assert.equal(loadMasterKey(dir, hex).key.toString('hex'), hex);
      assert.throws(() => loadMasterKey(dir, 'too short'), /32 bytes/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
