// Certificates read back as the SSH listener reads a client's: every field the signer wrote, and
// the CA's signature checked for each key type a CA may have (Ed25519, ECDSA on three curves,
// RSA with rsa-sha2-512), failing on a changed byte or another key.
import assert from 'node:assert/strict';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { test } from 'node:test';
import { parseCertificate, signCertificate, verifySshSignature } from '../../src/lib/ssh/certificate.js';
import { toSshPublicKey } from '../../src/lib/ssh/keys.js';

const keys: Record<string, () => KeyObject> = {
  ed25519: () => generateKeyPairSync('ed25519').privateKey,
  p256: () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
  p384: () => generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey,
  p521: () => generateKeyPairSync('ec', { namedCurve: 'P-521' }).privateKey,
  rsa: () => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey,
};

for (const [caKind, makeCa] of Object.entries(keys)) {
  for (const subjectKind of ['ed25519', 'p256', 'rsa']) {
    test(`reads a user certificate of a ${subjectKind} key signed by a ${caKind} CA, and checks its signature`, () => {
      const ca = makeCa();
      const subject = toSshPublicKey(keys[subjectKind]!());
      const validAfter = new Date('2026-01-01T00:00:00Z');
      const validBefore = new Date('2027-01-01T00:00:00Z');
      const cert = signCertificate(ca, {
        type: 'user',
        subject,
        keyId: 'me@laptop',
        serial: 42n,
        principals: ['me', 'deploy'],
        validAfter,
        validBefore,
        criticalOptions: { 'source-address': '10.0.0.0/8' },
        extensions: { 'permit-pty': '' },
      });
      const read = parseCertificate(cert.blob);
      assert.deepEqual(
        { ...read, signatureKey: undefined, signature: undefined, signed: undefined },
        {
          keyAlgorithm: subject.algorithm,
          subject: subject.blob,
          serial: 42n,
          type: 'user',
          keyId: 'me@laptop',
          principals: ['me', 'deploy'],
          validAfter: BigInt(validAfter.getTime() / 1000),
          validBefore: BigInt(validBefore.getTime() / 1000),
          criticalOptions: ['source-address'],
          signatureKey: undefined,
          signature: undefined,
          signed: undefined,
        },
      );
      assert.deepEqual(read.signatureKey, toSshPublicKey(ca).blob);
      assert.equal(verifySshSignature(read.signatureKey, read.signed, read.signature), true);
      const changed = Buffer.from(read.signed);
      changed[changed.length - 10]! ^= 1;
      assert.equal(verifySshSignature(read.signatureKey, changed, read.signature), false, 'a changed byte');
      assert.equal(verifySshSignature(toSshPublicKey(makeCa()).blob, read.signed, read.signature), false, 'another key');
    });
  }
}

test('refuses what is not a certificate', () => {
  const key = toSshPublicKey(keys.ed25519!());
  assert.throws(() => parseCertificate(key.blob), /not a certificate/);
  const ca = keys.ed25519!();
  const cert = signCertificate(ca, { type: 'user', subject: key, keyId: '', principals: [], validAfter: new Date(), validBefore: new Date(Date.now() + 1000) });
  assert.throws(() => parseCertificate(cert.blob.subarray(0, cert.blob.length - 3)), /truncated/);
  assert.throws(() => parseCertificate(Buffer.concat([cert.blob, Buffer.from([0])])), /trailing/);
  assert.equal(verifySshSignature(key.blob, Buffer.from('data'), Buffer.from('not a signature')), false);
});
