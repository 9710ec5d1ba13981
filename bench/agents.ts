// The agent data path's rows of the benchmark: g (small requests/s), h (one large download and one
// large upload, MB/s) and i (the latency of one request at a time), each through an HTTPS endpoint
// that ngrok's SDK binds on edgeplane, straight to the upstream ("direct", over HTTPS and over
// plain HTTP), and through an OpenSSH reverse tunnel (`ssh -R`) on this machine, measured in the
// same run. edgeplane runs in a child process of its own (bench/server-process.ts), the upstream
// and the agent in another (bench/upstream.ts); the clients of h and i run in the benchmark's
// process, which does nothing else meanwhile.
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import http from 'node:http';
import os from 'node:os';
import { keygen, sshReverseForward, startSshd, tempDir, type ReverseForward, type Sshd } from '../test/helpers/openssh.js';
import type { LoadedRowContext } from './verdict.js';
import { onPath, type LoadResult, type LoadTarget } from './load.js';
import { SMALL_BYTES, type FromUpstream, type ToUpstream } from './upstream-messages.js';
import type { FromRelays, ToRelays } from './node-relays.js';

export interface AgentPathsContext extends LoadedRowContext {
  /** The upstream's child (it starts the agent when asked) and its ports. */
  upstream: ChildProcess;
  ports: { httpPort: number; httpsPort: number; hopPort: number };
  /** The size of each transfer of row h. */
  largeBytes: number;
  /** Records what could not be measured (the run exits 1). */
  fail(what: string, error: unknown): void;
}

/** How long the child, the agent's bind, sshd and one checking request may take. */
const STEP_TIMEOUT_MS = 30_000;

const formatInt = (value: number): string => Math.round(value).toLocaleString('en-US');
const formatMB = (bytesPerSec: number | undefined): string => (bytesPerSec === undefined ? 'n/a' : (bytesPerSec / 1e6).toFixed(1));
const formatSeconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
/** A size in binary units: 1 GiB, 256 MiB, 100 KiB, or bytes. */
export const formatBytes = (bytes: number): string => {
  for (const [unit, size] of [
    ['GiB', 2 ** 30],
    ['MiB', 2 ** 20],
    ['KiB', 2 ** 10],
  ] as const) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(2))} ${unit}`;
  }
  return `${bytes} bytes`;
};
const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The child's next message of `kind` (or its `failed`, or its exit), within STEP_TIMEOUT_MS. */
export function nextMessage<K extends FromUpstream['kind']>(child: ChildProcess, kind: K, what: string): Promise<Extract<FromUpstream, { kind: K }>> {
  return withTimeout(
    new Promise((resolve, reject) => {
      const onMessage = (m: FromUpstream) => {
        if (m.kind === kind) {
          done();
          resolve(m as Extract<FromUpstream, { kind: K }>);
        } else if (m.kind === 'failed') {
          done();
          reject(new Error(m.error));
        }
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
        done();
        reject(new Error(`the upstream process exited with ${signal ?? `code ${code}`}`));
      };
      const done = () => {
        child.off('message', onMessage);
        child.off('exit', onExit);
      };
      child.on('message', onMessage);
      child.on('exit', onExit);
    }),
    STEP_TIMEOUT_MS,
    what,
  );
}

/** Stops the upstream process (politely, then with SIGKILL after 5 s). */
export async function stopUpstream(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  if (child.connected) child.disconnect();
  await withTimeout(exited, 5_000, 'the upstream process to exit').catch(() => child.kill('SIGKILL'));
}

/** Prints how long a section took since `started` (and the load average when it is high); returns the milliseconds. */
export function sectionDone(name: string, started: number): number {
  const elapsedMs = performance.now() - started;
  const load = os.loadavg()[0]!;
  console.log(`${name}: ${formatSeconds(elapsedMs)}${load > os.availableParallelism() / 2 ? ` (load average now ${load.toFixed(2)})` : ''}`);
  return elapsedMs;
}

/** The upstream (and later the agent) in a child process: node with tsx's loader, talking over IPC. */
export function forkUpstream(): ChildProcess {
  const script = new URL('./upstream.ts', import.meta.url);
  return fork(script, [], { execArgv: ['--import', import.meta.resolve('tsx')], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

/** One GET through a path, checked for its status and body size before the path is loaded. */
function checkOnce(target: LoadTarget, expectedBytes: number, ca: string | undefined): Promise<void> {
  const url = new URL(target.url);
  const secure = url.protocol === 'https:';
  const host = target.headers.Host ?? url.host;
  const request = new Promise<void>((resolve, reject) => {
    const req = (secure ? https : http).request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        headers: { Host: host },
        agent: false,
        ...(secure && (ca ? { ca, servername: host.replace(/:\d+$/, '') } : { rejectUnauthorized: false })),
      },
      (res) => {
        let size = 0;
        res.on('data', (c: Buffer) => (size += c.length));
        res.on('error', reject);
        res.on('end', () =>
          res.statusCode === 200 && size === expectedBytes
            ? resolve()
            : reject(new Error(`GET ${target.url} (Host ${host}): status ${res.statusCode}, ${size} bytes, expected 200 and ${expectedBytes}`)),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
  return withTimeout(request, STEP_TIMEOUT_MS, `GET ${target.url}`);
}

/**
 * OpenSSH's client as edgeplane's agent: a fresh key registered as an SSH credential, then
 * `ssh -R 0:127.0.0.1:<upstream's HTTP port> … http`, as the SDK agent forwards to that port too.
 */
async function startEdgeplaneSsh(ctx: AgentPathsContext): Promise<{ host: string; close(): Promise<void> }> {
  for (const command of ['ssh', 'ssh-keygen']) if (!onPath(command)) throw new Error(`${command} is not on PATH (Debian: openssh-client)`);
  const dir = tempDir('edgeplane-bench-ssh-agent-');
  try {
    const client = keygen(dir, 'client', 'ed25519');
    await ctx.api.created('/ssh_credentials', { public_key: client.publicKey, description: 'bench' });
    const forward = await sshReverseForward(ctx.server.sshPort, {
      keyFile: client.file,
      targetPort: ctx.ports.httpPort,
      user: 'v2',
      command: ['http'],
      printed: /Forwarding https:\/\/(\S+)/,
    });
    return {
      host: forward.printed![1]!,
      async close() {
        await forward.stop();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** sshd with a fresh host key and one authorized key, and `ssh -R` from this side to the upstream's HTTPS port. */
async function startReverseTunnel(targetPort: number): Promise<{ forward: ReverseForward; close(): Promise<void> }> {
  if (!fs.existsSync('/usr/sbin/sshd')) throw new Error('/usr/sbin/sshd is not installed (Debian: openssh-server)');
  for (const command of ['ssh', 'ssh-keygen']) if (!onPath(command)) throw new Error(`${command} is not on PATH (Debian: openssh-client)`);
  if (process.getuid?.() !== 0) throw new Error('sshd needs root here (it logs in as root on loopback)');
  const dir = tempDir('edgeplane-bench-ssh-');
  let sshd: Sshd | undefined;
  try {
    const hostKey = keygen(dir, 'host', 'ed25519');
    const client = keygen(dir, 'client', 'ed25519');
    sshd = await startSshd(dir, { hostKeyFile: hostKey.file, authorizedKeys: [client.publicKey] });
    const forward = await sshReverseForward(sshd.port, { keyFile: client.file, targetPort });
    const started = sshd;
    return {
      forward,
      async close() {
        await forward.stop();
        await started.stop();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await sshd?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

type PathKey = 'edgeplane' | 'edgeplane-ssh' | 'direct-https' | 'ssh' | 'direct-http' | 'relay-pipe' | 'relay-proxy';

/** How a client reaches the upstream by one path. */
interface Way {
  key: PathKey;
  label: string;
  /** `https://127.0.0.1:<port>` or `http://…`. */
  base: string;
  /** The Host header (the endpoint's name, through edgeplane). */
  host?: string;
  /** Node's client checks the certificate against this CA and `host` (through edgeplane); elsewhere it does not check. */
  ca?: string;
}

const LABELS: Record<PathKey, string> = {
  edgeplane: 'edgeplane endpoint (HTTPS)',
  'edgeplane-ssh': 'edgeplane, ssh -R agent (HTTPS)',
  'direct-https': 'direct, HTTPS',
  ssh: 'ssh -R, HTTPS to the upstream',
  'direct-http': 'direct, plain HTTP',
  'relay-pipe': 'bare Node relay, two TLS hops',
  'relay-proxy': 'Node HTTP proxy, one TLS hop',
};
const ORDER: PathKey[] = ['edgeplane', 'edgeplane-ssh', 'direct-https', 'ssh', 'direct-http', 'relay-pipe', 'relay-proxy'];

/** The two relays of bench/node-relays.ts in a child of their own, started towards the upstream's ports. */
async function startRelays(ports: AgentPathsContext['ports']): Promise<{ child: ChildProcess; ready: FromRelays }> {
  const child = fork(new URL('./node-relays.ts', import.meta.url), [], {
    execArgv: ['--import', import.meta.resolve('tsx')],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = withTimeout(
    new Promise<FromRelays>((resolve, reject) => {
      child.once('message', (m: FromRelays) => resolve(m));
      child.once('exit', (code) => reject(new Error(`the relays' process exited with code ${code}`)));
    }),
    STEP_TIMEOUT_MS,
    'starting the Node relays',
  );
  child.send({ kind: 'start', hopPort: ports.hopPort, httpPort: ports.httpPort } satisfies ToRelays);
  try {
    return { child, ready: await ready };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}

/** A transfer that moves no byte for this long has stalled. */
const STALL_MS = 30_000;
/** One request of row i that takes longer fails the row. */
const REQUEST_TIMEOUT_MS = 10_000;

const loadTarget = (way: Way, path: string): LoadTarget => ({ url: way.base + path, method: 'GET', headers: way.host ? { Host: way.host } : {} });

/** A request of Node's client by one path (not yet ended). */
function nodeRequest(way: Way, method: 'GET' | 'POST', path: string, headers: Record<string, string | number>, agent: http.Agent | false): http.ClientRequest {
  const url = new URL(way.base);
  const secure = url.protocol === 'https:';
  const options: https.RequestOptions = {
    host: url.hostname,
    port: url.port,
    method,
    path,
    headers: { ...(way.host && { Host: way.host }), ...headers },
    agent,
    ...(secure && (way.ca ? { ca: way.ca, servername: way.host?.replace(/:\d+$/, '') } : { rejectUnauthorized: false })),
  };
  return secure ? https.request(options) : http.request(options);
}

/**
 * One transfer of `bytes` by a path, streamed both ways (neither side holds the body): a GET of
 * /download?bytes=N read to its end, or a POST of N bytes to /upload (the upstream answers how
 * many it read). Resolves with the milliseconds from the request's start to its answer's end.
 */
function transfer(way: Way, direction: 'download' | 'upload', bytes: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let moved = 0;
    let seen = -1;
    const watchdog = setInterval(() => {
      if (moved === seen) req.destroy(new Error(`${direction} by ${way.label}: no byte moved for ${STALL_MS / 1000} s (${moved} of ${bytes})`));
      seen = moved;
    }, STALL_MS);
    const fail = (error: Error) => {
      clearInterval(watchdog);
      reject(error);
    };
    const req =
      direction === 'download'
        ? nodeRequest(way, 'GET', `/download?bytes=${bytes}`, {}, false)
        : nodeRequest(way, 'POST', '/upload', { 'Content-Type': 'application/octet-stream', 'Content-Length': bytes }, false);
    req.on('error', fail);
    req.on('response', (res) => {
      const answer: Buffer[] = [];
      res.on('data', (chunk: Buffer) => {
        if (direction === 'download') moved += chunk.length;
        else answer.push(chunk);
      });
      res.on('error', fail);
      res.on('end', () => {
        clearInterval(watchdog);
        const ms = performance.now() - started;
        const got = direction === 'download' ? moved : Number((JSON.parse(Buffer.concat(answer).toString() || '{}') as { bytes?: number }).bytes);
        if (res.statusCode !== 200 || got !== bytes)
          return reject(new Error(`${direction} by ${way.label}: status ${res.statusCode}, ${got} bytes of ${bytes}`));
        resolve(ms);
      });
    });
    if (direction === 'download') return void req.end();
    const chunk = Buffer.alloc(64 * 1024, 'u');
    let left = bytes;
    const write = (): void => {
      while (left > 0) {
        const n = Math.min(chunk.length, left);
        left -= n;
        moved += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return void req.once('drain', write);
      }
      req.end();
    };
    write();
  });
}

/** GET /small once on a kept-alive connection; the milliseconds from the request to its answer's end. */
function timedRequest(way: Way, agent: http.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = nodeRequest(way, 'GET', '/small', {}, agent);
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`GET /small by ${way.label}: no answer within ${REQUEST_TIMEOUT_MS / 1000} s`)));
    req.on('error', reject);
    req.on('response', (res) => {
      let size = 0;
      res.on('data', (c: Buffer) => (size += c.length));
      res.on('error', reject);
      res.on('end', () => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        if (res.statusCode !== 200 || size !== SMALL_BYTES) reject(new Error(`GET /small by ${way.label}: status ${res.statusCode}, ${size} bytes`));
        else resolve(ms);
      });
    });
    req.end();
  });
}

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

/** Requests one after another on one kept-alive connection: a warm-up, then `seconds` of them timed. */
async function sequentialLatency(way: Way, seconds: number, warmupSeconds: number): Promise<{ count: number; p50: number; p99: number }> {
  const agent = new (way.base.startsWith('https:') ? https.Agent : http.Agent)({ keepAlive: true, maxSockets: 1 });
  try {
    for (const end = performance.now() + warmupSeconds * 1000; performance.now() < end;) await timedRequest(way, agent);
    const times: number[] = [];
    for (const end = performance.now() + seconds * 1000; performance.now() < end;) times.push(await timedRequest(way, agent));
    times.sort((a, b) => a - b);
    return { count: times.length, p50: percentile(times, 50), p99: percentile(times, 99) };
  } finally {
    agent.destroy();
  }
}

const formatMs = (ms: number): string => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));
const mbps = (bytes: number, ms: number): number => bytes / 1e6 / (ms / 1000);
const verdict = (ok: boolean): 'pass' | 'short' => (ok ? 'pass' : 'short');

function resultLine(label: string, r: LoadResult): string {
  const problems = [r.non2xx > 0 ? `${formatInt(r.non2xx)} non-2xx!` : '', r.errors > 0 ? `${formatInt(r.errors)} socket errors/timeouts!` : '']
    .filter(Boolean)
    .join(', ');
  return `    ${label.padEnd(30)} ${formatInt(r.rate).padStart(7)} req/s  ${formatMB(r.bytesPerSec).padStart(7)} MB/s  (p99 ${r.p99Ms === undefined ? 'n/a' : r.p99Ms.toFixed(1)} ms${problems ? `, ${problems}` : ''})`;
}

/** A plain-text table; the first column left-aligned, the others right-aligned. */
export function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)];
}

/**
 * Binds the agent's endpoint, starts the ssh -R tunnel, then runs rows g, h and i. What cannot
 * be measured is handed to `fail`; a missing ssh -R is a skipped baseline, not a failure.
 */
export async function benchAgentPaths(ctx: AgentPathsContext): Promise<void> {
  const { tool, seconds, warmupSeconds, checkInterrupted, server, api, upstream, ports, largeBytes, verdicts, fail } = ctx;
  const tag = '[data path]';
  const credential = await api.created('/credentials', { description: 'bench' });
  console.log(`${tag} the agent (@ngrok/ngrok, in the upstream's process) binds an HTTPS endpoint forwarding to http://127.0.0.1:${ports.httpPort}`);
  const bound = nextMessage(upstream, 'bound', 'binding the endpoint');
  upstream.send({ kind: 'agent', token: credential.token as string, serverAddr: `127.0.0.1:${server.agentPort}`, caPem: server.caPem } satisfies ToUpstream);
  const endpointHost = new URL((await bound).url).host;
  console.log(`${tag} bound https://${endpointHost}`);

  console.log(`${tag} starting sshd on loopback (fresh host key, one authorized key) and ssh -N -R 0:127.0.0.1:${ports.httpsPort}`);
  let tunnel: Awaited<ReturnType<typeof startReverseTunnel>> | undefined;
  let sshSkipped: string | undefined;
  try {
    tunnel = await startReverseTunnel(ports.httpsPort);
    console.log(`${tag} sshd forwards 127.0.0.1:${tunnel.forward.port} through ssh to the upstream's HTTPS port`);
  } catch (error) {
    sshSkipped = message(error).split('\n')[0];
    console.log(`${tag} ssh -R skipped: ${message(error)}`);
  }

  console.log(`${tag} ssh -R ${'0:127.0.0.1:' + ports.httpPort} v2@edgeplane http: OpenSSH as edgeplane's agent, signed in by an SSH credential`);
  let sshAgent: Awaited<ReturnType<typeof startEdgeplaneSsh>> | undefined;
  try {
    sshAgent = await startEdgeplaneSsh(ctx);
    console.log(`${tag} bound https://${sshAgent.host} through ssh`);
  } catch (error) {
    fail("edgeplane's ssh -R agent", error);
  }

  let relays: Awaited<ReturnType<typeof startRelays>> | undefined;
  try {
    relays = await startRelays(ports);
    console.log(
      `${tag} Node alone, for what this runtime reaches: a bare relay (TLS off, bytes piped over TLS to a pipe in the agent's process) on 127.0.0.1:${relays.ready.pipePort}, a node:https → node:http proxy on 127.0.0.1:${relays.ready.proxyPort}`,
    );
    const ways: Way[] = [
      { key: 'edgeplane', label: LABELS.edgeplane, base: `https://127.0.0.1:${server.httpsPort}`, host: endpointHost, ca: server.caPem },
      ...(sshAgent
        ? [
            {
              key: 'edgeplane-ssh' as const,
              label: LABELS['edgeplane-ssh'],
              base: `https://127.0.0.1:${server.httpsPort}`,
              host: sshAgent.host,
              ca: server.caPem,
            },
          ]
        : []),
      { key: 'direct-https', label: LABELS['direct-https'], base: `https://127.0.0.1:${ports.httpsPort}` },
      ...(tunnel ? [{ key: 'ssh' as const, label: LABELS.ssh, base: `https://127.0.0.1:${tunnel.forward.port}` }] : []),
      { key: 'direct-http', label: LABELS['direct-http'], base: `http://127.0.0.1:${ports.httpPort}` },
      { key: 'relay-pipe', label: LABELS['relay-pipe'], base: `https://127.0.0.1:${relays.ready.pipePort}` },
      { key: 'relay-proxy', label: LABELS['relay-proxy'], base: `https://127.0.0.1:${relays.ready.proxyPort}` },
    ];
    const skippedLine = (key: PathKey) => console.log(`    ${LABELS[key].padEnd(30)} skipped: ${sshSkipped}`);
    // Every path answers once before it is measured: a path that does not work is a failure.
    const working: Way[] = [];
    for (const way of ways) {
      try {
        await checkOnce(loadTarget(way, '/small'), SMALL_BYTES, way.ca);
        working.push(way);
      } catch (error) {
        checkInterrupted();
        fail(`${way.label}: GET /small`, error);
      }
    }
    const each = async (row: string, measure: (way: Way) => Promise<void>) => {
      for (const key of ORDER) {
        const way = working.find((w) => w.key === key);
        if (!way) {
          if (key === 'ssh' && sshSkipped) skippedLine(key);
          continue;
        }
        try {
          checkInterrupted();
          await measure(way);
        } catch (error) {
          checkInterrupted();
          fail(`${row}, ${way.label}`, error);
        }
      }
    };

    // g. small requests, keep-alive, the load tool's connections
    console.log(`${tag} running g. GET /small (${SMALL_BYTES} bytes), keep-alive (${ORDER.join(', then ')}; ${warmupSeconds} s warm-up + ${seconds} s each)`);
    const g = new Map<PathKey, LoadResult>();
    await each('g', async (way) => {
      await tool.run(loadTarget(way, '/small'), warmupSeconds);
      checkInterrupted();
      const result = await tool.run(loadTarget(way, '/small'), seconds);
      console.log(resultLine(way.label, result));
      g.set(way.key, result);
    });
    const ge = g.get('edgeplane');
    const gDirect = g.get('direct-https');
    const gSsh = g.get('ssh');
    const rate = (r: LoadResult | undefined) => (r ? `${formatInt(r.rate)} req/s${r.non2xx + r.errors > 0 ? ' !' : ''}` : 'failed');
    verdicts.push(
      {
        row: 'g',
        what: 'small requests/s through the endpoint vs ssh -R',
        measured: rate(ge),
        beside: `${gSsh ? `ssh -R ${rate(gSsh)} (${ge ? (ge.rate / gSsh.rate).toFixed(2) : '—'}×)` : `ssh -R ${sshSkipped ? 'skipped' : 'failed'}`}; Node alone: bare relay ${rate(g.get('relay-pipe'))}, HTTP proxy ${rate(g.get('relay-proxy'))}`,
        target: '≥ 1.00 × ssh -R',
        outcome: ge && gSsh ? verdict(ge.rate >= gSsh.rate) : 'n/a',
      },
      {
        row: 'g',
        what: "small requests/s through edgeplane's ssh -R agent",
        measured: rate(g.get('edgeplane-ssh')),
        beside: `the SDK agent ${rate(ge)}${ge && g.get('edgeplane-ssh') ? ` (${(g.get('edgeplane-ssh')!.rate / ge.rate).toFixed(2)}×)` : ''}; sshd's ssh -R ${rate(gSsh)}`,
        // No target of its own: the figure beside the SDK agent's, as the issue asks.
        target: 'beside the SDK agent',
        outcome: 'n/a',
      },
      {
        row: 'g',
        what: 'small requests/s through the endpoint vs straight',
        measured: rate(ge),
        beside: gDirect ? `direct HTTPS ${rate(gDirect)} (${ge ? (ge.rate / gDirect.rate).toFixed(2) : '—'}×)` : 'direct failed',
        target: '≥ 0.50 × direct HTTPS',
        outcome: ge && gDirect ? verdict(ge.rate >= 0.5 * gDirect.rate) : 'n/a',
      },
    );

    // h. one large download and one large upload, one at a time
    console.log(`${tag} running h. one download and one upload of ${formatInt(largeBytes)} bytes by each path (streamed, one at a time)`);
    const h = new Map<PathKey, { download: number; upload: number }>();
    await each('h', async (way) => {
      const downMs = await transfer(way, 'download', largeBytes);
      checkInterrupted();
      const upMs = await transfer(way, 'upload', largeBytes);
      const result = { download: mbps(largeBytes, downMs), upload: mbps(largeBytes, upMs) };
      console.log(
        `    ${way.label.padEnd(30)} download ${result.download.toFixed(1).padStart(7)} MB/s (${formatSeconds(downMs)})   upload ${result.upload.toFixed(1).padStart(7)} MB/s (${formatSeconds(upMs)})`,
      );
      h.set(way.key, result);
    });
    for (const direction of ['download', 'upload'] as const) {
      const e = h.get('edgeplane')?.[direction];
      const ssh = h.get('ssh')?.[direction];
      const direct = h.get('direct-https')?.[direction];
      verdicts.push({
        row: 'h',
        what: `one ${formatBytes(largeBytes)} ${direction} through the endpoint, MB/s`,
        measured: e === undefined ? 'failed' : `${e.toFixed(1)} MB/s`,
        beside: `ssh -R ${ssh === undefined ? (sshSkipped ? 'skipped' : 'failed') : ssh.toFixed(1)}, direct HTTPS ${direct === undefined ? 'failed' : direct.toFixed(1)}`,
        target: '≥ ssh -R MB/s',
        outcome: e !== undefined && ssh !== undefined ? verdict(e >= ssh) : 'n/a',
      });
    }

    // i. one request at a time
    console.log(
      `${tag} running i. GET /small one request at a time on one kept-alive connection (Node's client; ${warmupSeconds} s warm-up + ${seconds} s each)`,
    );
    const i = new Map<PathKey, { count: number; p50: number; p99: number }>();
    await each('i', async (way) => {
      const r = await sequentialLatency(way, seconds, warmupSeconds);
      console.log(
        `    ${way.label.padEnd(30)} p50 ${formatMs(r.p50).padStart(6)} ms   p99 ${formatMs(r.p99).padStart(6)} ms   (${formatInt(r.count)} requests)`,
      );
      i.set(way.key, r);
    });
    const ie = i.get('edgeplane');
    const iDirect = i.get('direct-https');
    const iSsh = i.get('ssh');
    if (ie && iDirect)
      console.log(`    added by the endpoint over direct HTTPS: p50 +${formatMs(ie.p50 - iDirect.p50)} ms, p99 +${formatMs(ie.p99 - iDirect.p99)} ms`);
    if (iSsh && iDirect)
      console.log(`    added by ssh -R over direct HTTPS: p50 +${formatMs(iSsh.p50 - iDirect.p50)} ms, p99 +${formatMs(iSsh.p99 - iDirect.p99)} ms`);
    const added = (r: typeof ie) => (r && iDirect ? `+${formatMs(r.p50 - iDirect.p50)} / +${formatMs(r.p99 - iDirect.p99)} ms` : '—');
    verdicts.push({
      row: 'i',
      what: 'added latency p50/p99, one request at a time',
      measured: ie ? `${formatMs(ie.p50)} / ${formatMs(ie.p99)} ms (${added(ie)})` : 'failed',
      beside: `direct HTTPS ${iDirect ? `${formatMs(iDirect.p50)} / ${formatMs(iDirect.p99)} ms` : 'failed'}; ssh -R ${iSsh ? `${formatMs(iSsh.p50)} / ${formatMs(iSsh.p99)} ms (${added(iSsh)})` : sshSkipped ? 'skipped' : 'failed'}`,
      target: 'p50 ≤ direct + 1 ms',
      outcome: ie && iDirect ? verdict(ie.p50 - iDirect.p50 <= 1) : 'n/a',
    });
  } finally {
    await tunnel?.close().catch((error: unknown) => console.log(`${tag} stopping ssh/sshd: ${message(error)}`));
    await sshAgent?.close().catch((error: unknown) => console.log(`${tag} stopping the ssh -R agent: ${message(error)}`));
    await stopUpstream(relays?.child);
  }
}
