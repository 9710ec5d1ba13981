// The agent data path's rows of the benchmark (g: small responses, h: a large download): the same
// load through an HTTPS endpoint that ngrok's SDK binds on edgeplane, straight to the upstream
// ("direct", over HTTPS and over plain HTTP), and through an OpenSSH reverse tunnel (`ssh -R`) on
// this machine, each measured in the same run with the same load generator.
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import http from 'node:http';
import os from 'node:os';
import { startHarness, type Harness } from '../test/helpers/harness.js';
import { keygen, sshReverseForward, startSshd, tempDir, type ReverseForward, type Sshd } from '../test/helpers/openssh.js';
import { onPath, type LoadResult, type LoadTarget, type LoadTool } from './load.js';
import { LARGE_BYTES, SMALL_BYTES, type FromUpstream, type ToUpstream } from './upstream-messages.js';

export interface AgentBenchOptions {
  tool: LoadTool;
  seconds: number;
  warmupSeconds: number;
  /** Throws when the run was interrupted. */
  checkInterrupted(): void;
}

export interface AgentBenchRun {
  /** What could not be measured, and why (the run exits 1). A skipped ssh -R is not one. */
  failures: string[];
  elapsedMs: number;
}

/** How long the child, the agent's bind, sshd and one checking request may take. */
const STEP_TIMEOUT_MS = 30_000;

type PathKey = 'edgeplane' | 'direct-https' | 'ssh' | 'direct-http';

const PATHS: { key: PathKey; label: string }[] = [
  { key: 'edgeplane', label: 'edgeplane endpoint (HTTPS)' },
  { key: 'direct-https', label: 'direct, HTTPS' },
  { key: 'ssh', label: 'ssh -R, HTTPS to the upstream' },
  { key: 'direct-http', label: 'direct, plain HTTP' },
];

const SIZES = [
  { key: 'g', path: '/small', bytes: SMALL_BYTES, label: `g. GET of a ${SMALL_BYTES}-byte body` },
  { key: 'h', path: '/large', bytes: LARGE_BYTES, label: `h. GET of a ${LARGE_BYTES / 1024 / 1024} MiB body` },
] as const;

const formatInt = (value: number): string => Math.round(value).toLocaleString('en-US');
const formatMB = (bytesPerSec: number | undefined): string => (bytesPerSec === undefined ? 'n/a' : (bytesPerSec / 1e6).toFixed(1));
const formatSeconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
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

/** The upstream (and later the agent) in a child process: node with tsx's loader, talking over IPC. */
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

interface Measured {
  result?: LoadResult;
  /** Why the path was not measured. */
  skipped?: string;
}

function ratio(a: Measured | undefined, b: Measured | undefined): string {
  if (!a?.result || !b?.result) return '—';
  return (a.result.rate / b.result.rate).toFixed(2);
}

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

/** Runs rows g and h. Failures are returned (and printed), not thrown, except an interrupt. */
export async function benchAgents(options: AgentBenchOptions): Promise<AgentBenchRun> {
  const { tool, seconds, warmupSeconds, checkInterrupted } = options;
  const tag = '[agents]';
  const started = performance.now();
  const failures: string[] = [];
  const fail = (what: string, error: unknown) => {
    console.log(`${tag} ${what} FAILED: ${message(error)}`);
    failures.push(`${what}: ${message(error)}`);
  };

  console.log(`\n${tag} starting the server with its agent listener and public HTTPS listener (fresh SQLite file, silent logs)`);
  let h: Harness | undefined;
  let child: ChildProcess | undefined;
  let tunnel: Awaited<ReturnType<typeof startReverseTunnel>> | undefined;
  try {
    h = await startHarness('sqlite', { logLevel: 'silent', rateLimit: { perMinute: 0 }, agents: {} });
    const agents = h.agents!;
    const api = await h.newAccount();
    const credential = await api.post('/credentials', { description: 'bench' });
    if (credential.status !== 201) throw new Error(`POST /credentials: ${credential.status} ${credential.text}`);

    console.log(`${tag} starting the upstream (node:http and node:https on loopback) and the agent (@ngrok/ngrok) in a child process`);
    child = forkUpstream();
    const ready = await nextMessage(child, 'ready', 'starting the upstream');
    const bound = nextMessage(child, 'bound', 'binding the endpoint');
    child.send({ kind: 'agent', token: credential.json.token as string, serverAddr: `127.0.0.1:${agents.port}`, caPem: agents.caPem } satisfies ToUpstream);
    const { url } = await bound;
    const endpointHost = new URL(url).host;
    console.log(`${tag} the agent bound ${url}, forwarding to http://127.0.0.1:${ready.httpPort}`);

    console.log(`${tag} starting sshd on loopback (fresh host key, one authorized key) and ssh -N -R 0:127.0.0.1:${ready.httpsPort}`);
    let sshSkipped: string | undefined;
    try {
      tunnel = await startReverseTunnel(ready.httpsPort);
      console.log(`${tag} sshd forwards 127.0.0.1:${tunnel.forward.port} through ssh to the upstream's HTTPS port`);
    } catch (error) {
      sshSkipped = message(error).split('\n')[0];
      console.log(`${tag} ssh -R skipped: ${message(error)}`);
    }

    const targetOf = (key: PathKey, path: string): LoadTarget | undefined => {
      const get = (url: string, headers: Record<string, string> = {}): LoadTarget => ({ url, method: 'GET', headers });
      switch (key) {
        case 'edgeplane':
          // To the public listener on 127.0.0.1, the endpoint named by Host (and, for wrk, SNI 127.0.0.1, which gets the
          // default certificate: the load tools do not verify certificates either way).
          return get(`https://127.0.0.1:${agents.httpsPort}${path}`, { Host: endpointHost });
        case 'direct-https':
          return get(`https://127.0.0.1:${ready.httpsPort}${path}`);
        case 'direct-http':
          return get(`http://127.0.0.1:${ready.httpPort}${path}`);
        case 'ssh':
          return tunnel ? get(`https://127.0.0.1:${tunnel.forward.port}${path}`) : undefined;
      }
    };

    const summary: string[][] = [];
    for (const size of SIZES) {
      console.log(`${tag} running ${size.label} (${PATHS.map((p) => p.key).join(', then ')}; ${warmupSeconds} s warm-up + ${seconds} s each)`);
      const measured = new Map<PathKey, Measured>();
      for (const path of PATHS) {
        const target = targetOf(path.key, size.path);
        if (!target) {
          measured.set(path.key, { skipped: sshSkipped ?? 'not available' });
          console.log(`    ${path.label.padEnd(30)} skipped: ${sshSkipped}`);
          continue;
        }
        try {
          await checkOnce(target, size.bytes, path.key === 'edgeplane' ? agents.caPem : undefined);
          checkInterrupted();
          await tool.run(target, warmupSeconds);
          checkInterrupted();
          const result = await tool.run(target, seconds);
          checkInterrupted();
          measured.set(path.key, { result });
          console.log(resultLine(path.label, result));
        } catch (error) {
          checkInterrupted();
          measured.set(path.key, { skipped: 'failed' });
          fail(`${size.label}, ${path.label}`, error);
        }
      }
      for (const path of PATHS) {
        const m = measured.get(path.key);
        const r = m?.result;
        const flag = r && (r.non2xx > 0 || r.errors > 0) ? ' !' : '';
        summary.push([
          `${size.key}. ${path.label}`,
          r ? formatInt(r.rate) + flag : m?.skipped === 'failed' ? 'failed' : 'skipped',
          r ? formatMB(r.bytesPerSec) : '—',
          path.key === 'direct-https' ? '1.00' : ratio(m, measured.get('direct-https')),
          path.key === 'ssh' ? (r ? '1.00' : '—') : ratio(m, measured.get('ssh')),
        ]);
      }
    }

    console.log(`\n=== Summary: the agent data path (SQLite; ${tool.name}, ${seconds} s runs) ===`);
    console.log(
      `g: GET of ${SMALL_BYTES} bytes, h: GET of ${formatInt(LARGE_BYTES)} bytes; MB/s is 10^6 bytes a second as the load tool counts them (heads and bodies). No targets yet.`,
    );
    for (const line of table(['row', 'req/s', 'MB/s', 'vs direct https', 'vs ssh -R'], summary)) console.log(line);
    if (sshSkipped) console.log(`ssh -R skipped: ${sshSkipped}`);
    if (summary.some((r) => r[1]!.endsWith('!'))) console.log('! the load tool saw non-2xx responses or socket errors in that run: see the lines above');
  } catch (error) {
    checkInterrupted();
    fail('agent rows', error);
  } finally {
    await tunnel?.close().catch((error: unknown) => console.log(`${tag} stopping ssh/sshd: ${message(error)}`));
    await stopUpstream(child);
    await h?.close();
  }
  return { failures, elapsedMs: sectionDone('agents', started) };
}
