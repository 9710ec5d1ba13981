// docs/quickstart.md as a user runs it: `edgeplane serve` as a process on a fresh data directory,
// the admin token it names, a credential, the page's local app and its agent scripts (taken from
// the page's code blocks, so the page cannot drift from what works), then the public URL over
// HTTPS with the local CA and the name resolved to loopback as `curl --resolve` does.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { waitFor } from '../helpers/assertions.js';
import { freePort } from '../helpers/ports.js';
import { CLI, CLI_CWD } from '../helpers/serve-process.js';

const root = path.resolve(import.meta.dirname, '../..');
const page = fs.readFileSync(path.join(root, 'docs/quickstart.md'), 'utf8');
/** What the page writes for the defaults next to an API on 8443. */
const DOC = { agentAddr: '127.0.0.1:8444', httpsPort: '8445', appPort: '3000', api: 'https://127.0.0.1:8443' } as const;
const STEP_MS = 15_000;

/** The fenced code blocks of the page with this info string, in order. */
function blocks(lang: string): string[] {
  return [...page.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].filter((m) => m[1] === lang).map((m) => m[2]!);
}

/** `text` with every `from` replaced by `to`; fails unless `from` occurs (so an edit of the page is noticed here). */
function replaced(text: string, from: string, to: string): string {
  assert.ok(text.includes(from), `the quickstart's code no longer holds ${from}:\n${text}`);
  return text.split(from).join(to);
}

/** The page's API calls: each `curl … -d '<json>' … https://127.0.0.1:8443/<path>`, as path and body. */
function apiCalls(): { path: string; body: string }[] {
  return blocks('sh').flatMap((b) =>
    [...b.matchAll(/curl [^\n]*?(?:\\\n[^\n]*?)*-d '([^']*)'[\s\\]*(https:\/\/\S+)/g)].map((m) => {
      assert.ok(m[2]!.startsWith(DOC.api + '/'), m[2]);
      return { path: m[2]!.slice(DOC.api.length), body: m[1]! };
    }),
  );
}

/** A child process whose output (stdout and stderr) can be awaited line by line. */
interface Child {
  readonly proc: ChildProcess;
  output(): string;
  /** Resolves with the first match of `pattern` in the output; rejects when the process exits or `ms` pass first. */
  printed(pattern: RegExp, ms?: number): Promise<RegExpExecArray>;
  /** Resolves with the exit code once it has exited (SIGTERM first unless it already did; SIGKILL after 10 s). */
  stop(): Promise<number | null>;
  /** Resolves with the exit code when it exits by itself within `ms`. */
  exit(ms?: number): Promise<number | null>;
}

const children: Child[] = [];
const dirs: string[] = [];

function start(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Child {
  const proc = spawn(command, args, { ...options, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (c) => (out += c));
  proc.stderr!.on('data', (c) => (out += c));
  const exited = () => proc.exitCode !== null || proc.signalCode !== null;
  const exitPromise = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const child: Child = {
    proc,
    output: () => out,
    printed: (pattern, ms = STEP_MS) =>
      new Promise((resolve, reject) => {
        const done = (fn: () => void) => {
          clearTimeout(timer);
          proc.stdout!.off('data', check);
          proc.stderr!.off('data', check);
          proc.off('exit', gone);
          fn();
        };
        const check = () => {
          const m = pattern.exec(out);
          if (m) done(() => resolve(m));
        };
        const gone = () => done(() => reject(new Error(`${command} exited before printing ${pattern}:\n${out}`)));
        const timer = setTimeout(() => done(() => reject(new Error(`${command} did not print ${pattern} within ${ms} ms:\n${out}`))), ms);
        proc.stdout!.on('data', check);
        proc.stderr!.on('data', check);
        proc.once('exit', gone);
        check();
        if (exited()) gone();
      }),
    async stop() {
      if (!exited()) {
        proc.kill('SIGTERM');
        const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
        await exitPromise;
        clearTimeout(timer);
      }
      return proc.exitCode;
    },
    async exit(ms = STEP_MS) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${command} still running after ${ms} ms:\n${out}`)), ms)));
      try {
        return await Promise.race([exitPromise, late]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
  children.push(child);
  return child;
}

/** A port P with P+1..P+3 free as well: the API on P puts the agent and public listeners on the next three. */
async function freeRun(): Promise<number> {
  const free = (port: number) =>
    new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await freePort();
    if (port + 3 > 65535) continue;
    if ((await free(port + 1)) && (await free(port + 2)) && (await free(port + 3))) return port;
  }
  throw new Error('no four free ports in a row on 127.0.0.1 after 20 tries');
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function send(url: string, options: https.RequestOptions, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { agent: false, timeout: STEP_MS, ...options }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url} within ${STEP_MS} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** `curl --resolve <name>:<port>:127.0.0.1`: every name is looked up as loopback. */
const toLoopback: LookupFunction = (_hostname, options, callback) => {
  if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
};

after(async () => {
  await Promise.all(children.map((c) => c.stop()));
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('docs/quickstart.md', () => {
  it('takes a fresh data directory to a local app answering on a public URL, fresh and reserved, then behind an edge', { timeout: 90_000 }, async () => {
    // The page's code, checked for what the steps below rely on.
    const [appLine, ...notApp] = blocks('sh').flatMap((b) => b.split('\n').filter((l) => l.startsWith('node -e ')));
    assert.equal(notApp.length, 0, 'one `node -e` app on the page');
    const appCode = /^node -e "(.*)"$/.exec(appLine ?? '')?.[1];
    assert.ok(appCode, `the app is a node -e "…" line: ${appLine}`);
    const agents = blocks('js').filter((b) => b.includes('ngrok.forward(') && !b.includes('labels:') && !b.includes("proto: 'tcp'"));
    const [tcpScript, ...moreTcp] = blocks('js').filter((b) => b.includes("proto: 'tcp'"));
    assert.ok(tcpScript && moreTcp.length === 0, 'one TCP agent');
    assert.equal(agents.length, 2, 'a forward with a fresh name, then one with a reserved domain');
    const [labeledScript, ...moreLabeled] = blocks('js').filter((b) => b.includes('ngrok.forward(') && b.includes('labels:'));
    assert.ok(labeledScript && moreLabeled.length === 0, 'one labeled agent, for the edge');
    const [edgeScript, ...moreEdges] = blocks('js').filter((b) => b.includes("'/edges/https'"));
    assert.ok(edgeScript && moreEdges.length === 0, 'one script that makes the edge');
    const edgeHost = /domain: '([^']+)'/.exec(edgeScript)?.[1];
    assert.ok(edgeHost && edgeScript.includes(`'${edgeHost}:443'`), 'the edge serves the domain it reserves');
    const [freshScript, domainScript] = agents as [string, string];
    const domain = /domain: '([^']+)'/.exec(domainScript)?.[1];
    assert.ok(domain, 'the second agent asks for a domain');
    assert.ok(!freshScript.includes('domain:'));
    const calls = apiCalls();
    assert.deepEqual(
      calls.map((c) => c.path),
      ['/credentials', '/reserved_domains'],
    );
    assert.equal(JSON.parse(calls[1]!.body).domain, domain);

    // A directory like the clone's: ./data for the server, the SDK installed, the scripts beside them.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'edgeplane-quickstart-'));
    dirs.push(dir);
    fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    const dataDir = path.join(dir, 'data');
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('EDGEPLANE_') && !k.startsWith('NGROK_')));

    // 1. The server, on a fresh data directory; its output is a pipe, so the token goes to a file.
    const port = await freeRun();
    const serve = start(CLI[0], [...CLI.slice(1), 'serve'], {
      cwd: CLI_CWD,
      env: { ...env, EDGEPLANE_DATA_DIR: dataDir, EDGEPLANE_LISTEN: `127.0.0.1:${port}`, EDGEPLANE_LOG_LEVEL: 'warn' },
    });
    const api = (await serve.printed(/edgeplane listening on (https:\/\/\S+)/, 60_000))[1]!;
    assert.equal(api, `https://127.0.0.1:${port}`);
    const caFile = (await serve.printed(/trust it with --cacert (\S+)/))[1]!;
    assert.equal(caFile, path.join(dataDir, 'tls/ca.crt'), 'the page says data/tls/ca.crt');
    const tokenFile = (await serve.printed(/token was written to (\S+) \(/))[1]!;
    assert.equal(tokenFile, path.join(dataDir, 'first-admin-token'));
    const agentAddr = (await serve.printed(/agents dial in at (\S+) \(TLS\)/))[1]!;
    const httpsAddr = (await serve.printed(/public HTTPS and TLS endpoints on (\S+)/))[1]!;
    const httpAddr = (await serve.printed(/public HTTP endpoints on (\S+)/))[1]!;
    assert.deepEqual(
      [agentAddr, httpsAddr, httpAddr],
      [1, 2, 3].map((n) => `127.0.0.1:${port + n}`),
      "the API's port + 1, + 2, + 3",
    );
    const adminToken = fs.readFileSync(tokenFile, 'utf8').trim();
    const ca = fs.readFileSync(caFile, 'utf8');
    const callApi = (call: { path: string; body: string }) =>
      send(
        api + call.path,
        {
          method: 'POST',
          ca,
          headers: { Authorization: `Bearer ${adminToken}`, 'Service-Version': '2', 'Content-Type': 'application/json' },
        },
        call.body,
      );

    // 2. A credential, with the page's request.
    const credential = await callApi(calls[0]!);
    assert.equal(credential.status, 201, credential.body);
    const authtoken = JSON.parse(credential.body).token as string;
    assert.match(authtoken, /^\w+_\w+$/);

    // 3. The local app, on a free port instead of 3000.
    const appPort = String(await freePort());
    const app = start(process.execPath, ['-e', replaced(appCode, DOC.appPort, appPort)], { cwd: dir, env });
    await app.printed(new RegExp(`app on http://localhost:${appPort}`));

    // 4. The agent, run as `node agent.mjs` in the directory that holds ./data and the SDK.
    const agentFile = (name: string, script: string) => {
      const file = path.join(dir, name);
      fs.writeFileSync(file, replaced(replaced(script, `'${DOC.agentAddr}'`, `'${agentAddr}'`), `addr: ${DOC.appPort}`, `addr: ${appPort}`));
      return file;
    };
    const agentEnv = { ...env, NGROK_AUTHTOKEN: authtoken };
    const agent = start(process.execPath, [agentFile('agent.mjs', freshScript)], { cwd: dir, env: agentEnv });
    const freshUrl = new URL((await agent.printed(/online at (https:\/\/\S+)/))[1]!);
    assert.match(freshUrl.hostname, /^[a-z0-9]{16}\.edgeplane\.app$/, 'a fresh name under the first service domain');
    assert.equal(freshUrl.port, String(port + 2), "the URL names the public HTTPS listener's port");
    assert.ok(page.includes(`:${DOC.httpsPort}`));

    // 5. The public URL, with the local CA and the name resolved to loopback.
    const reach = (url: URL) => send(url.href, { ca, lookup: toLoopback });
    const hello = await reach(freshUrl);
    assert.equal(hello.status, 200, hello.body);
    assert.equal(hello.body, 'Hello from my app\n');
    assert.ok(page.includes('Hello from my app'));

    // Stopping the agent takes the URL offline, as the page says.
    await agent.stop();
    let offline: Answer | undefined;
    await waitFor('the fresh URL to go offline', async () => (offline = await reach(freshUrl)).status === 404);
    assert.equal(offline!.headers['ngrok-error-code'], 'ERR_NGROK_3200');

    // 6. The reserved domain: refused before it is reserved, served after.
    const domainFile = agentFile('agent-domain.mjs', domainScript);
    const early = start(process.execPath, [domainFile], { cwd: dir, env: agentEnv });
    assert.notEqual(await early.exit(), 0);
    assert.match(early.output(), /ERR_EP_AGENT_612/);
    const reserved = await callApi(calls[1]!);
    assert.equal(reserved.status, 201, reserved.body);
    const named = start(process.execPath, [domainFile], { cwd: dir, env: agentEnv });
    const namedUrl = new URL((await named.printed(/online at (https:\/\/\S+)/))[1]!);
    assert.equal(namedUrl.host, `${domain}:${port + 2}`);
    const again = await reach(namedUrl);
    assert.equal(again.status, 200, again.body);
    assert.equal(again.body, 'Hello from my app\n');

    // 7. The edge, made by the page's script, in front of the labeled agent.
    const edgeFile = path.join(dir, 'edge.mjs');
    fs.writeFileSync(edgeFile, replaced(edgeScript, DOC.api, api));
    const made = start(process.execPath, [edgeFile], { cwd: dir, env: { ...env, EDGEPLANE_API_KEY: adminToken, NODE_EXTRA_CA_CERTS: caFile } });
    assert.equal(await made.exit(), 0, made.output());
    assert.match(made.output(), new RegExp(`edge edghts_\\w+ serves https://${edgeHost.replace(/\./g, '\\.')}`));
    const labeled = start(process.execPath, [agentFile('agent-labeled.mjs', labeledScript)], { cwd: dir, env: agentEnv });
    await labeled.printed(/online, labeled app=shop/);
    const shop = (p: string) => reach(new URL(`https://${edgeHost}:${port + 2}${p}`));
    let front: Answer | undefined;
    await waitFor('the edge to serve through the labeled agent', async () => (front = await shop('/')).status === 200);
    assert.equal(front!.body, 'Hello from my app\n');
    assert.equal(front!.headers['x-served-by'], 'edgeplane', "the traffic policy's header");
    // Each route is its own write, and an edge's changes are in force within a second of their
    // commit (SQLite is polled): '/' may be served before '/admin' is restricted.
    let admin: Answer | undefined;
    await waitFor('/admin to be restricted', async () => (admin = await shop('/admin')).status !== 200 || admin.body !== 'Hello from my app\n');
    assert.equal(admin!.status, 403, admin!.body);
    assert.equal(admin!.headers['ngrok-error-code'], 'ERR_EP_INGRESS_702');
    assert.ok(page.includes('ERR_EP_INGRESS_702') && page.includes('x-served-by: edgeplane'), 'the page says what the test saw');
    await labeled.stop();

    // 8. The TCP endpoint: the app's bytes through a port of the TCP listener host.
    const tcpAgent = start(process.execPath, [agentFile('agent-tcp.mjs', tcpScript)], { cwd: dir, env: agentEnv });
    const tcpUrl = new URL((await tcpAgent.printed(/online at (tcp:\/\/\S+)/))[1]!);
    assert.equal(tcpUrl.hostname, '1.tcp.edgeplane.app', "the first host of the default's range");
    assert.ok(Number(tcpUrl.port) >= 10000, tcpUrl.href);
    const overTcp = await new Promise<string>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port: Number(tcpUrl.port), path: '/', agent: false }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => resolve(text));
        })
        .on('error', reject);
    });
    assert.equal(overTcp, 'Hello from my app\n');
    await tcpAgent.stop();

    // Everything stops: the agent, the app, and the server with a clean exit.
    await named.stop();
    await app.stop();
    assert.equal(await serve.stop(), 0, serve.output());
  });
});
