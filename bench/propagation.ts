// Row l of the data-path benchmark: how long a change made through the API takes to reach the
// traffic. An HTTPS edge route (to a static address backend) gains a response_headers module
// through the API; one client on the instance that took the API call and one on another instance
// of the same store send requests one after another through the edge until an answer carries the
// module's header. SQLite's instances notice a change by polling a table every 250 ms,
// PostgreSQL's by LISTEN/NOTIFY. Both instances are in one child process (the test harness's
// second instance: its own store connection, caches and data plane), away from the clients.
import { randomBytes } from 'node:crypto';
import https from 'node:https';
import type { StoreKind } from '../test/helpers/harness.js';
import { BenchApi } from './api-client.js';
import type { ChildRpc } from './child-rpc.js';
import type { Verdict } from './verdict.js';
import type { ServerCalls, ServerReady } from './server-process.js';

export interface PropagationContext {
  checkInterrupted(): void;
  startServer(kind: StoreKind): Promise<{ rpc: ChildRpc<ServerCalls>; ready: ServerReady }>;
  /** The upstream's plain HTTP port (the static address backend). */
  upstreamPort: number;
  kinds: StoreKind[];
  trials: number;
  verdicts: Verdict[];
}

const HEADER = 'x-bench-change';
/** A change not seen within this long fails the row. */
const SEEN_WITHIN_MS = 10_000;
const SERVICE_DOMAIN = 'edgeplane.app';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

interface Instance {
  label: string;
  httpsPort: number;
  /** The instance's own CA (the harness makes one per instance), which issues the service domain's names. */
  caPem: string;
  agent: https.Agent;
}

/** GET /small through the edge on one instance; the value of the module's header, if any. */
function headerThrough(instance: Instance, host: string): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      { host: '127.0.0.1', port: instance.httpsPort, servername: host, ca: instance.caPem, path: '/small', headers: { Host: host }, agent: instance.agent },
      (res) => {
        res.resume();
        res.on('error', reject);
        res.on('end', () =>
          res.statusCode === 200 ? resolve(res.headers[HEADER] as string | undefined) : reject(new Error(`${instance.label}: status ${res.statusCode}`)),
        );
      },
    );
    req.setTimeout(SEEN_WITHIN_MS, () => req.destroy(new Error(`${instance.label}: no answer`)));
    req.on('error', reject);
    req.end();
  });
}

/** Requests one after another until the header is `wanted` (undefined: absent); when the answer that showed it ended. */
async function firstSeen(instance: Instance, host: string, wanted: string | undefined): Promise<number> {
  const deadline = performance.now() + SEEN_WITHIN_MS;
  for (;;) {
    const value = await headerThrough(instance, host);
    if (value === wanted) return performance.now();
    if (performance.now() > deadline) throw new Error(`${instance.label}: ${HEADER} still '${value ?? 'absent'}' after ${SEEN_WITHIN_MS / 1000} s`);
  }
}

export async function propagationRow(ctx: PropagationContext): Promise<void> {
  const { kinds, trials, verdicts, checkInterrupted } = ctx;
  for (const kind of kinds) {
    const tag = `[data path l, ${kind}]`;
    console.log(`${tag} a fresh edgeplane (${kind === 'sqlite' ? 'SQLite file' : 'PostgreSQL schema'}) and a second instance of its store, in a child process`);
    const server = await ctx.startServer(kind);
    const instances: Instance[] = [];
    try {
      const account = await server.rpc.call('account');
      const api = new BenchApi(server.ready.baseUrl, account.token);
      const backend = await api.created('/backends/static', { address: `127.0.0.1:${ctx.upstreamPort}`, tls: { enabled: false } });
      const host = `l${randomBytes(4).toString('hex')}.${SERVICE_DOMAIN}`;
      await api.created('/reserved_domains', { domain: host });
      const edge = await api.created('/edges/https', { hostports: [`${host}:443`] });
      const route = await api.created(`/edges/https/${edge.id}/routes`, { match_type: 'path_prefix', match: '/', backend: { backend_id: backend.id } });
      const modulePath = `/edges/https/${edge.id}/routes/${route.id}/response_headers`;
      const second = await server.rpc.call('second');
      instances.push(
        { label: 'same instance', httpsPort: server.ready.httpsPort, caPem: server.ready.caPem, agent: new https.Agent({ keepAlive: true, maxSockets: 1 }) },
        { label: 'another instance', httpsPort: second.httpsPort, caPem: second.caPem, agent: new https.Agent({ keepAlive: true, maxSockets: 1 }) },
      );
      // Both serve the route (without the module) before the first change.
      await Promise.all(instances.map((i) => firstSeen(i, host, undefined)));
      console.log(
        `${tag} ${trials} changes: PUT /edges/https/{id}/routes/{id}/response_headers adding ${HEADER}, timed from before the call to the end of each instance's first answer that carries it; the module is deleted (untimed) between changes`,
      );

      const seen = new Map<string, number[]>(instances.map((i) => [i.label, []]));
      const apiMs: number[] = [];
      for (let t = 1; t <= trials; t++) {
        checkInterrupted();
        // A random pause: the change lands anywhere in SQLite's poll interval.
        await sleep(Math.random() * 300);
        const marker = `change-${t}-${randomBytes(3).toString('hex')}`;
        const watching = instances.map((i) => firstSeen(i, host, marker));
        const t0 = performance.now();
        const put = await api.request('PUT', modulePath, { add: { [HEADER]: marker } });
        apiMs.push(performance.now() - t0);
        if (put.status !== 200) throw new Error(`PUT ${modulePath}: ${put.status} ${put.text.slice(0, 300)}`);
        const at = await Promise.all(watching);
        instances.forEach((instance, n) => seen.get(instance.label)!.push(at[n]! - t0));
        const removed = await api.request('DELETE', modulePath);
        if (removed.status !== 204) throw new Error(`DELETE ${modulePath}: ${removed.status} ${removed.text.slice(0, 300)}`);
        await Promise.all(instances.map((i) => firstSeen(i, host, undefined)));
      }
      apiMs.sort((a, b) => a - b);
      console.log(`    the API call itself: p50 ${percentile(apiMs, 50).toFixed(1)} ms, max ${apiMs[apiMs.length - 1]!.toFixed(1)} ms`);
      for (const instance of instances) {
        const ms = seen.get(instance.label)!.sort((a, b) => a - b);
        const max = ms[ms.length - 1]!;
        console.log(
          `    ${instance.label.padEnd(17)} first answer with the change: p50 ${percentile(ms, 50).toFixed(0)} ms, max ${max.toFixed(0)} ms (${ms.map((m) => m.toFixed(0)).join(', ')})`,
        );
        verdicts.push({
          row: 'l',
          what: `API change (add a route module) → first request that sees it, ${instance.label}, ${kind}`,
          measured: `max ${max.toFixed(0)} ms`,
          beside: `p50 ${percentile(ms, 50).toFixed(0)} ms over ${trials} changes`,
          target: '≤ 1 s (every change)',
          outcome: max <= 1000 ? 'pass' : 'short',
        });
      }
    } finally {
      for (const instance of instances) instance.agent.destroy();
      await server.rpc.stop();
    }
  }
}
