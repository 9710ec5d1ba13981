// The idle rows of the data-path benchmark: what edgeplane holds in memory for idle streams (j)
// and for idle agent sessions (k), and the CPU time idle sessions cost it (k). Each row starts a
// fresh edgeplane in a child process of its own (bench/server-process.ts), so that the process's
// resident memory is edgeplane's alone, and lightweight agents in another (bench/raw-agents.ts).
// The public connections of j are opened from the benchmark's process.
import net from 'node:net';
import { once } from 'node:events';
import { BenchApi } from './api-client.js';
import { ChildRpc } from './child-rpc.js';
import type { Verdict } from './verdict.js';
import type { RawAgentCalls } from './raw-agents.js';
import type { ServerCalls, ServerReady, ServerStats } from './server-process.js';

export interface IdleContext {
  checkInterrupted(): void;
  /** A fresh edgeplane (SQLite) in a child process. */
  startServer(): Promise<{ rpc: ChildRpc<ServerCalls>; ready: ServerReady }>;
  /** j: streams in all; k: sessions; and k's CPU window. */
  streams: number;
  sessions: number;
  idleSeconds: number;
  verdicts: Verdict[];
}

/** A muxado session holds at most 512 streams open (src/lib/muxado/session.ts, docs/agent-protocol.md): j spreads its streams over sessions of this many. */
export const STREAMS_PER_SESSION = 500;
/** An account holds at most 100 agent sessions (the listener's default): one account per hundred. */
const SESSIONS_PER_ACCOUNT = 100;
/** The agents' own heartbeat, as ngrok's agent sends it (the server's is 10 s too). */
const HEARTBEAT_MS = 10_000;
/** The CPU time of the server with no session, measured over this long before k's sessions come. */
const BASELINE_SECONDS = 10;

const KiB = 1024;
const formatInt = (value: number): string => Math.round(value).toLocaleString('en-US');
const formatKiB = (bytes: number): string => `${(bytes / KiB).toFixed(1)} KiB`;
const formatMiB = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once `check` is true (asked every 200 ms), or rejects after `ms`. */
async function until(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = performance.now() + ms;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`${what}: not within ${ms / 1000} s`);
    await sleep(200);
  }
}

/**
 * Memory grown between two readings (each after full collections), per unit: the resident set,
 * and V8's heap plus the memory it counts outside it (`external`: buffers). Neither is the whole
 * truth alone: the resident set does not grow by what fits in pages the process already had
 * (heap pages freed by a collection, malloc's free lists), and the heap does not count native
 * allocations (OpenSSL's state and buffers of each TLS connection, libuv's handles). The figure
 * held against the target is the larger of the two.
 */
function perUnit(before: ServerStats, after: ServerStats, units: number): { rss: number; heapExternal: number; figure: number } {
  const rss = (after.rss - before.rss) / units;
  const heapExternal = (after.heapUsed + after.external - (before.heapUsed + before.external)) / units;
  return { rss, heapExternal, figure: Math.max(rss, heapExternal) };
}

const perLine = (unit: string, per: ReturnType<typeof perUnit>): string =>
  `    per ${unit}: rss ${formatKiB(per.rss)}, heap used + external ${formatKiB(per.heapExternal)} (the larger, ${formatKiB(per.figure)}, is held against the target)`;

function memoryLine(label: string, s: ServerStats): string {
  return `    ${label.padEnd(28)} rss ${formatMiB(s.rss).padStart(9)}   heap used ${formatMiB(s.heapUsed).padStart(8)}   external ${formatMiB(s.external).padStart(8)}`;
}

/** Credentials for `sessions` sessions: one account (and its credential) per SESSIONS_PER_ACCOUNT. */
async function credentials(rpc: ChildRpc<ServerCalls>, baseUrl: string, sessions: number): Promise<string[]> {
  const tokens: string[] = [];
  for (let i = 0; i < Math.ceil(sessions / SESSIONS_PER_ACCOUNT); i++) {
    const account = await rpc.call('account');
    const credential = await new BenchApi(baseUrl, account.token).created('/credentials', { description: 'bench' });
    tokens.push(credential.token as string);
  }
  return tokens;
}

/**
 * j. `streams` public TCP connections held open, each a Proxy stream of an agent session that
 * holds it without reading: the server's memory grown, per stream.
 */
export async function idleStreamsRow(ctx: IdleContext): Promise<void> {
  const { streams, verdicts, checkInterrupted } = ctx;
  const tag = '[data path j]';
  const sessions = Math.ceil(streams / STREAMS_PER_SESSION);
  console.log(`${tag} a fresh edgeplane in a child process; lightweight agents (edgeplane's muxado client) in another`);
  const server = await ctx.startServer();
  let agents: ChildRpc<RawAgentCalls> | undefined;
  const sockets: net.Socket[] = [];
  try {
    const tokens = await credentials(server.rpc, server.ready.baseUrl, sessions);
    agents = (await ChildRpc.start<RawAgentCalls, { pid: number }>(new URL('./raw-agents.ts', import.meta.url), 'the lightweight agents')).rpc;
    await agents.call('connect', {
      count: sessions,
      tokens,
      agentPort: server.ready.agentPort,
      caPem: server.ready.caPem,
      heartbeatMs: HEARTBEAT_MS,
      concurrency: 20,
    });
    const { ports } = await agents.call('bindTcp', { sessions });
    console.log(
      `${tag} ${sessions} agent sessions, each with a TCP endpoint (one session holds at most 512 streams, so ${formatInt(streams)} streams take ${sessions} sessions of ${Math.ceil(streams / sessions)})`,
    );
    const before = await server.rpc.call('stats', { gc: true });
    console.log(memoryLine('before (after gc)', before));

    // Connections opened 200 at a time; each becomes a stream the agent holds.
    const started = performance.now();
    let next = 0;
    const opener = async () => {
      while (next < streams) {
        const n = next++;
        const socket = net.connect({ host: '127.0.0.1', port: ports[n % ports.length]! });
        socket.on('error', () => {});
        sockets.push(socket);
        await once(socket, 'connect');
      }
    };
    await Promise.all(Array.from({ length: 200 }, opener));
    checkInterrupted();
    await until(`${formatInt(streams)} streams held by the agents`, 60_000, async () => (await agents!.call('streams')).open >= streams);
    const open = (await agents.call('streams')).open;
    console.log(
      `${tag} ${formatInt(streams)} public connections open, ${formatInt(open)} streams held by the agents, in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    await sleep(1_000);
    const after = await server.rpc.call('stats', { gc: true });
    console.log(memoryLine('with the streams (after gc)', after));
    const closedEarly = sockets.filter((s) => s.destroyed).length;
    if (closedEarly > 0) throw new Error(`${closedEarly} public connections were closed while held`);
    const per = perUnit(before, after, streams);
    console.log(perLine('stream', per));
    verdicts.push({
      row: 'j',
      what: `${formatInt(streams)} idle streams (${sessions} sessions of ${Math.ceil(streams / sessions)}): server memory per stream`,
      measured: formatKiB(per.figure),
      beside: `rss ${formatKiB(per.rss)}, heap+external ${formatKiB(per.heapExternal)}`,
      target: '≤ 20 KiB per stream',
      outcome: per.figure <= 20 * KiB ? 'pass' : 'short',
    });
  } finally {
    for (const socket of sockets) socket.destroy();
    await agents?.stop();
    await server.rpc.stop();
  }
}

/**
 * k. `sessions` agent sessions, authenticated and heartbeating, doing nothing else: the server's
 * memory grown per session, and its CPU time over `idleSeconds` (beside its CPU time with no
 * session, over BASELINE_SECONDS before).
 */
export async function idleSessionsRow(ctx: IdleContext): Promise<void> {
  const { sessions, idleSeconds, verdicts, checkInterrupted } = ctx;
  const tag = '[data path k]';
  console.log(`${tag} a fresh edgeplane in a child process; lightweight agents (edgeplane's muxado client) in another`);
  const server = await ctx.startServer();
  let agents: ChildRpc<RawAgentCalls> | undefined;
  try {
    const tokens = await credentials(server.rpc, server.ready.baseUrl, sessions);
    agents = (await ChildRpc.start<RawAgentCalls, { pid: number }>(new URL('./raw-agents.ts', import.meta.url), 'the lightweight agents')).rpc;
    const cpu = (s: ServerStats) => s.cpuUserUs + s.cpuSystemUs;
    console.log(`${tag} the server's CPU time with no session over ${BASELINE_SECONDS} s`);
    const idle0 = await server.rpc.call('stats', { gc: false });
    const t0 = performance.now();
    await sleep(BASELINE_SECONDS * 1000);
    const idle1 = await server.rpc.call('stats', { gc: false });
    const baseline = (cpu(idle1) - cpu(idle0)) / 1000 / (performance.now() - t0);
    checkInterrupted();

    const before = await server.rpc.call('stats', { gc: true });
    console.log(memoryLine('before (after gc)', before));
    const connected = await agents.call(
      'connect',
      { count: sessions, tokens, agentPort: server.ready.agentPort, caPem: server.ready.caPem, heartbeatMs: HEARTBEAT_MS, concurrency: 50 },
      300_000,
    );
    await until(`${formatInt(sessions)} sessions held by the server`, 30_000, async () => (await server.rpc.call('stats', { gc: false })).sessions >= sessions);
    console.log(
      `${tag} ${formatInt(connected.sessions)} sessions authenticated in ${(connected.ms / 1000).toFixed(1)} s (${tokens.length} accounts of up to ${SESSIONS_PER_ACCOUNT})`,
    );
    checkInterrupted();
    await sleep(2_000);
    const after = await server.rpc.call('stats', { gc: true });
    console.log(memoryLine('with the sessions (after gc)', after));
    const per = perUnit(before, after, sessions);
    console.log(perLine('session', per));

    console.log(
      `${tag} the server's CPU time with ${formatInt(sessions)} idle sessions over ${idleSeconds} s (heartbeats both ways every ${HEARTBEAT_MS / 1000} s)`,
    );
    const c0 = await server.rpc.call('stats', { gc: false });
    const t1 = performance.now();
    await sleep(idleSeconds * 1000);
    const c1 = await server.rpc.call('stats', { gc: false });
    const share = (cpu(c1) - cpu(c0)) / 1000 / (performance.now() - t1);
    const still = c1.sessions;
    const agentsOpen = (await agents.call('sessions')).open;
    console.log(
      `    CPU: ${(share * 100).toFixed(2)} % of a core with the sessions, ${(baseline * 100).toFixed(2)} % with none; ${formatInt(still)} sessions still held (${formatInt(agentsOpen)} open at the agents)`,
    );
    if (still < sessions) throw new Error(`${sessions - still} sessions were dropped while idle`);
    verdicts.push(
      {
        row: 'k',
        what: `${formatInt(sessions)} idle heartbeating sessions: server memory per session`,
        measured: formatKiB(per.figure),
        beside: `rss ${formatKiB(per.rss)}, heap+external ${formatKiB(per.heapExternal)}`,
        target: '≤ 100 KiB per session',
        outcome: per.figure <= 100 * KiB ? 'pass' : 'short',
      },
      {
        row: 'k',
        what: `${formatInt(sessions)} idle heartbeating sessions: server CPU over ${idleSeconds} s`,
        measured: `${(share * 100).toFixed(2)} % of a core`,
        beside: `no session: ${(baseline * 100).toFixed(2)} %`,
        target: '< 5 % of a core',
        outcome: share < 0.05 ? 'pass' : 'short',
      },
    );
  } finally {
    await agents?.stop();
    await server.rpc.stop();
  }
}
