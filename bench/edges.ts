// The HTTPS edge rows of the benchmark (BENCH_ONLY=edges): what a route's modules cost per request.
// Three HTTPS edges on names under the service domain, each with one route to the same static
// address backend (a node:http upstream in a child process), loaded one after the other through
// edgeplane's public HTTPS listener with the same load: a route with no module, one with an IP
// restriction, request and response headers and a ten-rule traffic policy, and one with a
// user_agent_filter. The ratios to the first are the modules' cost; the upstream loaded directly
// is printed for reference.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { startHarness, type Api, type Harness } from '../test/helpers/harness.js';
import { created, edgesRead, request, type Answer } from '../test/edges/helpers.js';
import { forkUpstream, nextMessage, sectionDone, stopUpstream, table, withTimeout } from './agents.js';
import type { LoadResult, LoadTarget, LoadTool } from './load.js';
import { BOTS } from './regex.js';
import { SMALL_BYTES } from './upstream-messages.js';

export interface EdgeBenchOptions {
  tool: LoadTool;
  seconds: number;
  warmupSeconds: number;
  /** Throws when the run was interrupted. */
  checkInterrupted(): void;
}

export interface EdgeBenchRun {
  /** What could not be measured, and why (the run exits 1). */
  failures: string[];
  elapsedMs: number;
}

/** How long one checking request may take. */
const STEP_TIMEOUT_MS = 30_000;
/** The harness's service domain: names under it get a certificate of the service CA. */
const SERVICE_DOMAIN = 'edgeplane.app';
/** The IP policy's rules besides the one allowing loopback. */
const OTHER_IP_RULES = 20;
/** A run whose failed requests (non-2xx, socket errors, timeouts) exceed this share measured failures, not the route. */
const FAILED_SHARE = 0.01;
/** Every request of every row carries these (the route of e2 removes x-b; e3 reads the User-Agent). */
const USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const REQUEST_HEADERS = { 'User-Agent': USER_AGENT, 'x-b': '1' };

/**
 * The traffic policy of e2: ten on_http_request rules of the kind a policy holds, the first nine
 * false for the benchmark's request (so every expression is evaluated on each request), the last
 * true with an add-headers action.
 */
const POLICY = {
  on_http_request: [
    { name: 'no admin', expressions: ["req.url.path.startsWith('/admin')"], actions: [{ type: 'deny', config: { status_code: 403 } }] },
    {
      name: 'no deletes',
      expressions: ["req.method == 'DELETE'"],
      actions: [{ type: 'custom-response', config: { status_code: 405, content: 'not here' } }],
    },
    { name: 'debug', expressions: ["'x-debug' in req.headers"], actions: [{ type: 'custom-response', config: { status_code: 418, content: 'debug' } }] },
    {
      name: 'scanners',
      expressions: ["req.url.path.endsWith('.php') || req.url.path.contains('/wp-')"],
      actions: [{ type: 'deny', config: { status_code: 404 } }],
    },
    { name: 'blocked network', expressions: ["inCidrRange(conn.client_ip, '198.51.100.0/24')"], actions: [{ type: 'deny', config: { status_code: 403 } }] },
    {
      name: 'too large',
      expressions: ['req.content_length > 10485760'],
      actions: [{ type: 'custom-response', config: { status_code: 413, content: 'too large' } }],
    },
    {
      name: 'scan tools',
      expressions: ["req.user_agent.matches('(?i)(sqlmap|nikto|masscan|zgrab)')"],
      actions: [{ type: 'deny', config: { status_code: 403 } }],
    },
    {
      name: 'old host',
      expressions: ["req.host == 'www.example.com'"],
      actions: [{ type: 'redirect', config: { to: 'https://example.com/', status_code: 301 } }],
    },
    {
      name: 'preview',
      expressions: ["'preview' in req.query_params && req.url.path.startsWith('/api/')"],
      actions: [{ type: 'url-rewrite', config: { from: '/api/(.*)', to: '/preview/$1' } }],
    },
    {
      name: 'tag',
      expressions: ["req.method == 'GET' && req.url.path.startsWith('/')"],
      actions: [{ type: 'add-headers', config: { headers: { 'x-policy': 'bench' } } }],
    },
  ],
};

type RowKey = 'e1' | 'e2' | 'e3' | 'direct';

interface RowSpec {
  key: RowKey;
  label: string;
  /** The route's modules besides its backend (edge rows only). */
  modules?: Record<string, unknown>;
}

const ROWS: RowSpec[] = [
  { key: 'e1', label: 'e1. edge route, no module', modules: {} },
  {
    key: 'e2',
    label: 'e2. ip_restriction + headers + traffic_policy',
    modules: {
      request_headers: { add: { 'x-a': '1' }, remove: ['x-b'] },
      response_headers: { add: { 'x-c': '1' } },
      traffic_policy: { value: JSON.stringify(POLICY) },
      // ip_restriction is added once the policy exists
    },
  },
  { key: 'e3', label: 'e3. user_agent_filter (10 deny)', modules: { user_agent_filter: { deny: BOTS } } },
  { key: 'direct', label: 'upstream direct (plain HTTP)' },
];

const formatInt = (value: number): string => Math.round(value).toLocaleString('en-US');
const signed = (value: number): string => `${value >= 0 ? '+' : '−'}${Math.abs(value).toFixed(0)}`;
/** The error's first line (an assertion's message goes on with the values it compared). */
const message = (error: unknown): string => (error instanceof Error ? error.message : String(error)).split('\n')[0]!;

/** An IP policy whose rules allow 127.0.0.0/8 after OTHER_IP_RULES others (IPv4 and IPv6, allow and deny) that do not match loopback. */
async function ipPolicy(api: Api): Promise<string> {
  const policy = (await created(api, '/ip_policies', { description: 'bench edges' })).id as string;
  for (let i = 0; i < OTHER_IP_RULES; i++) {
    const cidr = i % 4 === 0 ? `2001:db8:${i.toString(16)}::/48` : i % 2 ? `10.${i}.${i % 7}.0/24` : `172.${16 + i}.0.0/16`;
    await created(api, '/ip_policy_rules', { ip_policy_id: policy, cidr, action: i % 3 === 0 ? 'deny' : 'allow' });
  }
  await created(api, '/ip_policy_rules', { ip_policy_id: policy, cidr: '127.0.0.0/8', action: 'allow' });
  return policy;
}

/** An HTTPS edge on a fresh reserved name under the service domain with one route (prefix `/`). */
async function edgeRoute(api: Api, prefix: string, route: Record<string, unknown>): Promise<string> {
  const host = `${prefix}${randomBytes(4).toString('hex')}.${SERVICE_DOMAIN}`;
  await created(api, '/reserved_domains', { domain: host });
  const edge = await created(api, '/edges/https', { hostports: [`${host}:443`] });
  await created(api, `/edges/https/${edge.id}/routes`, { match_type: 'path_prefix', match: '/', ...route });
  return host;
}

/** One GET to the public listener with the host as SNI and Host, the service CA trusted. */
const get = (h: Harness, host: string, path: string, headers: Record<string, string> = {}): Promise<Answer> =>
  withTimeout(request(h, host, path, { headers: { ...REQUEST_HEADERS, ...headers } }), STEP_TIMEOUT_MS, `GET https://${host}${path}`);

function expect(condition: boolean, what: string, answer: Answer): void {
  if (!condition) throw new Error(`${what}: status ${answer.status}, headers ${JSON.stringify(answer.headers)}, body ${answer.text.slice(0, 200)}`);
}

/** Before a row is loaded: one request through it answers the upstream's body, and the modules of e2 and e3 are in force. */
async function checkRow(h: Harness, key: RowKey, host: string): Promise<void> {
  const small = await get(h, host, '/small');
  expect(small.status === 200 && small.body.length === SMALL_BYTES, `GET /small through ${key}: expected 200 and ${SMALL_BYTES} bytes`, small);
  if (key === 'e2') {
    expect(small.headers['x-c'] === '1', 'e2: the response_headers module did not add x-c', small);
    const seen = await get(h, host, '/headers');
    const upstream = JSON.parse(seen.text) as Record<string, string>;
    expect(
      seen.status === 200 && upstream['x-a'] === '1' && upstream['x-b'] === undefined && upstream['x-policy'] === 'bench',
      'e2: the upstream did not see x-a, x-policy added and x-b removed',
      seen,
    );
    const debug = await get(h, host, '/small', { 'x-debug': '1' });
    expect(debug.status === 418, "e2: the traffic policy's rule on x-debug did not answer 418", debug);
  }
  if (key === 'e3') {
    const bot = await get(h, host, '/small', { 'User-Agent': 'Mozilla/5.0 (compatible; Googlebot/2.1)' });
    expect(bot.status === 403, 'e3: the user_agent_filter let a denied User-Agent in', bot);
  }
}

interface Measured {
  result: LoadResult;
  /** Some requests failed, below FAILED_SHARE. */
  suspect: boolean;
}

function resultLine(label: string, r: LoadResult): string {
  const problems = [r.non2xx > 0 ? `${formatInt(r.non2xx)} non-2xx!` : '', r.errors > 0 ? `${formatInt(r.errors)} socket errors/timeouts!` : '']
    .filter(Boolean)
    .join(', ');
  return `    ${label.padEnd(46)} ${formatInt(r.rate).padStart(7)} req/s  ${(1e6 / r.rate).toFixed(0).padStart(5)} µs/req  (p99 ${r.p99Ms === undefined ? 'n/a' : r.p99Ms.toFixed(1)} ms${problems ? `, ${problems}` : ''})`;
}

/** Runs the edge rows. Failures are returned (and printed), not thrown, except an interrupt. */
export async function benchEdges(options: EdgeBenchOptions): Promise<EdgeBenchRun> {
  const { tool, seconds, warmupSeconds, checkInterrupted } = options;
  const tag = '[edges]';
  const started = performance.now();
  const failures: string[] = [];
  const fail = (what: string, error: unknown) => {
    console.log(`${tag} ${what} FAILED: ${message(error)}`);
    failures.push(`${what}: ${message(error)}`);
  };

  console.log(`\n${tag} starting the server with its public HTTPS listener (fresh SQLite file, silent logs)`);
  let h: Harness | undefined;
  let child: ChildProcess | undefined;
  try {
    h = await startHarness('sqlite', { logLevel: 'silent', rateLimit: { perMinute: 0 }, agents: {} });
    const agents = h.agents!;
    console.log(`${tag} starting the upstream (node:http on loopback, GET /small answers ${SMALL_BYTES} bytes) in a child process`);
    child = forkUpstream();
    const ready = await nextMessage(child, 'ready', 'starting the upstream');

    const api = await h.newAccount();
    const backend = await created(api, '/backends/static', { address: `127.0.0.1:${ready.httpPort}`, tls: { enabled: false } });
    const policy = await ipPolicy(api);
    const hosts = new Map<RowKey, string>();
    for (const row of ROWS) {
      if (!row.modules) continue;
      const modules = row.key === 'e2' ? { ...row.modules, ip_restriction: { ip_policy_ids: [policy] } } : row.modules;
      hosts.set(row.key, await edgeRoute(api, `b${row.key.slice(1)}`, { backend: { backend_id: backend.id }, ...modules }));
    }
    const accountId = api.info.accountId;
    await edgesRead(
      h,
      () => {
        const rules = agents.edges.account(accountId)?.ipPolicies.get(policy);
        const routed = [...hosts.values()].every((host) => agents.edges.httpsEdge(host)?.routes.length === 1);
        return routed && rules !== undefined && rules.allow.length + rules.deny.length === OTHER_IP_RULES + 1;
      },
      'the three edges and the IP policy',
    );
    console.log(
      `${tag} three HTTPS edges (${[...hosts.values()].join(', ')}), each one route / to a static address backend (http://127.0.0.1:${ready.httpPort});`,
    );
    console.log(
      `${tag} e2: an IP policy of ${OTHER_IP_RULES + 1} rules (127.0.0.0/8 allowed last), request_headers (add x-a, remove x-b), response_headers (add x-c), a traffic policy of ${POLICY.on_http_request.length} on_http_request rules (the last true, add-headers)`,
    );
    console.log(
      `${tag} load: https://<name>:${agents.httpsPort}/small with SNI and Host the edge's name, connected to 127.0.0.1; headers User-Agent (a Chrome one) and x-b: 1`,
    );

    const targetOf = (key: RowKey): LoadTarget => {
      if (key === 'direct') return { url: `http://127.0.0.1:${ready.httpPort}/small`, method: 'GET', headers: { ...REQUEST_HEADERS } };
      const host = hosts.get(key)!;
      return { url: `https://127.0.0.1:${agents.httpsPort}/small`, method: 'GET', headers: { Host: host, ...REQUEST_HEADERS }, servername: host };
    };

    // Every row is checked and warmed up first, then the measured runs follow back to back: at the
    // edge's rates a warm-up of a second is a few thousand requests, and the first row loaded would
    // otherwise pay for the JIT of the path all rows share.
    console.log(
      `${tag} checking and warming up ${ROWS.map((r) => r.key).join(', ')} (${warmupSeconds} s each), then measuring them in the same order (${seconds} s each)`,
    );
    const warm = new Set<RowKey>();
    for (const row of ROWS) {
      try {
        if (row.key !== 'direct') await checkRow(h, row.key, hosts.get(row.key)!);
        checkInterrupted();
        await tool.run(targetOf(row.key), warmupSeconds);
        checkInterrupted();
        warm.add(row.key);
      } catch (error) {
        checkInterrupted();
        fail(row.label, error);
      }
    }
    const measured = new Map<RowKey, Measured>();
    for (const row of ROWS) {
      if (!warm.has(row.key)) continue;
      try {
        const result = await tool.run(targetOf(row.key), seconds);
        checkInterrupted();
        console.log(resultLine(row.label, result));
        const failed = result.non2xx + result.errors;
        if (result.rate <= 0 || failed > FAILED_SHARE * result.rate * seconds) {
          throw new Error(`${formatInt(failed)} of about ${formatInt(result.rate * seconds)} requests failed (non-2xx or socket errors)`);
        }
        measured.set(row.key, { result, suspect: failed > 0 });
      } catch (error) {
        checkInterrupted();
        fail(row.label, error);
      }
    }

    const base = measured.get('e1');
    const direct = measured.get('direct');
    const ratio = (m: Measured | undefined, to: Measured | undefined) => (m && to ? (m.result.rate / to.result.rate).toFixed(2) : '—');
    const rows = ROWS.map((row) => {
      const m = measured.get(row.key);
      return [
        row.label,
        m ? formatInt(m.result.rate) + (m.suspect ? ' !' : '') : 'failed',
        m ? (1e6 / m.result.rate).toFixed(0) : '—',
        ratio(m, base),
        ratio(m, direct),
      ];
    });
    console.log(`\n=== Summary: the HTTPS edge module pipeline (SQLite; ${tool.name}, ${seconds} s runs) ===`);
    console.log(
      `GET of ${SMALL_BYTES} bytes, keep-alive; µs/req is 1/rate (the time per request of the whole machine at this load, not a latency). No targets yet.`,
    );
    for (const line of table(['row', 'req/s', 'µs/req', 'vs e1 (no module)', 'vs direct'], rows)) console.log(line);
    for (const key of ['e2', 'e3'] as const) {
      const m = measured.get(key);
      if (m && base) {
        console.log(
          `${key}/e1 = ${ratio(m, base)}: 1/rate ${key} − e1 = ${signed(1e6 / m.result.rate - 1e6 / base.result.rate)} µs per request (what ${key}'s modules cost; negative is noise)`,
        );
      }
    }
    if ([...measured.values()].some((m) => m.suspect))
      console.log('! the load tool saw a few non-2xx responses or socket errors in that run: see the lines above');
  } catch (error) {
    checkInterrupted();
    fail('edge rows', error);
  } finally {
    await stopUpstream(child);
    await h?.close();
  }
  return { failures, elapsedMs: sectionDone('edges', started) };
}
