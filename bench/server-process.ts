// edgeplane for the data-path rows, in a child process of the benchmark (forked with IPC, node
// run with --expose-gc): the real server started by the test harness on a fresh store (SQLite,
// or PostgreSQL when asked; its agent listener and public listeners on 127.0.0.1, silent logs,
// no rate limit), alone in its process, so that its memory and CPU time are edgeplane's and
// nothing else's (no load generator, no agent, no benchmark bookkeeping). The benchmark asks it
// for accounts, a second instance of the same store, and its memory and CPU time.
import { startHarness, type Harness, type StoreKind } from '../test/helpers/harness.js';
import { serveCalls } from './child-rpc.js';

export interface ServerReady {
  pid: number;
  baseUrl: string;
  /** Where agents dial (TLS), and the public HTTPS and HTTP listeners. */
  agentPort: number;
  /** Where `ssh -R` agents dial. */
  sshPort: number;
  httpsPort: number;
  httpPort: number;
  /** The harness's CA: agents trust it, and names under the service domain have its certificates. */
  caPem: string;
}

export interface ServerStats {
  /** process.memoryUsage(), after two full garbage collections when asked. */
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /** process.cpuUsage() since the process started, in microseconds. */
  cpuUserUs: number;
  cpuSystemUs: number;
  /** Agent sessions this instance holds. */
  sessions: number;
}

export type ServerCalls = {
  account(): Promise<{ token: string; accountId: string }>;
  stats(args: { gc: boolean }): ServerStats;
  /** Another instance of the same store (its own store connection, caches and data plane, in this process), with its own CA. */
  second(): Promise<{ baseUrl: string; httpsPort: number; caPem: string }>;
};

/** The store's kind is the first argument. */
const kind = (process.argv[2] ?? 'sqlite') as StoreKind;
let h: Harness | undefined;
const seconds: { close(): Promise<void> }[] = [];

/** Collects until the heap stops shrinking (at most 5 rounds): what is left is live. */
function collect(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('node runs without --expose-gc');
  let before = Infinity;
  for (let i = 0; i < 5; i++) {
    gc();
    const used = process.memoryUsage().heapUsed;
    if (used >= before * 0.99) break;
    before = used;
  }
}

serveCalls<ServerCalls>(
  async (): Promise<ServerReady> => {
    h = await startHarness(kind, { logLevel: 'silent', rateLimit: { perMinute: 0 }, agents: {}, ssh: {} });
    const agents = h.agents!;
    return {
      pid: process.pid,
      baseUrl: h.baseUrl,
      agentPort: agents.port,
      sshPort: agents.sshPort!,
      httpsPort: agents.httpsPort,
      httpPort: agents.httpPort,
      caPem: agents.caPem,
    };
  },
  {
    async account() {
      const api = await h!.newAccount();
      return { token: api.token!, accountId: api.info.accountId };
    },
    stats({ gc }) {
      if (gc) collect();
      const memory = process.memoryUsage();
      const cpu = process.cpuUsage();
      return {
        rss: memory.rss,
        heapUsed: memory.heapUsed,
        heapTotal: memory.heapTotal,
        external: memory.external,
        arrayBuffers: memory.arrayBuffers,
        cpuUserUs: cpu.user,
        cpuSystemUs: cpu.system,
        sessions: h!.agents!.registry.size,
      };
    },
    async second() {
      const second = await h!.secondInstance({ agents: true });
      seconds.push(second);
      return { baseUrl: second.baseUrl, httpsPort: second.agents!.httpsPort, caPem: second.agents!.caPem };
    },
  },
  async () => {
    for (const second of seconds) await second.close();
    await h?.close();
  },
);
