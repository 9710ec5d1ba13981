// A server that stops drains its data plane: the public listeners, the TCP ports and the agent
// listener stop accepting at once, while the requests and streams in flight through an agent (the
// real @ngrok/ngrok SDK) finish, within EDGEPLANE_DRAIN_TIMEOUT; then the sessions end and the
// instance's live rows go. The server says what it carried as it began and how long it took.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import tls from 'node:tls';
import { after, before, describe, test } from 'node:test';
import ngrok from '@ngrok/ngrok';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import type { Store } from '../../src/db/store.js';
import { startServer, type Server } from '../../src/main.js';
import { freshStore, freshStoreUrl, storeKinds, type StoreKind } from '../helpers/harness.js';

type LogLine = Record<string, unknown>;

/** The server's log lines, and a wait for the first that matches (no polling: each line is checked as it is written). */
class LogLines {
  readonly lines: LogLine[] = [];
  private waiters: { match: (line: LogLine) => boolean; resolve: (line: LogLine) => void }[] = [];

  readonly sink = new Writable({
    write: (chunk, _encoding, callback) => {
      for (const text of String(chunk).split('\n').filter(Boolean)) {
        const line = JSON.parse(text) as LogLine;
        this.lines.push(line);
        for (const waiter of this.waiters.filter((w) => w.match(line))) {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          waiter.resolve(line);
        }
      }
      callback();
    },
  });

  find(msg: RegExp): LogLine | undefined {
    return this.lines.find((l) => msg.test(String(l.msg)));
  }

  next(msg: RegExp): Promise<LogLine> {
    const seen = this.find(msg);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ match: (l) => msg.test(String(l.msg)), resolve }));
  }
}

interface Instance {
  server: Server;
  logs: LogLines;
  deployment: Deployment;
  /** Another connection to the server's store, still open once the server has stopped. */
  store: Store;
  caPem: string;
  agentPort: number;
  httpsPort: number;
  httpPort: number;
  /** The server's close(), once: a shutdown as SIGTERM starts it. */
  stop(): Promise<void>;
  /** Stops the server if the test did not, and throws the store away (the first instance of a deployment). */
  dispose(): Promise<void>;
}

/** What instances of one deployment share: the store, the master key, the data directory (the local CA that agents trust). */
interface Deployment {
  databaseUrl: string;
  masterKey: string;
  dataDir: string;
}

/**
 * `edgeplane serve` in this process (main.ts's startServer, as the CLI runs it), every listener on
 * a free port: on a fresh store, or as another instance of `beside`'s deployment.
 */
async function startInstance(kind: StoreKind, settings: { drainTimeout?: string } = {}, beside?: Instance): Promise<Instance> {
  const fresh = beside ? undefined : await freshStore(kind);
  const deployment: Deployment = beside?.deployment ?? {
    databaseUrl: freshStoreUrl(fresh!),
    masterKey: randomBytes(32).toString('base64'),
    dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'edgeplane-drain-')),
  };
  const config = loadConfig({
    dataDir: deployment.dataDir,
    databaseUrl: deployment.databaseUrl,
    masterKey: deployment.masterKey,
    listen: '127.0.0.1:0',
    tls: 'off',
    bootstrap: 'off',
    agentListen: '127.0.0.1:0',
    ingressHttpsListen: '127.0.0.1:0',
    ingressHttpListen: '127.0.0.1:0',
    // Behind one public port, as behind a balancer: URLs name it, so an agent that moves keeps its URL (and its tunnels their ids).
    publicHttpsPort: '443',
    publicHttpPort: '80',
    ...settings,
  });
  const logs = new LogLines();
  const server = await startServer(config, { logger: pino({ level: 'info' }, logs.sink), say: () => {}, terminal: false });
  const agents = server.agents!;
  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= server.close());
  return {
    server,
    stop,
    logs,
    deployment,
    store: beside?.store ?? fresh!.store,
    caPem: fs.readFileSync(path.join(deployment.dataDir, 'tls', 'ca.crt'), 'utf8'),
    agentPort: agents.address.port,
    httpsPort: agents.httpsAddress!.port,
    httpPort: agents.httpAddress!.port,
    async dispose() {
      await stop();
      if (!fresh) return;
      await fresh.dispose();
      fs.rmSync(deployment.dataDir, { recursive: true, force: true });
    },
  };
}

/** A new account's credential token, made through the API; with `reserve`, that name reserved for the account too. */
async function credentialToken(instance: Instance, reserve?: string): Promise<{ accountId: string; token: string }> {
  const issued = await instance.server.deps.accounts.createAccount({ name: `drain-${randomBytes(4).toString('hex')}` });
  const post = async (collection: string, body: unknown) => {
    const res = await fetch(`${instance.server.url}/${collection}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${issued.token}`, 'Service-Version': '2', 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as { token: string };
    assert.equal(res.status, 201, JSON.stringify(json));
    return json;
  };
  if (reserve) await post('reserved_domains', { domain: reserve });
  const { token } = await post('credentials', { description: 'drain test' });
  return { accountId: issued.account_id, token };
}

/**
 * The real agent, told not to reconnect (the server it knew is gone); `ended` resolves when it
 * sees its session end. `close()` closes it unless the server ended it (the SDK's close then
 * waits for a server that is gone).
 */
async function connectAgent(instance: Instance, token: string): Promise<{ session: ngrok.Session; ended: Promise<string>; close(): Promise<void> }> {
  let hasEnded = false;
  let sawEnd!: (error: string) => void;
  const ended = new Promise<string>((resolve) => (sawEnd = resolve));
  const session = await new ngrok.SessionBuilder()
    .authtoken(token)
    .serverAddr(`127.0.0.1:${instance.agentPort}`)
    .caCert(Buffer.from(instance.caPem))
    .handleDisconnection((_addr, error) => {
      hasEnded = true;
      sawEnd(error);
      return false;
    })
    .connect();
  return { session, ended, close: async () => (hasEnded ? undefined : session.close()) };
}

/**
 * An upstream that answers 200 with the path; a path under /held/ is announced as it arrives,
 * and its answer waits until the test calls `release()`: all of it, or under /held/body/ the
 * rest of it (the headers and a first part go at once).
 */
async function heldUpstream() {
  const arrivals: (() => void)[] = [];
  let arrived = 0;
  let releaseAll!: () => void;
  const released = new Promise<void>((resolve) => (releaseAll = resolve));
  const server = http.createServer((req, res) => {
    if (!req.url?.startsWith('/held/')) return void res.end(`answered ${req.url}`);
    arrived++;
    for (const notify of arrivals.splice(0)) notify();
    if (req.url.startsWith('/held/body/')) res.write('first part; ');
    void released.then(() => res.end(`answered ${req.url}`));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    /** Resolves once `count` held requests have reached the upstream. */
    async arrived(count: number): Promise<void> {
      while (arrived < count) await new Promise<void>((resolve) => arrivals.push(resolve));
    },
    release: () => releaseAll(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A TCP upstream that echoes each connection's bytes. */
async function echoUpstream() {
  const server = net.createServer((socket) => {
    socket.on('error', () => {});
    socket.pipe(socket);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: (server.address() as AddressInfo).port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The client connection it came on. */
  socket: net.Socket;
}

/**
 * A GET to an agent's HTTPS endpoint through the public HTTPS listener (name by SNI and Host);
 * `agent` keeps the connection for the next; `onHeaders` is called as the answer's headers arrive.
 */
function get(instance: Instance, url: string, requestPath: string, agent: https.Agent | false = false, onHeaders?: () => void): Promise<Answer> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port: instance.httpsPort,
        path: requestPath,
        headers: { host: target.host },
        servername: target.hostname,
        ca: instance.caPem,
        agent,
      },
      (res) => {
        onHeaders?.();
        const socket = res.socket;
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body, socket }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The promise's value, or a failure naming what did not happen within `ms` (a bound, not a wait: the event is awaited). */
async function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Everything the socket receives, until the server ends the connection. */
function readToEnd(socket: tls.TLSSocket): Promise<string> {
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (text += chunk));
  return new Promise((resolve, reject) => {
    socket.once('end', () => resolve(text));
    socket.once('error', reject);
  });
}

/** The error of a new TCP connection to the port (undefined when it was accepted). */
async function connectError(port: number): Promise<string | undefined> {
  const socket = net.connect({ host: '127.0.0.1', port });
  const outcome = await new Promise<string | undefined>((resolve) => {
    socket.once('connect', () => resolve(undefined));
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code));
  });
  socket.destroy();
  return outcome;
}

/**
 * A TCP balancer as deploy/nginx.conf's stream servers are: each connection joined to the first of
 * the ports that accepts it (a draining instance refuses: the next one is tried).
 */
async function tcpBalancer(ports: readonly number[]) {
  const server = net.createServer((client) => {
    client.on('error', () => {});
    const tryPort = (i: number): void => {
      if (i >= ports.length || client.destroyed) return void client.destroy();
      const upstream = net.connect({ host: '127.0.0.1', port: ports[i]! });
      upstream.once('error', () => tryPort(i + 1));
      upstream.once('connect', () => {
        upstream.removeAllListeners('error');
        upstream.on('error', () => client.destroy());
        upstream.on('close', () => client.destroy());
        client.on('close', () => upstream.destroy());
        client.pipe(upstream);
        upstream.pipe(client);
      });
    };
    tryPort(0);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: (server.address() as AddressInfo).port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Resolves once `check` holds, polled on the event loop's own schedule (no fixed sleep). */
async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** The agent sessions of an account in the store's live rows (what every instance's API lists). */
async function liveSessionRows(store: Store, accountId: string): Promise<number> {
  const rows = await store.reader.selectFrom('agent_sessions').select('id').where('account_id', '=', accountId).execute();
  return rows.length;
}

/** Resolves once the rows show `count` sessions of the account (the instance writes them within 50 ms of a change). */
async function untilRows(store: Store, accountId: string, count: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await liveSessionRows(store, accountId)) !== count) {
    if (Date.now() > deadline) assert.fail(`the live rows did not come to ${count} session(s)`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

for (const kind of storeKinds()) {
  describe(`drain on shutdown [${kind}]`, () => {
    let instance: Instance | undefined;
    after(async () => {
      await instance?.dispose();
    });

    test('a request and a TCP stream in flight through an agent finish; new connections are refused; then the session ends and its rows go', async () => {
      instance = await startInstance(kind);
      const { accountId, token } = await credentialToken(instance);
      const upstream = await heldUpstream();
      const echo = await echoUpstream();
      const { session, ended, close: closeAgent } = await connectAgent(instance, token);
      try {
        const endpoint = await session.httpEndpoint().listenAndForward(`http://127.0.0.1:${upstream.port}`);
        const tcp = await session.tcpEndpoint().listenAndForward(`tcp://127.0.0.1:${echo.port}`);
        const tcpPort = Number(new URL(tcp.url()!.replace(/^tcp:/, 'http:')).port);
        await untilRows(instance.store, accountId, 1);

        // A kept-alive connection, idle once its answer is in: the drain closes it.
        const keepAlive = new https.Agent({ keepAlive: true, maxSockets: 1 });
        const warmUp = await get(instance, endpoint.url()!, '/warm-up', keepAlive);
        assert.equal(warmUp.status, 200);
        assert.equal(warmUp.headers.connection, 'keep-alive');
        const idleClosed = once(warmUp.socket, 'close');
        // A stream open through the TCP endpoint, echoing.
        const stream = net.connect({ host: '127.0.0.1', port: tcpPort });
        stream.setEncoding('utf8');
        stream.write('before');
        const [echoed] = (await once(stream, 'data')) as [string];
        assert.equal(echoed, 'before');
        // The request in flight: its answer waits for the test.
        const inFlight = get(instance, endpoint.url()!, '/held/in-flight');
        await upstream.arrived(1);
        // A download in flight on a kept-alive connection: its headers (keep-alive) went out before the drain.
        const downloadAgent = new https.Agent({ keepAlive: true, maxSockets: 1 });
        let headersIn!: () => void;
        const downloadHeaders = new Promise<void>((resolve) => (headersIn = resolve));
        const download = get(instance, endpoint.url()!, '/held/body/download', downloadAgent, headersIn);
        await downloadHeaders;
        // A request whose headers are only half sent as the drain begins: it arrives during the drain.
        const host = new URL(endpoint.url()!).hostname;
        const late = tls.connect({ host: '127.0.0.1', port: instance.httpsPort, servername: host, ca: instance.caPem });
        await once(late, 'secureConnect');
        late.write(`GET /late HTTP/1.1\r\nHost: ${host}\r\n`);
        const lateAnswer = readToEnd(late);

        const closing = instance.stop();
        const started = await instance.logs.next(/^shutting down/);
        assert.equal(started.requests, 2, 'the requests in flight');
        assert.equal(started.streams, 2, 'the TCP stream, and the connection whose request is still arriving');
        assert.equal(started.sessions, 1);
        assert.equal(started.tunnels, 2);
        assert.equal(started.grace_seconds, 10);

        // New connections are refused at once: public HTTPS and HTTP, the TCP endpoint's port, agents.
        for (const port of [instance.httpsPort, instance.httpPort, tcpPort, instance.agentPort])
          assert.equal(await connectError(port), 'ECONNREFUSED', `port ${port}`);

        await within(5_000, idleClosed, 'the idle kept-alive connection to be closed');

        late.write('\r\n');
        const lateText = await lateAnswer;
        assert.match(lateText, /^HTTP\/1\.1 200 /, lateText);
        assert.match(lateText, /\r\nconnection: close\r\n/i, 'a request that arrives during the drain is answered with Connection: close');
        assert.match(lateText, /answered \/late$/);

        upstream.release();
        const downloaded = await download;
        assert.equal(downloaded.status, 200);
        assert.equal(downloaded.body, 'first part; answered /held/body/download');
        assert.equal(downloaded.headers.connection, 'keep-alive', 'its headers went out before the drain');
        // Its connection, idle once the answer is complete, is closed then (not kept for the grace's 10 s).
        if (!downloaded.socket.destroyed) await within(5_000, once(downloaded.socket, 'close'), "the download's connection to be closed");
        downloadAgent.destroy();
        const answer = await inFlight;
        assert.equal(answer.status, 200, 'the request in flight finished');
        assert.equal(answer.body, 'answered /held/in-flight');
        assert.equal(answer.headers.connection, 'close', 'its connection closes after the answer');
        // The stream goes on through the drain until its client ends it.
        stream.write('during');
        const [echoedAgain] = (await once(stream, 'data')) as [string];
        assert.equal(echoedAgain, 'during');
        assert.ok(!instance.logs.find(/^stopped/), 'the drain waits for the stream');
        stream.end();
        keepAlive.destroy();

        await closing;
        const stopped = instance.logs.find(/^stopped/)!;
        assert.equal(stopped.msg, 'stopped');
        assert.equal(stopped.requests_cut, 0);
        assert.equal(stopped.streams_cut, 0);
        assert.equal(stopped.sessions_ended, 1);
        assert.equal(typeof stopped.drain_ms, 'number');
        assert.ok((stopped.drain_ms as number) < 10_000, `drained in ${String(stopped.drain_ms)} ms, within the grace`);
        assert.ok((stopped.ms as number) >= (stopped.drain_ms as number));

        assert.match(await ended, /.+/, 'the agent saw its session end');
        assert.equal(await liveSessionRows(instance.store, accountId), 0, "the instance's live rows are gone");
      } finally {
        await closeAgent();
        await upstream.close();
        await echo.close();
      }
    });

    test('a rolling restart: the request in flight finishes, and the agent goes through the balancer to the next instance, binds its URL there and is served', async () => {
      await instance?.dispose();
      instance = await startInstance(kind);
      const next = await startInstance(kind, {}, instance);
      const balancer = await tcpBalancer([instance.agentPort, next.agentPort]);
      // A reserved domain: its URL is the agent's on any instance (a random name is given anew to
      // a session that starts on another instance).
      const name = `rolling-${randomBytes(4).toString('hex')}.edgeplane.app`;
      const { token } = await credentialToken(instance, name);
      const upstream = await heldUpstream();
      let disconnects = 0;
      const session = await new ngrok.SessionBuilder()
        .authtoken(token)
        .serverAddr(`127.0.0.1:${balancer.port}`)
        .caCert(Buffer.from(instance.caPem))
        // Reconnect once (the restart), never after: the test ends with the session.
        .handleDisconnection(() => ++disconnects === 1)
        .connect();
      try {
        const endpoint = await session.httpEndpoint().domain(name).listenAndForward(`http://127.0.0.1:${upstream.port}`);
        const url = endpoint.url()!;
        assert.equal(new URL(url).hostname, name);
        assert.equal(instance.server.agents!.registry.tunnels().length, 1, 'the agent is on the first instance');
        const inFlight = get(instance, url, '/held/across');
        await upstream.arrived(1);

        const stopping = instance.stop();
        upstream.release();
        const answer = await inFlight;
        assert.equal(answer.status, 200, 'the request in flight on the draining instance finished');
        assert.equal(answer.body, 'answered /held/across');
        await stopping;

        const registry = next.server.agents!.registry;
        await until(
          () => registry.tunnels().some((t) => t.endpoint?.hostport.startsWith(`${name}:`) === true),
          'the agent to bind its URL on the next instance',
        );
        assert.equal(disconnects, 1);
        // The session resumed there (its cookie is any instance's to check), so its tunnel kept its
        // id, which the agent knows: its traffic flows on the next instance.
        const after = await get(next, url, '/held/after');
        assert.equal(after.status, 200, 'the next instance carries the agent’s traffic');
        assert.equal(after.body, 'answered /held/after');
      } finally {
        // The SDK may fail to close a session it moved (`transport error`); stopping the instance ends it anyway.
        await session.close().catch(() => {});
        await next.stop();
        await balancer.close();
        await upstream.close();
      }
    });

    test('a drain longer than EDGEPLANE_DRAIN_TIMEOUT is cut at it', async () => {
      await instance?.dispose();
      instance = await startInstance(kind, { drainTimeout: '1' });
      const { token } = await credentialToken(instance);
      const upstream = await heldUpstream();
      const { session, ended, close: closeAgent } = await connectAgent(instance, token);
      try {
        const endpoint = await session.httpEndpoint().listenAndForward(`http://127.0.0.1:${upstream.port}`);
        const inFlight = get(instance, endpoint.url()!, '/held/never').then(
          (answer) => ({ answer }),
          (err: NodeJS.ErrnoException) => ({ err }),
        );
        await upstream.arrived(1);

        const startedAt = performance.now();
        await instance.stop();
        const tookMs = performance.now() - startedAt;

        const outcome = await inFlight;
        assert.ok('err' in outcome, `the request was cut, not answered: ${JSON.stringify(outcome)}`);
        const started = instance.logs.find(/^shutting down/)!;
        assert.equal(started.requests, 1);
        assert.equal(started.grace_seconds, 1);
        const stopped = instance.logs.find(/^stopped/)!;
        assert.equal(stopped.msg, 'stopped: the drain was cut at EDGEPLANE_DRAIN_TIMEOUT');
        assert.equal(stopped.requests_cut, 1);
        assert.equal(stopped.sessions_ended, 1);
        // Cut at the grace: not before it, and not long after.
        assert.ok((stopped.drain_ms as number) >= 1000 && (stopped.drain_ms as number) < 1500, `drain_ms ${String(stopped.drain_ms)}`);
        assert.ok(tookMs < 5000, `the whole stop took ${Math.round(tookMs)} ms`);
        await ended;
      } finally {
        await closeAgent();
        await upstream.close();
      }
    });
  });
}

describe('drain with nothing in flight', () => {
  let instance: Instance | undefined;
  before(async () => {
    instance = await startInstance(storeKinds()[0]!);
  });
  after(async () => {
    await instance?.dispose();
  });

  test('stops at once, and says so', async () => {
    await instance!.stop();
    const started = instance!.logs.find(/^shutting down/)!;
    assert.deepEqual([started.requests, started.streams, started.sessions, started.tunnels], [0, 0, 0, 0]);
    const stopped = instance!.logs.find(/^stopped/)!;
    assert.equal(stopped.msg, 'stopped');
    assert.ok((stopped.drain_ms as number) < 100, `drain_ms ${String(stopped.drain_ms)}`);
  });
});
