// SSH certificate authorities and certificates through the API, read back with ssh-keygen -L.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { after, before, it } from 'node:test';
import { SshWriter } from '../../src/lib/ssh/wire.js';
import { describeEachStore, type Api } from '../helpers/harness.js';
import { inspect, keygen, tempDir } from '../helpers/openssh.js';

let dir: string;
let subjects: Record<string, { file: string; publicKey: string }>;

before(() => {
  dir = tempDir();
  subjects = {
    ed25519: keygen(dir, 'ed25519', 'ed25519'),
    ecdsa256: keygen(dir, 'ecdsa256', 'ecdsa', 256),
    ecdsa384: keygen(dir, 'ecdsa384', 'ecdsa', 384),
    ecdsa521: keygen(dir, 'ecdsa521', 'ecdsa', 521),
    rsa2048: keygen(dir, 'rsa2048', 'rsa', 2048),
    rsa3072: keygen(dir, 'rsa3072', 'rsa', 3072),
  };
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

async function ca(api: Api, body: Record<string, unknown> = {}) {
  const res = await api.post('/ssh_certificate_authorities', body);
  assert.equal(res.status, 201, res.text);
  return res.json;
}

const HOUR = 3600_000;

/** An odd number of `bytes` bytes whose top bit is set: an RSA exponent or modulus of bytes × 8 bits. */
function odd(bytes: number): Buffer {
  const b = randomBytes(bytes);
  b[0]! |= 0x80;
  b[bytes - 1]! |= 1;
  return b;
}
const rsaLine = (e: Buffer, n: Buffer) => `ssh-rsa ${new SshWriter().string('ssh-rsa').mpint(e).mpint(n).toBuffer().toString('base64')} made`;
const F4 = Buffer.from([1, 0, 1]);

describeEachStore('SSH certificate authorities and certificates', (h) => {
  it('creates an Ed25519 CA by default, shows only its public key, and seals the private key', async () => {
    const api = await h().newAccount();
    const created = await ca(api, { description: 'prod users' });
    assert.match(created.id, /^sshca_/);
    assert.equal(created.key_type, 'ed25519');
    assert.match(created.public_key, /^ssh-ed25519 AAAA[0-9A-Za-z+/=]+$/);
    assert.deepEqual(Object.keys(created).sort(), ['created_at', 'description', 'id', 'key_type', 'metadata', 'public_key', 'uri']);
    const row = await h().deps.store.db.selectFrom('ssh_certificate_authorities').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    assert.ok(!row.private_key_sealed.includes('PRIVATE KEY'), 'the private key is sealed');
    assert.match(row.private_key_sealed, /^v1:/);
    const everything = JSON.stringify([
      (await api.get(`/ssh_certificate_authorities/${created.id}`)).json,
      (await api.get('/ssh_certificate_authorities')).json,
    ]);
    assert.ok(!everything.includes('private') && !everything.includes(row.private_key_sealed.slice(3, 20)));
    assert.ok(!JSON.stringify(h().logs).includes(row.private_key_sealed.slice(3, 20)), 'nothing sealed reaches the log');
  });

  const caTypes: [Record<string, unknown>, RegExp, string][] = [
    [{ private_key_type: 'ecdsa' }, /^ecdsa-sha2-nistp256 /, 'ecdsa'],
    [{ private_key_type: 'ecdsa', elliptic_curve: 'p384' }, /^ecdsa-sha2-nistp384 /, 'ecdsa'],
    [{ private_key_type: 'ecdsa', elliptic_curve: 'p521' }, /^ecdsa-sha2-nistp521 /, 'ecdsa'],
    [{ private_key_type: 'rsa', key_size: 2048 }, /^ssh-rsa /, 'rsa'],
    [{ private_key_type: 'rsa' }, /^ssh-rsa /, 'rsa'],
  ];
  for (const [body, line, type] of caTypes) {
    it(`creates a CA with ${JSON.stringify(body)}`, async () => {
      const api = await h().newAccount();
      const created = await ca(api, body);
      assert.match(created.public_key, line);
      assert.equal(created.key_type, type);
      if (body.private_key_type === 'rsa' && body.key_size === undefined) {
        const cert = (await api.post('/ssh_user_certificates', { ssh_certificate_authority_id: created.id, public_key: subjects.ed25519!.publicKey })).json
          .certificate;
        assert.match(inspect(cert).signingCa, /^RSA SHA256:\S+ \(using rsa-sha2-512\)$/);
      }
    });
  }

  it('refuses CA options that do not fit the key type', async () => {
    const api = await h().newAccount();
    const cases: [Record<string, unknown>, string][] = [
      [{ private_key_type: 'ecdsa', key_size: 2048 }, 'ERR_EP_1940'],
      [{ private_key_type: 'ed25519', key_size: 4096 }, 'ERR_EP_1940'],
      [{ private_key_type: 'rsa', elliptic_curve: 'p256' }, 'ERR_EP_1942'],
      [{ private_key_type: 'rsa', key_size: 1024 }, 'ERR_EP_1939'],
      [{ private_key_type: 'dsa' }, 'ERR_EP_215'],
      [{ private_key_type: 'ecdsa', elliptic_curve: 'p224' }, 'ERR_EP_215'],
    ];
    for (const [body, code] of cases) {
      const res = await api.post('/ssh_certificate_authorities', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.json.error_code, code, res.json.msg);
    }
    assert.equal((await api.get('/ssh_certificate_authorities')).json.ssh_certificate_authorities.length, 0);
  });

  it('signs user certificates with every CA type for every subject key type, read back by ssh-keygen', async () => {
    const api = await h().newAccount();
    const cas = [
      await ca(api),
      await ca(api, { private_key_type: 'ecdsa' }),
      await ca(api, { private_key_type: 'ecdsa', elliptic_curve: 'p521' }),
      await ca(api, { private_key_type: 'rsa', key_size: 2048 }),
    ];
    const signing: Record<string, RegExp> = {
      ed25519: /^ED25519 .* \(using ssh-ed25519\)$/,
      p256: /^ECDSA .* \(using ecdsa-sha2-nistp256\)$/,
      p521: /^ECDSA .* \(using ecdsa-sha2-nistp521\)$/,
      rsa: /^RSA .* \(using rsa-sha2-512\)$/,
    };
    const subjectTypes: Record<string, [string, string]> = {
      ed25519: ['ssh-ed25519-cert-v01@openssh.com', 'ed25519'],
      ecdsa256: ['ecdsa-sha2-nistp256-cert-v01@openssh.com', 'ecdsa'],
      ecdsa384: ['ecdsa-sha2-nistp384-cert-v01@openssh.com', 'ecdsa'],
      ecdsa521: ['ecdsa-sha2-nistp521-cert-v01@openssh.com', 'ecdsa'],
      rsa2048: ['ssh-rsa-cert-v01@openssh.com', 'rsa'],
      rsa3072: ['ssh-rsa-cert-v01@openssh.com', 'rsa'],
    };
    for (const [c, expectedCa] of cas.map((c, i) => [c, signing[['ed25519', 'p256', 'p521', 'rsa'][i]!]!] as const)) {
      for (const [name, subject] of Object.entries(subjects)) {
        const res = await api.post('/ssh_user_certificates', {
          ssh_certificate_authority_id: c.id,
          public_key: subject.publicKey,
          principals: ['root', 'deploy'],
          valid_after: '2026-01-01T00:00:00Z',
          valid_until: '2026-02-01T12:30:00Z',
          critical_options: { 'force-command': '/usr/bin/uptime', 'source-address': '10.0.0.0/8,192.0.2.7' },
          extensions: { 'permit-pty': '', 'login@example.com': 'alice' },
        });
        assert.equal(res.status, 201, res.text);
        const cert = res.json;
        assert.equal(cert.key_type, subjectTypes[name]![1]);
        assert.ok(cert.certificate.endsWith(` ${cert.id}`), 'the certificate line ends with the resource id');
        const seen = inspect(cert.certificate);
        assert.equal(seen.type, `${subjectTypes[name]![0]} user certificate`, `${c.key_type} CA, ${name} subject`);
        assert.match(seen.signingCa, expectedCa);
        assert.equal(seen.keyId, `"${cert.id}"`);
        assert.notEqual(seen.serial, '0');
        assert.equal(seen.valid, 'from 2026-01-01T00:00:00 to 2026-02-01T12:30:00');
        assert.deepEqual(seen.principals, ['root', 'deploy']);
        assert.deepEqual(seen.criticalOptions, ['force-command /usr/bin/uptime', 'source-address 10.0.0.0/8,192.0.2.7']);
        // ssh-keygen prints an unknown extension's data in hex: string("alice") = 00000005 616c696365.
        assert.deepEqual(seen.extensions, ['login@example.com UNKNOWN OPTION: 00000005616c696365 (len 9)', 'permit-pty']);
      }
    }
  });

  it('applies the defaults: now, 24 hours, permit-pty and permit-user-rc, any user', async () => {
    const api = await h().newAccount();
    const c = await ca(api);
    const before = Date.now();
    const cert = (await api.post('/ssh_user_certificates', { ssh_certificate_authority_id: c.id, public_key: subjects.ed25519!.publicKey })).json;
    const validAfter = Date.parse(cert.valid_after);
    assert.ok(Math.abs(validAfter - before) < 5000, cert.valid_after);
    assert.equal(Date.parse(cert.valid_until) - validAfter, 24 * HOUR);
    assert.deepEqual(cert.extensions, { 'permit-pty': '', 'permit-user-rc': '' });
    assert.deepEqual(cert.critical_options, {});
    assert.deepEqual(cert.principals, []);
    const seen = inspect(cert.certificate);
    assert.deepEqual(seen.extensions, ['permit-pty', 'permit-user-rc']);
    assert.deepEqual(seen.principals, []);
    const none = (await api.post('/ssh_user_certificates', { ssh_certificate_authority_id: c.id, public_key: subjects.ed25519!.publicKey, extensions: {} }))
      .json;
    assert.deepEqual(none.extensions, {}, 'an empty map is kept empty');
    const later = (
      await api.post('/ssh_user_certificates', {
        ssh_certificate_authority_id: c.id,
        public_key: subjects.ed25519!.publicKey,
        valid_after: '2030-01-01T00:00:00+02:00',
      })
    ).json;
    assert.equal(later.valid_after, '2029-12-31T22:00:00Z');
    assert.equal(later.valid_until, '2030-01-01T22:00:00Z', '24 hours after the start of validity');
  });

  it('issues host certificates valid for a year by default, for host names and IPs', async () => {
    const api = await h().newAccount();
    const c = await ca(api);
    const cert = (
      await api.post('/ssh_host_certificates', {
        ssh_certificate_authority_id: c.id,
        public_key: subjects.ecdsa256!.publicKey,
        principals: ['db1.example.com', '*.int.example.com', '192.0.2.10', '2001:db8::10'],
      })
    ).json;
    assert.match(cert.id, /^shcrt_/);
    assert.equal(Date.parse(cert.valid_until) - Date.parse(cert.valid_after), 365 * 24 * HOUR);
    const seen = inspect(cert.certificate);
    assert.equal(seen.type, 'ecdsa-sha2-nistp256-cert-v01@openssh.com host certificate');
    assert.equal(seen.keyId, `"${cert.id}"`);
    assert.deepEqual(seen.principals, ['db1.example.com', '*.int.example.com', '192.0.2.10', '2001:db8::10']);
    const bad = await api.post('/ssh_host_certificates', {
      ssh_certificate_authority_id: c.id,
      public_key: subjects.ecdsa256!.publicKey,
      principals: ['bad host'],
    });
    assert.equal(bad.json.error_code, 'ERR_EP_1969');
    assert.equal(
      (await api.post('/ssh_host_certificates', { ssh_certificate_authority_id: c.id, public_key: subjects.ecdsa256!.publicKey, critical_options: {} })).json
        .error_code,
      'ERR_EP_214',
    );
  });

  it('refuses bad certificate requests with clear 400s and writes nothing', async () => {
    const api = await h().newAccount();
    const other = await h().newAccount();
    const c = await ca(api);
    const theirs = await ca(other);
    const dsa = `ssh-dss ${Buffer.concat([Buffer.from([0, 0, 0, 7]), Buffer.from('ssh-dss'), Buffer.alloc(40, 1)]).toString('base64')} old`;
    const shortRsa = keygen(dir, `rsa1024-${h().kind}`, 'rsa', 1024).publicKey;
    const aCert = (await api.post('/ssh_user_certificates', { ssh_certificate_authority_id: c.id, public_key: subjects.ed25519!.publicKey })).json.certificate;
    const base = { ssh_certificate_authority_id: c.id, public_key: subjects.ed25519!.publicKey };
    const cases: [Record<string, unknown>, string, RegExp?][] = [
      [{ valid_after: '2026-01-02T00:00:00Z', valid_until: '2026-01-01T00:00:00Z' }, 'ERR_EP_1962'],
      [{ valid_after: '2026-01-01T00:00:00Z', valid_until: '2026-01-01T00:00:00Z' }, 'ERR_EP_1962'],
      [{ valid_after: 'yesterday' }, 'ERR_EP_241', /valid_after 'yesterday'/],
      [{ valid_until: '2026-13-01T00:00:00Z' }, 'ERR_EP_241'],
      [{ valid_after: '2026-01-01 00:00:00' }, 'ERR_EP_241'],
      [{ critical_options: { 'no-pty': '' } }, 'ERR_EP_1965', /no-pty/],
      [{ critical_options: { 'source-address': '10.0.0.1/8' } }, 'ERR_EP_1967', /10\.0\.0\.1\/8/],
      [{ critical_options: { 'source-address': '10.0.0.0/8,banana' } }, 'ERR_EP_1967', /banana/],
      [{ critical_options: { 'force-command': '' } }, 'ERR_EP_1968'],
      [{ extensions: { 'permit-pty': 'yes' } }, 'ERR_EP_1968'],
      [{ extensions: { 'made-up': '' } }, 'ERR_EP_1968', /name@domain/],
      [{ principals: ['bad user'] }, 'ERR_EP_1969'],
      [{ ssh_certificate_authority_id: theirs.id }, 'ERR_EP_1949', new RegExp(theirs.id)],
      [{ ssh_certificate_authority_id: 'ca_000000000000000000000000000' }, 'ERR_EP_1949'],
      [{ public_key: dsa }, 'ERR_EP_1950', /DSA/],
      [{ public_key: shortRsa }, 'ERR_EP_1950', /1024 bits/],
      [{ public_key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBad' }, 'ERR_EP_1950'],
      [{ public_key: 'hello world' }, 'ERR_EP_1950'],
      [{ public_key: fs.readFileSync(subjects.ed25519!.file, 'utf8') }, 'ERR_EP_1950', /private key/],
      [{ public_key: aCert }, 'ERR_EP_1950', /certificate/],
      [{ public_key: subjects.ed25519!.publicKey.replace('ssh-ed25519', 'ssh-rsa') }, 'ERR_EP_1950'],
    ];
    for (const [fields, code, message] of cases) {
      const res = await api.post('/ssh_user_certificates', { ...base, ...fields });
      assert.equal(res.status, 400, `${JSON.stringify(fields).slice(0, 120)}: ${res.text}`);
      assert.equal(res.json.error_code, code, `${JSON.stringify(fields).slice(0, 120)}: ${res.json.msg}`);
      if (message) assert.match(res.json.msg, message);
    }
    assert.equal((await api.get('/ssh_user_certificates')).json.ssh_user_certificates.length, 1, 'only the first, good certificate');
  });

  it('certifies RSA keys of 2048 to 16384 bits with an exponent of at most 64 bits, and refuses others (1950) as OpenSSH would', async () => {
    const api = await h().newAccount();
    const c = await ca(api);
    const post = (public_key: string) => api.post('/ssh_user_certificates', { ssh_certificate_authority_id: c.id, public_key });
    for (const line of [rsaLine(F4, odd(256)), rsaLine(F4, odd(2048)), rsaLine(odd(8), odd(512))]) {
      const res = await post(line);
      assert.equal(res.status, 201, res.text);
    }
    const refused: [string, RegExp][] = [
      [rsaLine(F4, odd(8192)), /RSA key of 65536 bits; OpenSSH refuses RSA keys of more than 16384 bits/],
      [rsaLine(F4, Buffer.concat([Buffer.from([1]), odd(2048)])), /RSA key of 16385 bits/],
      [rsaLine(odd(1025), odd(256)), /public exponent of 8200 bits; at most 64 bits/],
      [rsaLine(odd(9), odd(256)), /public exponent of 72 bits/],
      [rsaLine(Buffer.from([1, 0, 0]), odd(256)), /even or below 3/],
      [rsaLine(Buffer.from([1]), odd(256)), /even or below 3/],
    ];
    for (const [line, message] of refused) {
      const res = await post(line);
      assert.equal(res.status, 400, res.text.slice(0, 200));
      assert.equal(res.json.error_code, 'ERR_EP_1950');
      assert.match(res.json.msg, message);
    }
    assert.equal((await api.get('/ssh_user_certificates')).json.ssh_user_certificates.length, 3, 'only the good keys');
  });

  it('makes at most 2 RSA CA keys of an account at once: more are 429 1976 with Retry-After, others are answered meanwhile', async () => {
    const api = await h().newAccount();
    const other = await h().newAccount();
    let made = 0;
    const burst = Array.from({ length: 10 }, () =>
      api.post('/ssh_certificate_authorities', { private_key_type: 'rsa', key_size: 4096 }).then((res) => {
        if (res.status === 201) made++;
        return res;
      }),
    );
    // While the two keys are being made (a second or more each), the account and others are answered.
    assert.equal((await other.get('/ssh_certificate_authorities')).status, 200);
    assert.equal((await api.post('/ssh_certificate_authorities', { private_key_type: 'ed25519' })).status, 201, 'Ed25519 is not limited');
    assert.ok(made < 2, 'answered while an RSA key is still being made');
    const results = await Promise.all(burst);
    assert.deepEqual(results.map((r) => r.status).sort(), [201, 201, ...Array<number>(8).fill(429)]);
    for (const res of results.filter((r) => r.status === 429)) {
      assert.equal(res.json.error_code, 'ERR_EP_1976');
      assert.equal(res.headers.get('retry-after'), '2');
      assert.match(res.json.msg, /already making 2 RSA keys/);
    }
    assert.equal((await api.get('/ssh_certificate_authorities')).json.ssh_certificate_authorities.length, 3);
    const later = await api.post('/ssh_certificate_authorities', { private_key_type: 'rsa', key_size: 2048 });
    assert.equal(later.status, 201, 'the slots are free again');
  });

  it('refuses a read_only key before any key is made: every one of a burst is 403, none 429', async () => {
    const readOnly = await (await h().newAccount()).asNewUser('read_only');
    const results = await Promise.all(
      Array.from({ length: 6 }, () => readOnly.post('/ssh_certificate_authorities', { private_key_type: 'rsa', key_size: 4096 })),
    );
    assert.deepEqual(
      results.map((r) => r.status),
      Array<number>(6).fill(403),
    );
  });

  it('updates only description and metadata, and refuses to delete a CA with certificates', async () => {
    const api = await h().newAccount();
    const c = await ca(api);
    const cert = (await api.post('/ssh_user_certificates', { ssh_certificate_authority_id: c.id, public_key: subjects.ed25519!.publicKey })).json;
    const patched = await api.patch(`/ssh_user_certificates/${cert.id}`, { description: 'laptop' });
    assert.equal(patched.json.description, 'laptop');
    assert.equal(patched.json.certificate, cert.certificate);
    assert.equal((await api.patch(`/ssh_user_certificates/${cert.id}`, { principals: ['x'] })).json.error_code, 'ERR_EP_214');
    const host = (await api.post('/ssh_host_certificates', { ssh_certificate_authority_id: c.id, public_key: subjects.ed25519!.publicKey })).json;
    const refused = await api.delete(`/ssh_certificate_authorities/${c.id}`);
    assert.equal(refused.status, 409);
    assert.equal(refused.json.error_code, 'ERR_EP_1964');
    assert.match(refused.json.msg, /2 certificate/);
    await api.delete(`/ssh_user_certificates/${cert.id}`);
    await api.delete(`/ssh_host_certificates/${host.id}`);
    assert.equal((await api.delete(`/ssh_certificate_authorities/${c.id}`)).status, 204);
  });
});
