// SSH credentials: public keys registered for `ssh -R`, with the ACL and ownership of credentials.
// The key forms taken and refused (each 400 saying why), the canonical form kept, one key per
// account (409 naming the credential that has it, also for two creates at the same moment),
// tenancy, the hook a delete calls, and the reads across accounts the SSH listener makes
// (ssh-credential.auth.ts).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { after, before, it } from 'node:test';
import pg from 'pg';
import { pino } from 'pino';
import { buildApp } from '../../src/app.js';
import { UniqueViolation, translateStoreError } from '../../src/db/store.js';
import { createDeps } from '../../src/deps.js';
import { authorizedKeysLine, toSshPublicKey } from '../../src/lib/ssh/keys.js';
import { SshWriter } from '../../src/lib/ssh/wire.js';
import { sshCredentialAcl, sshCredentialsForKey, sshKeyFingerprint, usableSshCredentialIds } from '../../src/resources/ssh-credentials/ssh-credential.auth.js';
import { sshCredentialDefinition } from '../../src/resources/ssh-credentials/ssh-credential.resource.js';
import { describeEachStore, type Api } from '../helpers/harness.js';
import { keygen, tempDir } from '../helpers/openssh.js';

/** A fresh Ed25519 key: its authorized_keys line (with a comment) and its wire blob. */
function newKey(comment = 'laptop@example'): { line: string; blob: Buffer; canonical: string } {
  const key = toSshPublicKey(generateKeyPairSync('ed25519').publicKey);
  return { line: authorizedKeysLine(key, comment), blob: key.blob, canonical: `ssh-ed25519 ${key.blob.toString('base64')}` };
}

/** What ssh-keygen -l says of a public key file: its SHA256 fingerprint. */
function opensshFingerprint(pubFile: string): string {
  const res = spawnSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', pubFile], { encoding: 'utf8' });
  assert.equal(res.status, 0, res.stderr);
  return /(SHA256:\S+)/.exec(res.stdout)![1]!;
}

const b64 = (writer: SshWriter) => writer.toBuffer().toString('base64');

let dir: string;
before(() => {
  dir = tempDir('edgeplane-sshcr-');
});
after(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

async function made(api: Api, body: Record<string, unknown>): Promise<Record<string, unknown> & { id: string }> {
  const res = await api.post('/ssh_credentials', body);
  assert.equal(res.status, 201, res.text);
  return res.json;
}

describeEachStore('SSH credentials', (h) => {
  it('creates, gets, lists, updates and deletes an SSH credential; the key is kept as `<type> <base64>`', async () => {
    const api = await h().newAccount();
    const key = newKey('me@laptop with spaces');
    const created = await api.post('/ssh_credentials', {
      description: 'laptop',
      metadata: '{"team":"ops"}',
      acl: ['bind:App.example.com'],
      public_key: `  ${key.line}\n`,
    });
    assert.equal(created.status, 201, created.text);
    assert.match(created.json.id, /^sshcr_[0-9A-Za-z]{27}$/);
    assert.equal(created.json.uri, `${h().baseUrl}/ssh_credentials/${created.json.id}`);
    assert.deepEqual(Object.keys(created.json).sort(), ['acl', 'created_at', 'description', 'id', 'metadata', 'owner_id', 'public_key', 'uri']);
    assert.equal(created.json.public_key, key.canonical, 'the comment and the whitespace are dropped');
    assert.deepEqual(created.json.acl, ['bind:app.example.com']);
    assert.equal(created.json.owner_id, api.info.userId);
    assert.equal(created.json.description, 'laptop');
    assert.equal(created.json.metadata, '{"team":"ops"}');

    const row = await h().deps.store.db.selectFrom('ssh_credentials').selectAll().where('id', '=', created.json.id).executeTakeFirstOrThrow();
    assert.equal(row.account_id, api.info.accountId);
    assert.equal(row.public_key, key.canonical);
    assert.equal(row.key_fingerprint, sshKeyFingerprint(key.blob));
    assert.equal(row.acl, '["bind:app.example.com"]');

    const fetched = await api.get(`/ssh_credentials/${created.json.id}`);
    assert.equal(fetched.status, 200);
    assert.deepEqual(fetched.json, created.json);
    const listed = await api.get('/ssh_credentials');
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.json, { ssh_credentials: [created.json], uri: `${h().baseUrl}/ssh_credentials`, next_page_uri: null });

    const patched = await api.patch(`/ssh_credentials/${created.json.id}`, { metadata: 'm2', acl: ['bind:*.example.com', 'bind:env=prod'] });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.json.description, 'laptop', 'absent fields are left');
    assert.equal(patched.json.metadata, 'm2');
    assert.deepEqual(patched.json.acl, ['bind:*.example.com', 'bind:env=prod']);
    assert.equal(patched.json.public_key, key.canonical);
    const nulled = await api.patch(`/ssh_credentials/${created.json.id}`, { acl: null, description: 'd2' });
    assert.deepEqual(nulled.json.acl, ['bind:*.example.com', 'bind:env=prod'], 'a null acl is left');
    assert.equal(nulled.json.description, 'd2');
    assert.deepEqual((await api.patch(`/ssh_credentials/${created.json.id}`, { acl: [] })).json.acl, []);
    assert.equal(
      (await api.patch(`/ssh_credentials/${created.json.id}`, { id: created.json.id, description: 'with id' })).status,
      200,
      'the same id is accepted',
    );

    // The key and the owner are fixed; a PATCH that changes nothing is refused.
    for (const body of [{ public_key: newKey().line }, { owner_id: api.info.userId }]) {
      const res = await api.patch(`/ssh_credentials/${created.json.id}`, body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.json.error_code, 'ERR_EP_251', res.json.msg);
    }
    for (const body of [{}, { acl: null, description: null }])
      assert.equal((await api.patch(`/ssh_credentials/${created.json.id}`, body)).json.error_code, 'ERR_EP_250');
    assert.equal((await api.patch(`/ssh_credentials/${created.json.id}`, { token: 'x' })).json.error_code, 'ERR_EP_214');

    assert.equal((await api.delete(`/ssh_credentials/${created.json.id}`)).status, 204);
    const gone = await api.get(`/ssh_credentials/${created.json.id}`);
    assert.equal(gone.status, 404);
    assert.equal(gone.json.error_code, 'ERR_EP_252');
    assert.equal((await api.delete(`/ssh_credentials/${created.json.id}`)).status, 404);
    assert.deepEqual((await api.get('/ssh_credentials')).json.ssh_credentials, []);
    // Its key may be registered again once it is gone.
    assert.equal((await api.post('/ssh_credentials', { public_key: key.line })).status, 201);
  });

  it('defaults: no description or metadata, an empty ACL; public_key is required', async () => {
    const api = await h().newAccount();
    const created = await made(api, { public_key: newKey().line });
    assert.equal(created.description, '');
    assert.equal(created.metadata, '');
    assert.deepEqual(created.acl, []);
    const missing = await api.post('/ssh_credentials', { description: 'no key' });
    assert.equal(missing.status, 400);
    assert.match(missing.json.msg, /public_key/);
    const notString = await api.post('/ssh_credentials', { public_key: 7 });
    assert.equal(notString.status, 400);
    assert.match(notString.json.msg, /public_key/);
    const long = await api.post('/ssh_credentials', { public_key: `ssh-ed25519 ${'A'.repeat(16400)}` });
    assert.equal(long.status, 400);
    assert.match(long.json.msg, /public_key/);
    const tooLongDescription = await api.post('/ssh_credentials', { public_key: newKey().line, description: 'é'.repeat(128) });
    assert.equal(tooLongDescription.json.error_code, 'ERR_EP_101');
    const tooLongMetadata = await api.post('/ssh_credentials', { public_key: newKey().line, metadata: 'm'.repeat(4097) });
    assert.equal(tooLongMetadata.json.error_code, 'ERR_EP_100');
    assert.equal((await api.get('/ssh_credentials')).json.ssh_credentials.length, 1, 'refused creations wrote nothing');
  });

  it('pages newest first with limit and before_id', async () => {
    const api = await h().newAccount();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await made(api, { public_key: newKey().line, description: `k${i}` })).id);
    const seen: string[] = [];
    let next: string | null = '/ssh_credentials?limit=2';
    let pages = 0;
    while (next) {
      const page = await api.get(next);
      assert.equal(page.status, 200, page.text);
      assert.ok(page.json.ssh_credentials.length <= 2);
      seen.push(...page.json.ssh_credentials.map((c: { id: string }) => c.id));
      next = page.json.next_page_uri;
      pages++;
    }
    assert.equal(pages, 3);
    assert.deepEqual(seen, [...ids].reverse());
    const wrongCursor = await api.get(`/ssh_credentials?before_id=cr_${'0'.repeat(27)}`);
    assert.equal(wrongCursor.json.error_code, 'ERR_EP_234');
  });

  it('takes the keys ssh-keygen makes (Ed25519, ECDSA, RSA), each with the fingerprint OpenSSH gives it', async () => {
    const api = await h().newAccount();
    const kinds: [string, 'ed25519' | 'ecdsa' | 'rsa', number | undefined, string][] = [
      ['ed', 'ed25519', undefined, 'ssh-ed25519'],
      ['ec256', 'ecdsa', 256, 'ecdsa-sha2-nistp256'],
      ['ec384', 'ecdsa', 384, 'ecdsa-sha2-nistp384'],
      ['ec521', 'ecdsa', 521, 'ecdsa-sha2-nistp521'],
      ['rsa2048', 'rsa', 2048, 'ssh-rsa'],
    ];
    for (const [name, type, bits, algorithm] of kinds) {
      const { file, publicKey } = keygen(dir, `${name}-${h().kind}-${randomBytes(3).toString('hex')}`, type, bits);
      const [keyType, base64] = publicKey.split(' ') as [string, string];
      assert.equal(keyType, algorithm);
      const created = await made(api, { public_key: publicKey });
      assert.equal(created.public_key, `${keyType} ${base64}`, name);
      const row = await h().deps.store.db.selectFrom('ssh_credentials').select('key_fingerprint').where('id', '=', created.id).executeTakeFirstOrThrow();
      assert.equal(row.key_fingerprint, opensshFingerprint(`${file}.pub`), name);
    }
    // No comment, CRLF, tabs: the same key line.
    const bare = newKey();
    assert.equal((await made(api, { public_key: `${bare.canonical}\r\n` })).public_key, bare.canonical);
    const tabs = newKey();
    assert.equal((await made(api, { public_key: tabs.canonical.replace(' ', '\t') + '\tcomment' })).public_key, tabs.canonical);
  });

  it('refuses what is not one supported key, with a 400 saying why, and writes nothing', async () => {
    const api = await h().newAccount();
    const one = newKey();
    const two = newKey();
    const ed = generateKeyPairSync('ed25519');
    const rsa1024 = toSshPublicKey(generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey);
    const cases: [string, string, RegExp][] = [
      ['empty', '', /is empty/],
      ['blank', ' \n\t ', /is empty/],
      ['not a key', 'hello', /is not an OpenSSH public key/],
      ['words', 'hello world, this is not a key', /not base64|could not be decoded|unsupported algorithm/],
      ['the type alone', 'ssh-ed25519', /is not an OpenSSH public key/],
      ['several keys', `${one.line}\n${two.line}`, /holds 2 lines.*one key/],
      ['the same key twice', `${one.line}\n${one.line}\n`, /holds 2 lines/],
      ['two keys on one line', `${one.canonical} ${two.canonical}`, /several keys on one line/],
      ['an option', `no-pty ${one.line}`, /options before the key type \('no-pty'\)/],
      ['quoted options', `restrict,command="echo hi",from="10.0.0.0/8" ${one.line}`, /options before the key type/],
      ['an unknown type', `ssh-foo ${b64(new SshWriter().string('ssh-foo').string(randomBytes(32)))}`, /unsupported algorithm 'ssh-foo'/],
      ['an inner type that differs', `ssh-rsa ${one.blob.toString('base64')}`, /says 'ssh-rsa' but holds a 'ssh-ed25519' key/],
      [
        'an inner curve that differs',
        `ecdsa-sha2-nistp256 ${b64(new SshWriter().string('ecdsa-sha2-nistp256').string('nistp384').string(randomBytes(97)))}`,
        /curve/,
      ],
      ['RSA of 1024 bits', authorizedKeysLine(rsa1024, 'old'), /RSA key of 1024 bits; RSA keys must have at least 2048 bits/],
      ['DSA', `ssh-dss ${b64(new SshWriter().string('ssh-dss').string(randomBytes(128)))}`, /DSA key/],
      [
        'a security key',
        `sk-ssh-ed25519@openssh.com ${b64(new SshWriter().string('sk-ssh-ed25519@openssh.com').string(randomBytes(32)).string('ssh:'))}`,
        /unsupported algorithm/,
      ],
      ['a certificate', `ssh-ed25519-cert-v01@openssh.com ${b64(new SshWriter().string('ssh-ed25519-cert-v01@openssh.com'))}`, /is a certificate/],
      ['not base64', 'ssh-ed25519 AAAA!!!!', /not base64/],
      ['a short Ed25519 key', `ssh-ed25519 ${b64(new SshWriter().string('ssh-ed25519').string(randomBytes(31)))}`, /wrong length/],
      ['trailing data', `ssh-ed25519 ${Buffer.concat([one.blob, Buffer.from([0, 0, 0, 1, 7])]).toString('base64')}`, /trailing data/],
      ['truncated', `ssh-ed25519 ${one.blob.subarray(0, 30).toString('base64')}`, /could not be decoded/],
      ['a PEM public key', ed.publicKey.export({ type: 'spki', format: 'pem' }) as string, /PEM key/],
      ['a private key', ed.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, /private key/],
      ['RFC 4716', `---- BEGIN SSH2 PUBLIC KEY ----\n${one.blob.toString('base64')}\n---- END SSH2 PUBLIC KEY ----`, /RFC 4716/],
    ];
    for (const [name, publicKey, message] of cases) {
      const res = await api.post('/ssh_credentials', { public_key: publicKey });
      assert.equal(res.status, 400, `${name}: ${res.text}`);
      assert.equal(res.json.error_code, 'ERR_EP_610', `${name}: ${res.json.msg}`);
      assert.match(res.json.msg, /^public_key /, name);
      assert.match(res.json.msg, message, name);
    }
    assert.deepEqual((await api.get('/ssh_credentials')).json.ssh_credentials, []);
  });

  it('takes the ACL rules of credentials, stored in the same form, and refuses the same mistakes', async () => {
    const api = await h().newAccount();
    const ok = await made(api, {
      public_key: newKey().line,
      acl: ['*', 'bind:*', 'bind:App.Example.COM', 'bind:*.Bücher.example', 'bind:env=prod', 'bind:k=a=b'],
    });
    assert.deepEqual(ok.acl, ['*', 'bind:*', 'bind:app.example.com', 'bind:*.xn--bcher-kva.example', 'bind:env=prod', 'bind:k=a=b']);
    const cases: [string, string][] = [
      ['listen:app.example.com', 'ERR_EP_600'],
      ['bind:1.tcp.example.com:20002', 'ERR_EP_600'],
      ['bind:localhost', 'ERR_EP_601'],
      ['bind:env=', 'ERR_EP_602'],
    ];
    for (const [rule, code] of cases) {
      const res = await api.post('/ssh_credentials', { public_key: newKey().line, acl: ['bind:fine.example.com', rule] });
      assert.equal(res.status, 400, rule);
      assert.equal(res.json.error_code, code, res.json.msg);
      assert.match(res.json.msg, /acl\[1\]/);
      assert.equal((await api.patch(`/ssh_credentials/${ok.id}`, { acl: [rule] })).json.error_code, code, `PATCH ${rule}`);
    }
    const tooMany = await api.post('/ssh_credentials', { public_key: newKey().line, acl: Array.from({ length: 101 }, (_, i) => `bind:a${i}.example.com`) });
    assert.equal(tooMany.json.error_code, 'ERR_EP_603');
    assert.equal((await api.get(`/ssh_credentials/${ok.id}`)).json.acl.length, 6, 'refused PATCHes changed nothing');
    assert.equal((await api.get('/ssh_credentials')).json.ssh_credentials.length, 1, 'refused creations wrote nothing');
  });

  it('lets an admin name another owner; a developer owns and changes only its own; read_only only reads', async () => {
    const api = await h().newAccount();
    const other = await h().newAccount();
    const bot = await api.post('/bot_users', { name: 'tunnels' });
    const forBot = await made(api, { public_key: newKey().line, owner_id: bot.json.id });
    assert.equal(forBot.owner_id, bot.json.id);
    const outside = await api.post('/ssh_credentials', { public_key: newKey().line, owner_id: other.info.userId });
    assert.equal(outside.status, 400);
    assert.equal(outside.json.error_code, 'ERR_EP_637');
    const noOne = await api.post('/ssh_credentials', { public_key: newKey().line, owner_id: `usr_${'0'.repeat(27)}` });
    assert.equal(noOne.json.error_code, 'ERR_EP_637');

    const dev = await api.asNewUser('developer');
    const denied = await dev.post('/ssh_credentials', { public_key: newKey().line, owner_id: api.info.userId });
    assert.equal(denied.status, 403);
    assert.equal(denied.json.error_code, 'ERR_EP_604');
    const own = await made(dev, { public_key: newKey().line, description: 'mine' });
    assert.equal(own.owner_id, dev.info.userId);
    assert.equal((await dev.patch(`/ssh_credentials/${own.id}`, { acl: ['bind:dev.example.com'] })).status, 200);
    for (const res of [await dev.patch(`/ssh_credentials/${forBot.id}`, { description: 'x' }), await dev.delete(`/ssh_credentials/${forBot.id}`)]) {
      assert.equal(res.status, 403);
      assert.equal(res.json.error_code, 'ERR_EP_607');
      assert.match(res.json.msg, new RegExp(forBot.id));
    }
    assert.equal((await dev.get(`/ssh_credentials/${forBot.id}`)).status, 200, 'a developer reads every SSH credential of the account');
    assert.equal((await api.patch(`/ssh_credentials/${own.id}`, { description: 'checked' })).status, 200, 'an admin changes any');

    const reader = await api.asNewUser('read_only');
    assert.equal((await reader.get('/ssh_credentials')).json.ssh_credentials.length, 2);
    for (const res of [
      await reader.post('/ssh_credentials', { public_key: newKey().line }),
      await reader.patch(`/ssh_credentials/${own.id}`, { description: 'x' }),
      await reader.delete(`/ssh_credentials/${own.id}`),
    ]) {
      assert.equal(res.status, 403);
      assert.equal(res.json.error_code, 'ERR_EP_635');
    }

    // A bot's SSH credentials go with it.
    assert.equal((await api.delete(`/bot_users/${bot.json.id}`)).status, 204);
    assert.equal((await api.get(`/ssh_credentials/${forBot.id}`)).status, 404);
    assert.equal((await api.get(`/ssh_credentials/${own.id}`)).json.description, 'checked');
  });

  it("answers 404 for another account's SSH credential, whatever the operation, and for an id of another kind", async () => {
    const api = await h().newAccount();
    const other = await h().newAccount();
    const own = await made(api, { public_key: newKey().line });
    for (const res of [
      await other.get(`/ssh_credentials/${own.id}`),
      await other.patch(`/ssh_credentials/${own.id}`, { description: 'x' }),
      await other.delete(`/ssh_credentials/${own.id}`),
    ]) {
      assert.equal(res.status, 404);
      assert.equal(res.json.error_code, 'ERR_EP_252');
    }
    assert.deepEqual((await other.get('/ssh_credentials')).json.ssh_credentials, []);
    assert.equal((await api.get(`/ssh_credentials/${own.id}`)).json.description, '', 'untouched');
    const credential = await api.post('/credentials', {});
    assert.equal((await api.get(`/ssh_credentials/${credential.json.id}`)).json.error_code, 'ERR_EP_222');
    assert.equal((await api.get(`/credentials/${own.id}`)).json.error_code, 'ERR_EP_222');
  });

  it('registers a key once per account (409 naming the credential), while another account may register it too', async () => {
    const api = await h().newAccount();
    const other = await h().newAccount();
    const key = newKey('first');
    const first = await made(api, { public_key: key.line });
    // The same key written otherwise (another comment, no comment, other spacing) is the same key.
    for (const line of [key.line, key.canonical, `${key.canonical} second`, `\t${key.canonical.replace(' ', '   ')}  `]) {
      const again = await api.post('/ssh_credentials', { public_key: line, description: 'again' });
      assert.equal(again.status, 409, line);
      assert.equal(again.json.error_code, 'ERR_EP_611');
      assert.match(again.json.msg, new RegExp(`SSH credential ${first.id} of this account already has this public key`));
    }
    // Whoever asks, the answer is the same: the key is the account's, whoever owns the credential.
    const dev = await api.asNewUser('developer');
    assert.equal((await dev.post('/ssh_credentials', { public_key: key.line })).json.error_code, 'ERR_EP_611');

    const elsewhere = await other.post('/ssh_credentials', { public_key: key.line });
    assert.equal(elsewhere.status, 201, 'another account may register the same key');
    assert.equal(elsewhere.json.public_key, key.canonical);
    assert.equal((await other.post('/ssh_credentials', { public_key: key.line })).json.error_code, 'ERR_EP_611');
    assert.equal((await api.get('/ssh_credentials')).json.ssh_credentials.length, 1);
  });

  it('two creates of one key at the same moment: one 201, one 409, one row', async (t) => {
    const api = await h().newAccount();
    let raced = 0;
    for (let round = 0; round < 10; round++) {
      const key = newKey(`round ${round}`);
      const answers = await Promise.all([
        api.post('/ssh_credentials', { public_key: key.line, description: 'a' }),
        api.post('/ssh_credentials', { public_key: key.canonical, description: 'b' }),
      ]);
      const statuses = answers.map((a) => a.status).sort();
      assert.deepEqual(statuses, [201, 409], answers.map((a) => a.text).join('\n'));
      const won = answers.find((a) => a.status === 201)!;
      const lost = answers.find((a) => a.status === 409)!;
      assert.equal(lost.json.error_code, 'ERR_EP_611', lost.json.msg);
      // The check before the write names the winner; the unique index (the same moment, on PostgreSQL) cannot.
      const named = /sshcr_[0-9A-Za-z]{27}/.exec(lost.json.msg);
      if (named) assert.equal(named[0], won.json.id);
      else {
        raced++;
        assert.match(lost.json.msg, /Another SSH credential of this account, made at the same moment, already has this public key/);
      }
      const rows = await h()
        .deps.store.db.selectFrom('ssh_credentials')
        .select('id')
        .where('account_id', '=', api.info.accountId)
        .where('key_fingerprint', '=', sshKeyFingerprint(key.blob))
        .execute();
      assert.deepEqual(
        rows.map((r) => r.id),
        [won.json.id],
      );
    }
    t.diagnostic(`${raced} of 10 rounds were refused by the unique index rather than by the check before it`);
  });

  it('the unique index on (account_id, key_fingerprint): its violation, as each store reports it, is the same 409', async () => {
    const { store } = h().deps;
    const api = await h().newAccount();
    const key = newKey();
    const first = await made(api, { public_key: key.line });
    const duplicate = {
      ...(await store.db.selectFrom('ssh_credentials').selectAll().where('id', '=', first.id).executeTakeFirstOrThrow()),
      id: `sshcr_${'1'.repeat(27)}`,
    };
    const violation = await store.db
      .insertInto('ssh_credentials')
      .values(duplicate)
      .execute()
      .then(
        () => assert.fail('the index let a second row of the key in'),
        (error: unknown) => translateStoreError(error),
      );
    assert.ok(violation instanceof UniqueViolation, String(violation));
    const refused = sshCredentialDefinition().hooks!.onUniqueViolation!(violation.target, duplicate);
    assert.equal(refused?.errorCode, 'ERR_EP_611', `${violation.target} is mapped`);
    assert.equal(refused?.status, 409);
    assert.equal(sshCredentialDefinition().hooks!.onUniqueViolation!('ssh_credentials_pkey', duplicate), undefined, 'only that index');
  });

  it('a create that meets a row of its key written meanwhile (PostgreSQL): refused by the index with the same 409', async (t) => {
    if (h().kind !== 'postgres') return t.skip('SQLite runs one write at a time: the check before the write always sees the row');
    const api = await h().newAccount();
    const key = newKey();
    // Another writer has inserted the key and not committed: the API's check cannot see it, its insert waits on the index.
    const other = new pg.Client({ connectionString: h().databaseUrl });
    await other.connect();
    try {
      await other.query('begin');
      await other.query(
        `insert into ssh_credentials (id, account_id, owner_id, acl, public_key, key_fingerprint, created_at) values ($1, $2, $3, '[]', $4, $5, $6)`,
        [`sshcr_${'2'.repeat(27)}`, api.info.accountId, api.info.userId, key.canonical, sshKeyFingerprint(key.blob), new Date().toISOString()],
      );
      let settled = false;
      const pending = api.post('/ssh_credentials', { public_key: key.line }).finally(() => (settled = true));
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(settled, false, 'the create waits for the other writer');
      await other.query('commit');
      const res = await pending;
      assert.equal(res.status, 409, res.text);
      assert.equal(res.json.error_code, 'ERR_EP_611');
      assert.match(res.json.msg, /made at the same moment/);
    } finally {
      await other.end();
    }
    assert.deepEqual(
      (await api.get('/ssh_credentials')).json.ssh_credentials.map((c: { id: string }) => c.id),
      [`sshcr_${'2'.repeat(27)}`],
    );
  });

  it("tells the credentialDeleted hook each deleted SSH credential's id, once committed", async () => {
    const told: string[] = [];
    const deps = createDeps(
      { config: h().deps.config, logger: pino({ level: 'silent' }), store: h().deps.store, masterKey: randomBytes(32) },
      { credentialDeleted: (id) => told.push(id) },
    );
    const app = await buildApp(deps);
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const api = (await h().newAccount()).at(`http://127.0.0.1:${(app.server.address() as { port: number }).port}`);
      const kept = await made(api, { public_key: newKey().line });
      const deleted = await made(api, { public_key: newKey().line });
      assert.equal((await api.patch(`/ssh_credentials/${kept.id}`, { description: 'changed' })).status, 200);
      assert.deepEqual(told, [], 'creates and updates tell nothing');
      const dev = await api.asNewUser('developer');
      assert.equal((await dev.at(api.baseUrl).delete(`/ssh_credentials/${deleted.id}`)).status, 403);
      assert.deepEqual(told, [], 'a refused delete tells nothing');
      assert.equal((await api.delete(`/ssh_credentials/${deleted.id}`)).status, 204);
      assert.deepEqual(told, [deleted.id]);
    } finally {
      await app.close();
    }
  });

  it('sshKeyFingerprint and sshCredentialsForKey: every usable credential of a key, across accounts', async () => {
    const { store } = h().deps;
    const a = await h().newAccount();
    const b = await h().newAccount();
    const { file, publicKey } = keygen(dir, `lookup-${h().kind}-${randomBytes(3).toString('hex')}`, 'ed25519');
    const blob = Buffer.from(publicKey.split(' ')[1]!, 'base64');
    assert.equal(sshKeyFingerprint(blob), opensshFingerprint(`${file}.pub`));
    assert.deepEqual(await sshCredentialsForKey(store, blob), [], 'no credential yet');

    const inA = await made(a, { public_key: publicKey, acl: ['bind:App.example.com', 'bind:env=prod'] });
    const bot = await b.post('/bot_users', { name: 'ssh-bot' });
    const inB = await made(b, { public_key: publicKey, owner_id: bot.json.id });
    const found = await sshCredentialsForKey(store, blob);
    assert.deepEqual(
      found.sort((x, y) => x.id.localeCompare(y.id)),
      [
        { id: inA.id, accountId: a.info.accountId, ownerId: a.info.userId, acl: ['bind:app.example.com', 'bind:env=prod'] },
        { id: inB.id, accountId: b.info.accountId, ownerId: bot.json.id, acl: [] },
      ].sort((x, y) => x.id.localeCompare(y.id)),
    );

    // An inactive bot's credential lets no one in, as its authtokens do not; active again, it does.
    assert.equal((await b.patch(`/bot_users/${bot.json.id}`, { active: false })).status, 200);
    assert.deepEqual(
      (await sshCredentialsForKey(store, blob)).map((c) => c.id),
      [inA.id],
    );
    assert.equal((await b.patch(`/bot_users/${bot.json.id}`, { active: true })).status, 200);
    assert.equal((await sshCredentialsForKey(store, blob)).length, 2);

    // Another key, and what is no key at all, find nothing.
    assert.deepEqual(await sshCredentialsForKey(store, newKey().blob), []);
    for (const junk of [Buffer.alloc(0), randomBytes(51), Buffer.from('ssh-ed25519')]) assert.deepEqual(await sshCredentialsForKey(store, junk), []);

    // A deleted one is gone at once.
    assert.equal((await a.delete(`/ssh_credentials/${inA.id}`)).status, 204);
    assert.deepEqual(
      (await sshCredentialsForKey(store, blob)).map((c) => c.id),
      [inB.id],
    );
  });

  it('sshCredentialsForKey finds an RSA key presented with integers that have leading zeros', async () => {
    const { store } = h().deps;
    const api = await h().newAccount();
    const key = toSshPublicKey(generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey);
    const created = await made(api, { public_key: authorizedKeysLine(key) });
    // The same key with e and n written with extra zero bytes, which OpenSSH reads as the same numbers.
    const e = key.fields.subarray(4, 4 + key.fields.readUInt32BE(0));
    const nAt = 4 + e.length;
    const n = key.fields.subarray(nAt + 4, nAt + 4 + key.fields.readUInt32BE(nAt));
    const padded = new SshWriter()
      .string('ssh-rsa')
      .string(Buffer.concat([Buffer.alloc(2), e]))
      .string(Buffer.concat([Buffer.alloc(3), n]))
      .toBuffer();
    assert.notDeepEqual(padded, key.blob);
    assert.deepEqual(
      (await sshCredentialsForKey(store, padded)).map((c) => c.id),
      [created.id],
    );
  });

  it('usableSshCredentialIds and sshCredentialAcl: what still exists and may be used, and its ACL', async () => {
    const { store } = h().deps;
    const api = await h().newAccount();
    const other = await h().newAccount();
    const bot = await api.post('/bot_users', { name: 'usable' });
    const mine = await made(api, { public_key: newKey().line, acl: ['bind:*.Example.com'] });
    const bots = await made(api, { public_key: newKey().line, owner_id: bot.json.id });
    const theirs = await made(other, { public_key: newKey().line, acl: ['bind:env=prod'] });
    const deleted = await made(api, { public_key: newKey().line });
    assert.equal((await api.delete(`/ssh_credentials/${deleted.id}`)).status, 204);
    const never = `sshcr_${'0'.repeat(27)}`;

    assert.deepEqual(await usableSshCredentialIds(store, []), new Set());
    assert.deepEqual(await usableSshCredentialIds(store, [mine.id, bots.id, theirs.id, deleted.id, never]), new Set([mine.id, bots.id, theirs.id]));
    assert.equal((await api.patch(`/bot_users/${bot.json.id}`, { active: false })).status, 200);
    assert.deepEqual(await usableSshCredentialIds(store, [mine.id, bots.id]), new Set([mine.id]), 'an inactive bot owns none that may be used');
    // An agent authtoken's id is no SSH credential.
    const credential = await api.post('/credentials', {});
    assert.deepEqual(await usableSshCredentialIds(store, [credential.json.id]), new Set());

    assert.deepEqual(await sshCredentialAcl(store, mine.id), ['bind:*.example.com']);
    assert.deepEqual(await sshCredentialAcl(store, theirs.id), ['bind:env=prod'], 'read across accounts');
    assert.deepEqual(await sshCredentialAcl(store, bots.id), []);
    assert.equal(await sshCredentialAcl(store, deleted.id), undefined);
    assert.equal(await sshCredentialAcl(store, never), undefined);
    assert.equal((await api.patch(`/ssh_credentials/${mine.id}`, { acl: ['bind:env=dev'] })).status, 200);
    assert.deepEqual(await sshCredentialAcl(store, mine.id), ['bind:env=dev'], 'a change is read at once');
  });
});
