// Certificates from the API against a real sshd and ssh on 127.0.0.1: the final word on
// whether they are right. Runs on SQLite: the store is not what is tested here.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { startHarness, type Api, type Harness } from '../helpers/harness.js';
import { keygen, sshLogin, startSshd, tempDir, type Sshd } from '../helpers/openssh.js';

describe('OpenSSH accepts edgeplane certificates', () => {
  let harness: Harness;
  let api: Api;
  let dir: string;
  let sshd: Sshd;
  let trustedCa: { id: string; public_key: string };
  let otherCa: { id: string; public_key: string };
  let user: { file: string; publicKey: string };

  const certify = async (caId: string, fields: Record<string, unknown>) => {
    const res = await api.post('/ssh_user_certificates', { ssh_certificate_authority_id: caId, public_key: user.publicKey, ...fields });
    assert.equal(res.status, 201, res.text);
    return res.json.certificate as string;
  };

  before(async () => {
    harness = await startHarness('sqlite');
    api = await harness.newAccount();
    dir = tempDir();
    trustedCa = (await api.post('/ssh_certificate_authorities', { private_key_type: 'ecdsa', elliptic_curve: 'p384' })).json;
    otherCa = (await api.post('/ssh_certificate_authorities', {})).json;
    user = keygen(dir, 'user', 'ed25519');
    const hostKey = keygen(dir, 'host', 'ed25519');
    sshd = await startSshd(dir, { trustedUserCa: trustedCa.public_key, hostKeyFile: hostKey.file });
  });

  after(async () => {
    await sshd?.stop();
    await harness?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('lets in a user certificate for a listed principal', async () => {
    const certificate = await certify(trustedCa.id, { principals: ['root'] });
    const login = sshLogin(dir, sshd.port, { keyFile: user.file, certificate });
    assert.equal(login.status, 0, `${login.stderr}\n${sshd.log()}`);
    assert.match(await sshd.waitForLog(/Accepted publickey for root/), /Accepted publickey for root from 127\.0\.0\.1 .*ED25519-CERT .* CA ECDSA/);
  });

  it('lets in an RSA-signed certificate (rsa-sha2-512)', async () => {
    const rsaCa = (await api.post('/ssh_certificate_authorities', { private_key_type: 'rsa', key_size: 2048 })).json;
    const rsaDir = tempDir();
    const hostKey = keygen(rsaDir, 'host', 'ed25519');
    const rsaSshd = await startSshd(rsaDir, { trustedUserCa: rsaCa.public_key, hostKeyFile: hostKey.file });
    try {
      const certificate = await certify(rsaCa.id, { principals: ['root'] });
      const login = sshLogin(rsaDir, rsaSshd.port, { keyFile: user.file, certificate });
      assert.equal(login.status, 0, `${login.stderr}\n${rsaSshd.log()}`);
    } finally {
      await rsaSshd.stop();
      fs.rmSync(rsaDir, { recursive: true, force: true });
    }
  });

  it('refuses a certificate for another principal', async () => {
    const certificate = await certify(trustedCa.id, { principals: ['alice'] });
    const login = sshLogin(dir, sshd.port, { keyFile: user.file, certificate });
    assert.equal(login.status, 255);
    assert.match(await sshd.waitForLog(/not a listed principal|Certificate invalid/), /not a listed principal|Certificate invalid/);
  });

  it('refuses an expired certificate', async () => {
    const certificate = await certify(trustedCa.id, { principals: ['root'], valid_after: '2020-01-01T00:00:00Z', valid_until: '2020-01-02T00:00:00Z' });
    const login = sshLogin(dir, sshd.port, { keyFile: user.file, certificate });
    assert.equal(login.status, 255);
    assert.match(await sshd.waitForLog(/expired/), /expired/);
  });

  it('refuses a certificate from a CA it does not trust', async () => {
    const certificate = await certify(otherCa.id, { principals: ['root'] });
    const count = (pattern: RegExp) => (log: string) => log.match(pattern)?.length ?? 0;
    const accepted = count(/Accepted publickey/g);
    const refused = count(/Connection closed by authenticating user root/g);
    const [acceptedBefore, refusedBefore] = [accepted(sshd.log()), refused(sshd.log())];
    const login = sshLogin(dir, sshd.port, { keyFile: user.file, certificate });
    assert.equal(login.status, 255);
    // sshd names the untrusted CA only at debug level; it closed the attempt and accepted nothing.
    const log = await sshd.waitForLog((l) => refused(l) > refusedBefore);
    assert.equal(refused(log), refusedBefore + 1);
    assert.equal(accepted(log), acceptedBefore);
  });

  it('refuses a certificate whose source-address does not include the client', async () => {
    const certificate = await certify(trustedCa.id, { principals: ['root'], critical_options: { 'source-address': '192.0.2.0/24' } });
    assert.equal(sshLogin(dir, sshd.port, { keyFile: user.file, certificate }).status, 255);
    const allowed = await certify(trustedCa.id, { principals: ['root'], critical_options: { 'source-address': '192.0.2.0/24,127.0.0.1' } });
    assert.equal(sshLogin(dir, sshd.port, { keyFile: user.file, certificate: allowed }).status, 0);
  });

  it('lets ssh trust a host certificate through an @cert-authority known_hosts line', async () => {
    const hostDir = tempDir();
    const hostKey = keygen(hostDir, 'host', 'ecdsa', 256);
    const hostCa = (await api.post('/ssh_certificate_authorities', {})).json;
    const hostCert = (
      await api.post('/ssh_host_certificates', {
        ssh_certificate_authority_id: hostCa.id,
        public_key: hostKey.publicKey,
        principals: ['127.0.0.1', 'localhost'],
      })
    ).json.certificate;
    const hostSshd = await startSshd(hostDir, { trustedUserCa: trustedCa.public_key, hostKeyFile: hostKey.file, hostCertificate: hostCert });
    try {
      const certificate = await certify(trustedCa.id, { principals: ['root'] });
      const trusted = sshLogin(hostDir, hostSshd.port, { keyFile: user.file, certificate, knownHosts: `@cert-authority * ${hostCa.public_key}` });
      assert.equal(trusted.status, 0, `${trusted.stderr}\n${hostSshd.log()}`);
      const untrusted = sshLogin(hostDir, hostSshd.port, { keyFile: user.file, certificate, knownHosts: `@cert-authority * ${otherCa.public_key}` });
      assert.equal(untrusted.status, 255);
      assert.match(untrusted.stderr, /Host key verification failed/);
    } finally {
      await hostSshd.stop();
      fs.rmSync(hostDir, { recursive: true, force: true });
    }
  });
});
