// `edgeplane serve` with EDGEPLANE_SSH_LISTEN, as docs/ssh-agents.md runs it: the listener's line,
// a key registered over the API, the host key pinned with ssh-keyscan, `ssh -R … http` printing the
// public URL that then serves the local app; and, after a restart on the same data directory, the
// same host key (the pinned known_hosts still holds, StrictHostKeyChecking on).
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { sshAgentArgs } from '../helpers/openssh.js';
import { freePort } from '../helpers/ports.js';
import { CLI, CLI_CWD } from '../helpers/serve-process.js';

const STEP_MS = 30_000;
const running: ChildProcess[] = [];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'edgeplane-ssh-serve-'));
after(() => {
  for (const child of running) child.kill('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A process whose output is awaited by pattern. */
function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env) {
  const child = spawn(command, args, { cwd: CLI_CWD, env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.push(child);
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (out += c));
  const exit = once(child, 'exit');
  return {
    child,
    output: () => out,
    printed: (pattern: RegExp) =>
      new Promise<RegExpExecArray>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${command} did not print ${pattern} within ${STEP_MS} ms:\n${out}`)), STEP_MS);
        const look = () => {
          const m = pattern.exec(out);
          if (!m) return;
          clearTimeout(timer);
          child.stdout!.off('data', look);
          child.stderr!.off('data', look);
          resolve(m);
        };
        child.stdout!.on('data', look);
        child.stderr!.on('data', look);
        void exit.then(() => {
          clearTimeout(timer);
          reject(new Error(`${command} exited before printing ${pattern}:\n${out}`));
        });
        look();
      }),
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exit;
    },
  };
}

test('serve with EDGEPLANE_SSH_LISTEN: ssh -R puts a local app online, and the host key outlives a restart', { timeout: 120_000 }, async () => {
  const dataDir = path.join(dir, 'data');
  const sshPort = await freePort();
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('EDGEPLANE_'))),
    EDGEPLANE_DATA_DIR: dataDir,
    EDGEPLANE_LISTEN: '127.0.0.1:0',
    EDGEPLANE_SSH_LISTEN: `127.0.0.1:${sshPort}`,
    EDGEPLANE_LOG_LEVEL: 'warn',
  };
  const serve = () => run(CLI[0], [...CLI.slice(1), 'serve'], env);
  const app = http.createServer((_req, res) => res.end('Hello over ssh\n'));
  app.listen(0, '127.0.0.1');
  await once(app, 'listening');
  const key = path.join(dir, 'id_ed25519');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
  const knownHosts = path.join(dir, 'known_hosts');
  const sshRun = () =>
    run('ssh', sshAgentArgs({ keyFile: key, knownHosts, port: sshPort, forward: `0:localhost:${(app.address() as AddressInfo).port}`, command: ['http'] }));

  let server = serve();
  try {
    const api = (await server.printed(/edgeplane listening on (https:\/\/\S+)/))[1]!;
    assert.equal((await server.printed(/ssh -R agents dial in at (\S+) \(SSH\)/))[1], `127.0.0.1:${sshPort}`);
    const httpsPort = Number((await server.printed(/public HTTPS and TLS endpoints on 127\.0\.0\.1:(\d+)/))[1]);
    const tokenFile = (await server.printed(/token was written to (\S+) \(/))[1]!;
    const ca = fs.readFileSync(path.join(dataDir, 'tls/ca.crt'), 'utf8');
    const registered = await new Promise<number>((resolve, reject) => {
      const req = https.request(`${api}/ssh_credentials`, {
        method: 'POST',
        ca,
        headers: { Authorization: `Bearer ${fs.readFileSync(tokenFile, 'utf8').trim()}`, 'Service-Version': '2', 'Content-Type': 'application/json' },
      });
      req.on('response', (res) => (res.resume(), resolve(res.statusCode!)));
      req.on('error', reject);
      req.end(JSON.stringify({ public_key: fs.readFileSync(`${key}.pub`, 'utf8').trim() }));
    });
    assert.equal(registered, 201);
    // The host key pinned as a user would: ssh-keyscan, then StrictHostKeyChecking.
    fs.writeFileSync(
      knownHosts,
      execFileSync('ssh-keyscan', ['-p', String(sshPort), '-t', 'ecdsa', '127.0.0.1'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }),
    );
    assert.match(fs.readFileSync(knownHosts, 'utf8'), /^\[127\.0\.0\.1\]:\d+ ecdsa-sha2-nistp256 AAAA/m);

    const agent = sshRun();
    const url = new URL((await agent.printed(/Forwarding (https:\/\/\S+)/))[1]!);
    const body = await new Promise<string>((resolve, reject) => {
      const req = https.request({ host: '127.0.0.1', port: httpsPort, path: '/', servername: url.hostname, headers: { host: url.host }, ca, agent: false });
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => resolve(`${res.statusCode} ${text}`));
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(body, '200 Hello over ssh\n');
    await agent.stop('SIGINT');

    // A restart on the same data directory presents the same host key.
    await server.stop();
    server = serve();
    await server.printed(/ssh -R agents dial in at/);
    const again = sshRun();
    await again.printed(/Forwarding https:\/\//);
    await again.stop('SIGINT');
  } finally {
    await server.stop();
    app.close();
  }
});
