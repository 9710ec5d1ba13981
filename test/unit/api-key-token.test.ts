import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hashSecret, newKeyMaterial, parseAuthorization, sameDigest } from '../../src/resources/api-keys/api-key.token.js';

describe('API key tokens', () => {
  it('hashes a secret to the SHA-256 of its UTF-8 bytes, as lowercase hex', () => {
    // FIPS 180-2's test vector for "abc".
    assert.equal(hashSecret('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('compares digests by every character', () => {
    const digest = hashSecret('secret');
    assert.equal(sameDigest(digest, hashSecret('secret')), true);
    const flip = (at: number) => digest.slice(0, at) + (digest[at] === '0' ? '1' : '0') + digest.slice(at + 1);
    assert.equal(sameDigest(digest, flip(0)), false);
    assert.equal(sameDigest(digest, flip(63)), false);
    assert.equal(sameDigest(digest, digest.slice(0, 63)), false);
    assert.equal(sameDigest('', ''), true);
  });

  it('issues a token whose secret hashes to the stored hash, and parses it back', () => {
    const { id, token, secret_hash } = newKeyMaterial();
    const { keyId, secret } = parseAuthorization(`Bearer ${token}`);
    assert.equal(keyId, id);
    assert.equal(sameDigest(hashSecret(secret), secret_hash), true);
    assert.equal(sameDigest(hashSecret(`${secret}x`), secret_hash), false);
  });
});
