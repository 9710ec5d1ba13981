// OpenSSH's own client as an agent: `ssh -R … HOST http|tcp|tls|labeled`, authenticated by a key
// registered with POST /ssh_credentials, checking the server's host key against the one the store
// holds (StrictHostKeyChecking). Each public connection crosses the real ssh process to a local
// upstream; the session shows in the API and ends with the process, or with its credential.
import assert from 'node:assert/strict';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes, X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import tls from 'node:tls';
import { waitFor } from '../helpers/assertions.js';
import { selfSigned } from '../helpers/certs.js';
import { describeEachStore, type Api, type Harness } from '../helpers/harness.js';
import { sshAgentArgs } from '../helpers/openssh.js';
import { digestUpstream, roundTrip } from '../helpers/upstreams.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** A fresh Ed25519 key pair made by ssh-keygen: its private key file and its public line. */
function keyPair(): { file: string; publicKey: string; dir: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'edgeplane-ssh-'));
  dirs.push(dir);
  const file = path.join(dir, 'id_ed25519');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'test', '-f', file]);
  return { file, dir, publicKey: fs.readFileSync(`${file}.pub`, 'utf8').trim() };
}

interface SshAgent {
  proc: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** The first match of `pattern` on stdout; rejects when ssh exits first. */
  printed(pattern: RegExp): Promise<RegExpExecArray>;
  exited(): Promise<number | null>;
}

/**
 * `ssh -R <forward> v2@127.0.0.1 <command>` with the key, trusting only the host key the store
 * holds (a known_hosts file of that one line), and no user or system configuration.
 */
async function ssh(h: Harness, key: { file: string; dir: string }, forward: string, command: string[], user = 'v2', terminal = false): Promise<SshAgent> {
  const port = h.agents!.sshPort!;
  const hostKey = await h.deps.store.db.selectFrom('ssh_host_keys').select('public_key').executeTakeFirstOrThrow();
  const knownHosts = path.join(key.dir, `known_hosts_${port}`);
  fs.writeFileSync(knownHosts, `[127.0.0.1]:${port} ${hostKey.public_key}\n`);
  // `terminal`: -tt asks for one even without a local terminal, and stdin's bytes go as typed.
  const args = sshAgentArgs({ keyFile: key.file, knownHosts, port, forward, user, command });
  const proc = spawn('ssh', terminal ? ['-tt', ...args] : args, { stdio: [terminal ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  proc.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exit = once(proc, 'exit').then(([code]) => code as number | null);
  return {
    proc,
    stdout: () => out,
    stderr: () => err,
    exited: () => exit,
    printed: (pattern) =>
      new Promise((resolve, reject) => {
        const look = () => {
          const m = pattern.exec(out);
          if (m) {
            proc.stdout!.off('data', look);
            resolve(m);
          }
        };
        proc.stdout!.on('data', look);
        look();
        void exit.then((code) => reject(new Error(`ssh exited (${code}) before printing ${pattern}: ${out}${err}`)));
      }),
  };
}

async function stop(agent: SshAgent): Promise<void> {
  if (agent.proc.exitCode === null && agent.proc.signalCode === null) agent.proc.kill('SIGINT');
  await agent.exited();
}

async function registerKey(api: Api, publicKey: string, acl?: string[]): Promise<string> {
  const made = await api.post('/ssh_credentials', { public_key: publicKey, description: 'ssh -R test', ...(acl && { acl }) });
  assert.equal(made.status, 201, made.text);
  return made.json.id as string;
}

/** A new account with a fresh key registered as its SSH credential. */
async function signedUp(h: Harness): Promise<{ api: Api; key: ReturnType<typeof keyPair>; credentialId: string }> {
  const api = await h.newAccount();
  const key = keyPair();
  return { api, key, credentialId: await registerKey(api, key.publicKey) };
}

/** A local app answering every request with its path and the bytes it received. */
async function app(): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const hash = createHash('sha256');
    let bytes = 0;
    req.on('data', (c: Buffer) => {
      hash.update(c);
      bytes += c.length;
    });
    req.on('end', () => res.end(`app ${req.url} ${bytes} ${hash.digest('hex')}`));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: (server.address() as AddressInfo).port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

function get(
  h: Harness,
  url: string,
  body?: Buffer,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port: h.agents!.httpsPort,
        method: body ? 'POST' : 'GET',
        path: '/hello',
        headers: { host: target.host, ...headers },
        servername: target.hostname,
        ca: h.agents!.caPem,
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, body: text, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describeEachStore(
  'ssh -R agents',
  (h) => {
    test('http: a random name, printed to the terminal, serving the local app through the ssh process; the API lists the session until Ctrl-C', async () => {
      const { api, key, credentialId } = await signedUp(h());
      const local = await app();
      const agent = await ssh(h(), key, `0:localhost:${local.port}`, ['http']);
      try {
        const url = (await agent.printed(/Forwarding (https:\/\/\S+)/))[1]!;
        assert.match(url, new RegExp(`^https://[a-z0-9]{16}\\.edgeplane\\.app:${h().agents!.httpsPort}$`));
        await h().agents!.routed(url);
        const upload = randomBytes(2 * 1024 * 1024);
        const answer = await get(h(), url, upload);
        assert.equal(answer.status, 200, answer.body);
        assert.equal(answer.body, `app /hello ${upload.length} ${sha256(upload)}`);
        // `-R 0:` is told the public port, which OpenSSH prints.
        await waitFor('ssh to print the allocated port', () => agent.stderr().includes(`Allocated port ${h().agents!.httpsPort}`));

        // Across instances the API's instance reads the agent's from the store, written soon after.
        let sessions = await api.get('/tunnel_sessions');
        await waitFor('the session to be listed', async () => (sessions = await api.get('/tunnel_sessions')).json.tunnel_sessions.length > 0);
        assert.equal(sessions.status, 200);
        const [session, ...more] = sessions.json.tunnel_sessions;
        assert.equal(more.length, 0);
        assert.equal(session.transport, 'ssh');
        assert.equal(session.credential.id, credentialId);
        assert.match(session.credential.uri, /\/ssh_credentials\/sshcr_/);
        assert.match(session.agent_version, /^OpenSSH_/);
        let tunnels = await api.get('/tunnels');
        await waitFor('the tunnel to be listed', async () => (tunnels = await api.get('/tunnels')).json.tunnels.length > 0);
        assert.deepEqual(
          tunnels.json.tunnels.map((t: { public_url: string; proto: string }) => [t.public_url, t.proto]),
          [[url, 'https']],
        );
      } finally {
        await stop(agent);
      }
      // Ctrl-C ends the ssh process, its connection, its session and its tunnel.
      await waitFor('the session to be gone', async () => (await api.get('/tunnel_sessions')).json.tunnel_sessions.length === 0);
      await h().agents!.routed((/Forwarding (\S+)/.exec(agent.stdout()) ?? [])[1]!, { gone: true });
      await local.close();
    });

    test('with a terminal (ssh -t), Ctrl-C typed ends the session and its tunnel, and ssh exits 0', async () => {
      const { api, key } = await signedUp(h());
      const local = await app();
      const agent = await ssh(h(), key, `0:localhost:${local.port}`, ['http'], 'v2', true);
      try {
        const url = (await agent.printed(/Forwarding (https:\/\/\S+)/))[1]!;
        await h().agents!.routed(url);
        agent.proc.stdin!.write('\x03');
        assert.equal(await agent.exited(), 0, agent.stderr());
        await h().agents!.routed(url, { gone: true });
        await waitFor('the session to be gone', async () => (await api.get('/tunnel_sessions')).json.tunnel_sessions.length === 0);
      } finally {
        await stop(agent);
        await local.close();
      }
    });

    test('http --basic-auth: the endpoint asks for the password before the request reaches the local app', async () => {
      const { key } = await signedUp(h());
      const local = await app();
      const agent = await ssh(h(), key, `0:localhost:${local.port}`, ['http', '--basic-auth', 'me:correct-horse-battery']);
      try {
        const url = (await agent.printed(/Forwarding (https:\/\/\S+)/))[1]!;
        await h().agents!.routed(url);
        const refused = await get(h(), url);
        assert.equal(refused.status, 401);
        assert.match(String(refused.headers['www-authenticate']), /^Basic/);
        const wrong = await get(h(), url, undefined, { authorization: `Basic ${Buffer.from('me:wrong password').toString('base64')}` });
        assert.equal(wrong.status, 401);
        const letIn = await get(h(), url, undefined, { authorization: `Basic ${Buffer.from('me:correct-horse-battery').toString('base64')}` });
        assert.equal(letIn.status, 200);
        assert.match(letIn.body, /^app \/hello/);
      } finally {
        await stop(agent);
        await local.close();
      }
    });

    test('tcp: a random address; the bytes cross both ways whole', async () => {
      const { key } = await signedUp(h());
      const upstream = await digestUpstream();
      const agent = await ssh(h(), key, `0:localhost:${upstream.port}`, ['tcp']);
      try {
        const url = new URL((await agent.printed(/Forwarding (tcp:\/\/\S+)/))[1]!);
        assert.equal(url.hostname, '1.tcp.edgeplane.app');
        await h().agents!.routed(url.href);
        const payload = randomBytes(3 * 1024 * 1024);
        assert.equal(await roundTrip(Number(url.port), payload), `${payload.length} ${sha256(payload)}\n`);
        await waitFor('ssh to print the allocated port', () => agent.stderr().includes(`Allocated port ${url.port}`));
      } finally {
        await stop(agent);
        await upstream.close();
      }
    });

    test('tls: a reserved domain named in the forward, TLS passed through to the local server', async () => {
      const { api, key } = await signedUp(h());
      const name = `ssh-${randomBytes(4).toString('hex')}.example.com`;
      // Not reserved yet: refused, with ngrok's code, on the terminal.
      const early = await ssh(h(), key, `${name}:443:localhost:9`, ['tls']);
      assert.equal(await early.exited(), 1, early.stderr());
      assert.match(early.stderr(), /ERR_EP_AGENT_612|not reserved|reserve/i);
      assert.equal((await api.post('/reserved_domains', { domain: name })).status, 201);
      const issued = await selfSigned({ names: [name] });
      const upstream = tls.createServer({ cert: issued.certPem, key: issued.keyPem }, (socket) => socket.end(`hello from ${socket.servername}\n`));
      upstream.listen(0, '127.0.0.1');
      await once(upstream, 'listening');
      const agent = await ssh(h(), key, `${name}:443:localhost:${(upstream.address() as AddressInfo).port}`, ['tls']);
      try {
        const url = (await agent.printed(/Forwarding (tls:\/\/\S+)/))[1]!;
        assert.equal(url, `tls://${name}:${h().agents!.httpsPort}`);
        await h().agents!.routed(url);
        const socket = tls.connect({ host: '127.0.0.1', port: h().agents!.httpsPort, servername: name, ca: issued.certPem });
        await once(socket, 'secureConnect');
        assert.equal(socket.getPeerX509Certificate()?.fingerprint256, new X509Certificate(issued.certPem).fingerprint256, "the local server's own certificate");
        let text = '';
        socket.setEncoding('utf8').on('data', (c: string) => (text += c));
        await once(socket, 'end');
        assert.equal(text, `hello from ${name}\n`);
      } finally {
        await stop(agent);
        upstream.close();
      }
    });

    test('refuses a key no account registered, and ends a session whose credential is deleted, saying why', async () => {
      const api = await h().newAccount();
      const stranger = keyPair();
      const refused = await ssh(h(), stranger, '0:localhost:9', ['http']);
      assert.equal(await refused.exited(), 255);
      assert.match(refused.stderr(), /Permission denied \(publickey\)/);

      const key = keyPair();
      const credentialId = await registerKey(api, key.publicKey);
      const local = await app();
      const agent = await ssh(h(), key, `0:localhost:${local.port}`, ['http']);
      try {
        const url = (await agent.printed(/Forwarding (https:\/\/\S+)/))[1]!;
        await h().agents!.routed(url);
        assert.equal((await api.delete(`/ssh_credentials/${credentialId}`)).status, 204);
        assert.notEqual(await agent.exited(), 0);
        assert.match(agent.stderr(), /credential was deleted/);
        await h().agents!.routed(url, { gone: true });
      } finally {
        await stop(agent);
        await local.close();
      }
    });

    test("signs in with a user certificate of the account's SSH CA, no SSH credential needed; deleting the CA ends the session", async () => {
      const api = await h().newAccount();
      const ca = await api.post('/ssh_certificate_authorities', { description: 'team CA' });
      assert.equal(ca.status, 201, ca.text);
      const certificates: string[] = [];
      const certify = async (key: { file: string; publicKey: string }, more: Record<string, unknown> = {}) => {
        const cert = await api.post('/ssh_user_certificates', {
          ssh_certificate_authority_id: ca.json.id,
          public_key: key.publicKey,
          principals: ['me'],
          ...more,
        });
        assert.equal(cert.status, 201, cert.text);
        certificates.push(cert.json.id);
        // OpenSSH offers `<key>-cert.pub` beside the key it is given.
        fs.writeFileSync(`${key.file}-cert.pub`, `${cert.json.certificate}\n`);
      };
      // A certificate with a critical option is refused: none is enforced, so none may be ignored.
      const forced = keyPair();
      await certify(forced, { critical_options: { 'force-command': '/bin/true' } });
      const refused = await ssh(h(), forced, '0:localhost:9', ['http']);
      assert.equal(await refused.exited(), 255);
      assert.match(refused.stderr(), /Permission denied \(publickey\)/);

      const key = keyPair();
      await certify(key);
      const local = await app();
      const agent = await ssh(h(), key, `0:localhost:${local.port}`, ['http']);
      try {
        const url = (await agent.printed(/Forwarding (https:\/\/\S+)/))[1]!;
        await h().agents!.routed(url);
        assert.equal((await get(h(), url)).status, 200);
        let listed: { credential: { id: string } }[] = [];
        await waitFor('the session to be listed', async () => (listed = (await api.get('/tunnel_sessions')).json.tunnel_sessions).length > 0);
        const [session] = listed;
        assert.equal(session!.credential.id, ca.json.id, "the CA is the session's credential");
        // The CA goes once its certificates are deleted (the API refuses it before).
        for (const id of certificates) assert.equal((await api.delete(`/ssh_user_certificates/${id}`)).status, 204);
        assert.equal((await api.delete(`/ssh_certificate_authorities/${ca.json.id}`)).status, 204);
        assert.notEqual(await agent.exited(), 0);
        assert.match(agent.stderr(), /SSH credential was deleted or can no longer be used/);
      } finally {
        await stop(agent);
        await local.close();
      }
    });

    test('answers a bad command, or none, with the usage on the terminal', async () => {
      const { key } = await signedUp(h());
      const unknown = await ssh(h(), key, '0:localhost:9', ['ftp']);
      assert.equal(await unknown.exited(), 1);
      assert.match(unknown.stderr(), /unknown command 'ftp'/);
      assert.match(unknown.stderr(), /ssh -R 0:localhost:8080 HOST http/);
      const flag = await ssh(h(), key, '0:localhost:9', ['tcp', '--domain', 'x.example.com']);
      assert.equal(await flag.exited(), 1);
      assert.match(flag.stderr(), /--domain does not apply to tcp/);
      const help = await ssh(h(), key, '0:localhost:9', ['help']);
      assert.equal(await help.exited(), 0);
      assert.match(help.stdout(), /labeled --label app=shop/);
    });

    test('labeled: an HTTPS edge routes to the tunnel by its labels', async () => {
      const { api, key } = await signedUp(h());
      const local = await app();
      const name = `shop-${randomBytes(4).toString('hex')}.edgeplane.app`;
      assert.equal((await api.post('/reserved_domains', { domain: name })).status, 201);
      const backend = await api.post('/backends/tunnel_group', { labels: { app: 'shop' } });
      const edge = await api.post('/edges/https', { hostports: [`${name}:443`] });
      assert.equal(edge.status, 201, edge.text);
      const route = await api.post(`/edges/https/${edge.json.id}/routes`, { match_type: 'path_prefix', match: '/', backend: { backend_id: backend.json.id } });
      assert.equal(route.status, 201, route.text);
      const agent = await ssh(h(), key, `0:localhost:${local.port}`, ['labeled', '--label', 'app=shop']);
      try {
        await agent.printed(/Labeled tunnel online: app=shop/);
        await h().agents!.labeled(api.info.accountId, { app: 'shop' });
        let answer: { status: number; body: string } | undefined;
        await waitFor('the edge to reach the tunnel', async () => (answer = await get(h(), `https://${name}`)).status === 200);
        assert.equal(answer!.body, `app /hello 0 ${sha256(Buffer.alloc(0))}`);
      } finally {
        await stop(agent);
        await local.close();
      }
    });

    test('a public client that stops reading stalls its own connection only; a rotated key keeps working when the old one is deleted', async () => {
      const api = await h().newAccount();
      const oldKey = keyPair();
      const oldId = await registerKey(api, oldKey.publicKey);
      const newKey = keyPair();
      await registerKey(api, newKey.publicKey);
      const big = randomBytes(64 * 1024 * 1024);
      let bigSent = false;
      const server = http.createServer((req, res) => {
        if (req.url === '/big') {
          res.end(big, () => (bigSent = true));
          return;
        }
        res.end('small');
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      const localPort = (server.address() as AddressInfo).port;
      const agent = await ssh(h(), newKey, `0:localhost:${localPort}`, ['http']);
      const old = await ssh(h(), oldKey, `0:localhost:${localPort}`, ['tcp']);
      try {
        const url = new URL((await agent.printed(/Forwarding (https:\/\/\S+)/))[1]!);
        await old.printed(/Forwarding/);
        await h().agents!.routed(url.href);
        // A client that asks for 64 MB and reads none of it.
        const stalled = tls.connect({ host: '127.0.0.1', port: h().agents!.httpsPort, servername: url.hostname, ca: h().agents!.caPem });
        await once(stalled, 'secureConnect');
        stalled.pause();
        stalled.write(`GET /big HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`);
        // The rest of the session still answers, while the big answer waits.
        for (let i = 0; i < 5; i++) {
          const answer = await get(h(), url.href);
          assert.equal(answer.status, 200);
        }
        assert.equal(bigSent, false, 'the stalled answer is held back by flow control, not buffered whole');
        stalled.destroy();

        // The old key's credential deleted: its session ends, the new key's goes on.
        assert.equal((await api.delete(`/ssh_credentials/${oldId}`)).status, 204);
        assert.notEqual(await old.exited(), 0);
        assert.equal((await get(h(), url.href)).status, 200);
      } finally {
        await stop(agent);
        await stop(old);
        server.close();
      }
    });
  },
  // Credentials checked every 200 ms: a CA deleted is seen at once. Across instances too: the
  // clients dial one instance, the public side and the API are two others'.
  { agents: {}, ssh: { credentialCheckMs: 200 }, acrossInstances: true },
);

describeEachStore(
  'ssh -R agents: limits and faults',
  (h) => {
    test('closes connections past the bound on those not signed in at once, and those that do not sign in after the timeout', async () => {
      const port = h().agents!.sshPort!;
      const open = async () => {
        const socket = net.connect({ host: '127.0.0.1', port });
        socket.on('error', () => {});
        await once(socket, 'connect');
        return { socket, closed: once(socket, 'close') };
      };
      const waiting = [await open(), await open()];
      // Both are counted once the server has them: its banner says so.
      await Promise.all(waiting.map(({ socket }) => once(socket, 'data')));
      const extra = await open();
      await extra.closed;
      // The two are closed by the sign-in timeout (1 s), having sent nothing.
      await Promise.all(waiting.map((w) => w.closed));
      // The bound counts connections, not history: a new one is served again.
      const again = await open();
      const [banner] = (await once(again.socket, 'data')) as [Buffer];
      assert.match(banner.toString(), /^SSH-2\.0-edgeplane/);
      again.socket.destroy();
    });

    test('drops a session that sends no command (ssh -N), and refuses a session past the account’s limit, saying why', async () => {
      const { key } = await signedUp(h());
      const silent = await ssh(h(), key, '0:localhost:9', ['-N']);
      assert.notEqual(await silent.exited(), 0);
      const local = await app();
      const first = await ssh(h(), key, `0:localhost:${local.port}`, ['http']);
      try {
        await first.printed(/Forwarding/);
        const second = await ssh(h(), key, `0:localhost:${local.port}`, ['http']);
        assert.equal(await second.exited(), 1);
        assert.match(second.stderr(), /limited to 1 simultaneous agent sessions \(ERR_NGROK_108\)/);
      } finally {
        await stop(first);
        await local.close();
      }
    });
  },
  { agents: {}, ssh: { maxUnauthenticated: 2, authTimeoutMs: 1000, commandTimeoutMs: 1000, maxSessionsPerAccount: 1, credentialCheckMs: 200 } },
);
