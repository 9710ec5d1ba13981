// The data-path rows of the benchmark (BENCH_ONLY=datapath), each printed beside its baseline and
// its target, pass or short:
//   g  small requests/s through an agent's HTTPS endpoint (bench/agents.ts), beside the upstream
//      straight and through `ssh -R`
//   h  one large download and one large upload through the same paths, MB/s
//   i  the latency of one request at a time through the same paths
//   j  idle streams: edgeplane's memory per stream (bench/idle.ts)
//   k  idle agent sessions: edgeplane's memory per session and its CPU time
//   l  an API change until the first request that sees it, same and another instance (bench/propagation.ts)
//   m  an HTTPS edge with a static address backend, beside HAProxy (bench/haproxy.ts)
// edgeplane runs in child processes of its own (bench/server-process.ts): a fresh one for g–i and
// m, one each for j and k (so that their memory figures start from a clean process), one per store
// for l. The upstream and ngrok's agent run in another child (bench/upstream.ts), the lightweight
// agents of j and k in another (bench/raw-agents.ts).
import type { StoreKind } from '../test/helpers/harness.js';
import { BenchApi } from './api-client.js';
import { benchAgentPaths, formatBytes, forkUpstream, nextMessage, sectionDone, stopUpstream } from './agents.js';
import { ChildRpc } from './child-rpc.js';
import { staticEdgeRow } from './haproxy.js';
import { idleSessionsRow, idleStreamsRow } from './idle.js';
import type { LoadTool } from './load.js';
import { propagationRow } from './propagation.js';
import type { ServerCalls, ServerReady } from './server-process.js';
import type { Verdict } from './verdict.js';

export interface DataPathOptions {
  tool: LoadTool;
  seconds: number;
  warmupSeconds: number;
  /** Throws when the run was interrupted. */
  checkInterrupted(): void;
  /** Row l runs on PostgreSQL too when set (the harness reads EDGEPLANE_TEST_DATABASE_URL). */
  postgresUrl: string | undefined;
}

export interface DataPathRun {
  /** What could not be measured, and why (the run exits 1). A skipped baseline is not one. */
  failures: string[];
  elapsedMs: number;
}

interface DataPathSettings {
  /** h: the size of each transfer. */
  largeBytes: number;
  /** j: idle streams in all. */
  streams: number;
  /** k: idle sessions, and the window their CPU time is measured over. */
  sessions: number;
  idleSeconds: number;
  /** l: changes per store. */
  changes: number;
  /** A directory: every edgeplane child writes a CPU profile there (node --cpu-prof). */
  cpuProfileDir: string | undefined;
  /** The rows to run (BENCH_ROWS). */
  rows: Set<string>;
}

function intFromEnv(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min) throw new Error(`${name} must be an integer ≥ ${min}; got '${raw}'`);
  return value;
}

export function dataPathSettings(): DataPathSettings {
  return {
    largeBytes: intFromEnv('BENCH_LARGE_BYTES', 2 ** 30, 2 ** 20),
    streams: intFromEnv('BENCH_STREAMS', 10_000, 100),
    sessions: intFromEnv('BENCH_SESSIONS', 1_000, 10),
    idleSeconds: intFromEnv('BENCH_IDLE_SECONDS', 30, 5),
    changes: intFromEnv('BENCH_CHANGES', 10, 1),
    cpuProfileDir: process.env.BENCH_CPU_PROF?.trim() || undefined,
    rows: rowsFromEnv(),
  };
}

const ROWS = ['g', 'h', 'i', 'j', 'k', 'l', 'm'] as const;

/** BENCH_ROWS: the rows to run, as letters (`g,m`); g, h and i run together. Default: all. */
function rowsFromEnv(): Set<string> {
  const raw = process.env.BENCH_ROWS?.trim();
  if (!raw) return new Set(ROWS);
  const rows = raw.split(',').map((r) => r.trim().toLowerCase());
  const unknown = rows.filter((r) => !(ROWS as readonly string[]).includes(r));
  if (unknown.length > 0) throw new Error(`BENCH_ROWS takes the letters ${ROWS.join(', ')}; not ${unknown.join(', ')}`);
  return new Set(rows);
}

/** A plain-text table of text: every column left-aligned. */
function textTable(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)];
}

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error)).split('\n')[0]!;

/** Runs rows g–m. Failures are returned (and printed), not thrown, except an interrupt. */
export async function benchDataPath(options: DataPathOptions): Promise<DataPathRun> {
  const { tool, seconds, warmupSeconds, checkInterrupted } = options;
  const settings = dataPathSettings();
  const runs = (...rows: string[]) => rows.some((r) => settings.rows.has(r));
  const started = performance.now();
  const failures: string[] = [];
  const verdicts: Verdict[] = [];
  const fail = (what: string, error: unknown) => {
    console.log(`[data path] ${what} FAILED: ${message(error)}`);
    failures.push(`${what}: ${message(error)}`);
  };
  /** Runs one part; an error (other than an interrupt) is recorded and the next part runs. */
  const attempt = async (what: string, part: () => Promise<void>) => {
    try {
      checkInterrupted();
      await part();
    } catch (error) {
      checkInterrupted();
      fail(what, error);
    }
  };

  // Every edgeplane child, killed if the benchmark exits without stopping it.
  const servers = new Set<ChildRpc<ServerCalls>>();
  const killServers = () => servers.forEach((s) => s.kill());
  process.on('exit', killServers);
  const startServer = async (kind: StoreKind) => {
    const prof = settings.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${settings.cpuProfileDir}`] : [];
    const server = await ChildRpc.start<ServerCalls, ServerReady>(new URL('./server-process.ts', import.meta.url), `edgeplane (${kind})`, {
      args: [kind],
      execArgv: ['--expose-gc', ...prof],
    });
    servers.add(server.rpc);
    return server;
  };

  console.log(
    `\n[data path] edgeplane in child processes of its own (node --expose-gc${settings.cpuProfileDir ? `, --cpu-prof into ${settings.cpuProfileDir}` : ''}), fresh SQLite files`,
  );
  console.log(
    `[data path] h: ${formatBytes(settings.largeBytes)} each way (BENCH_LARGE_BYTES); j: ${settings.streams.toLocaleString('en-US')} streams (BENCH_STREAMS); k: ${settings.sessions.toLocaleString('en-US')} sessions, CPU over ${settings.idleSeconds} s (BENCH_SESSIONS, BENCH_IDLE_SECONDS); l: ${settings.changes} changes per store (BENCH_CHANGES), ${options.postgresUrl ? 'SQLite and PostgreSQL' : 'SQLite only (no PostgreSQL URL)'}`,
  );
  console.log(`[data path] starting the upstream (node:http and node:https on loopback) and, later, ngrok's agent in a child process`);
  const upstream = forkUpstream();
  try {
    const ports = await nextMessage(upstream, 'ready', 'starting the upstream');

    if (runs('g', 'h', 'i', 'm'))
      await attempt('starting edgeplane for rows g, h, i and m', async () => {
        const server = await startServer('sqlite');
        try {
          const account = await server.rpc.call('account');
          const api = new BenchApi(server.ready.baseUrl, account.token);
          // g–i need the agent's endpoint; m does not: one failing leaves the other to run.
          if (runs('g', 'h', 'i'))
            await attempt('rows g, h and i', () =>
              benchAgentPaths({
                tool,
                seconds,
                warmupSeconds,
                checkInterrupted,
                server: server.ready,
                api,
                upstream,
                ports,
                largeBytes: settings.largeBytes,
                verdicts,
                fail,
              }),
            );
          if (runs('m'))
            await attempt('row m', () =>
              staticEdgeRow({ tool, seconds, warmupSeconds, checkInterrupted, server: server.ready, api, upstreamPort: ports.httpPort, verdicts }),
            );
        } finally {
          await server.rpc.stop();
        }
      });
    const idle = {
      checkInterrupted,
      startServer: () => startServer('sqlite'),
      streams: settings.streams,
      sessions: settings.sessions,
      idleSeconds: settings.idleSeconds,
      verdicts,
    };
    if (runs('j')) await attempt('row j', () => idleStreamsRow(idle));
    if (runs('k')) await attempt('row k', () => idleSessionsRow(idle));
    if (runs('l'))
      await attempt('row l', () =>
        propagationRow({
          checkInterrupted,
          startServer,
          upstreamPort: ports.httpPort,
          kinds: options.postgresUrl ? ['sqlite', 'postgres'] : ['sqlite'],
          trials: settings.changes,
          verdicts,
        }),
      );
  } catch (error) {
    checkInterrupted();
    fail('data path', error);
  } finally {
    await stopUpstream(upstream);
    for (const server of servers) await server.stop();
    process.off('exit', killServers);
  }

  console.log(
    `\n=== Summary: the data path (${tool.name}, ${seconds} s runs${settings.cpuProfileDir ? '; profiled, so slower' : ''}; pass or short against the targets; n/a: its baseline was not measured) ===`,
  );
  const rows = verdicts.map((v) => [v.row, v.what, v.measured, v.beside, v.target, v.outcome]);
  for (const line of textTable(['row', 'what', 'measured', 'beside', 'target', 'outcome'], rows)) console.log(line);
  if (rows.some((r) => r[2]!.includes('!') || r[3]!.includes('!')))
    console.log('! the load tool saw non-2xx responses or socket errors in that run: see the lines above');
  return { failures, elapsedMs: sectionDone('data path', started) };
}
