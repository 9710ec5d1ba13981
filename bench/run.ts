// Benchmark: edgeplane's API-key endpoints under autocannon, each against a bare node:http baseline of the same response size.
import autocannon from 'autocannon';
import type { Store } from '../src/db/store.js';
import type { ApiKeysTable } from '../src/db/schema.js';
import { newKeyMaterial } from '../src/modules/api-keys/api-key.resource.js';
import { generateKeyPairSync } from 'node:crypto';
import { signCertificate } from '../src/lib/ssh/certificate.js';
import { authorizedKeysLine, toSshPublicKey } from '../src/lib/ssh/keys.js';
import { startHarness, type Harness } from '../test/helpers/harness.js';
import { startBareServer, type BareServer } from './bare-server.js';

const SEED_KEYS = 10_000;
const SEED_BATCH = 500;
const SEED_PROGRESS_EVERY = 2_500;
const SEED_CREATED_AT = '2026-01-01T00:00:00Z';
const WARMUP_SECONDS = 1;
const TARGET_RATIO = 0.6;
const RESTRICTION_RULES = 1_000;
const RESTRICTION_TARGET = 0.9;

interface Settings {
  seconds: number;
  connections: number;
}

interface Scenario {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  expectedStatus: number;
  /** The edgeplane/bare ratio this scenario should reach, when it has a target. */
  targetRatio?: number;
  /** Another account's token: the scenario runs as that account. */
  token?: string;
  /** Also compare with another scenario's edgeplane rate: its name and the ratio to reach. */
  versus?: { name: string; target: number };
}

interface Outcome {
  scenario: Scenario;
  responseBytes: number;
  edgeplane: autocannon.Result;
  bare: autocannon.Result;
}

interface Edgeplane {
  harness: Harness;
  store: Store;
  baseUrl: string;
  token: string;
  accountId: string;
  userId: string;
}

function positiveIntFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer; got '${raw}'`);
  return value;
}

/** The real server on a real socket over a fresh SQLite store, exactly as the tests start it. */
async function startEdgeplane(): Promise<Edgeplane> {
  const harness = await startHarness('sqlite', { logLevel: 'silent' });
  const api = await harness.newAccount();
  return { harness, store: harness.deps.store, baseUrl: harness.baseUrl, token: api.token!, accountId: api.info.accountId, userId: api.info.userId };
}

/** Inserts SEED_KEYS keys straight into the table, in batches inside one transaction; returns their ids. */
async function seedKeys(store: Store, accountId: string, ownerId: string): Promise<string[]> {
  const ids: string[] = [];
  const started = performance.now();
  await store.db.transaction().execute(async (trx) => {
    while (ids.length < SEED_KEYS) {
      const rows: ApiKeysTable[] = [];
      for (let i = 0; i < SEED_BATCH && ids.length + rows.length < SEED_KEYS; i++) {
        const { id, secret_hash } = newKeyMaterial();
        rows.push({ id, account_id: accountId, owner_id: ownerId, description: `seed ${ids.length + i}`, metadata: '', secret_hash, created_at: SEED_CREATED_AT });
      }
      await trx.insertInto('api_keys').values(rows).execute();
      for (const row of rows) ids.push(row.id);
      if (ids.length % SEED_PROGRESS_EVERY === 0 || ids.length === SEED_KEYS) {
        console.log(`  seeding api keys: ${String(ids.length).padStart(6)} / ${SEED_KEYS}`);
      }
    }
  });
  console.log(`  seeded ${SEED_KEYS} api keys in ${Math.round(performance.now() - started)} ms`);
  return ids;
}

function requestHeaders(token: string, scenario: Scenario): Record<string, string> {
  const headers: Record<string, string> = { Authorization: `Bearer ${token}`, 'Service-Version': '2' };
  if (scenario.body !== undefined) headers['Content-Type'] = 'application/json';
  return headers;
}

/** Sends the scenario's request once and returns the size of edgeplane's response body in bytes. */
async function measureResponse(baseUrl: string, headers: Record<string, string>, scenario: Scenario): Promise<number> {
  const res = await fetch(baseUrl + scenario.path, { method: scenario.method, headers, body: scenario.body });
  const body = Buffer.from(await res.arrayBuffer());
  if (res.status !== scenario.expectedStatus) {
    throw new Error(`${scenario.method} ${scenario.path}: expected ${scenario.expectedStatus}, got ${res.status}: ${body.toString('utf8').slice(0, 300)}`);
  }
  return body.length;
}

/**
 * One autocannon run. The load generator runs in a worker thread so that it does not share the
 * servers' event loop: run in-process, its own cost per request would be added to both sides and
 * pull the edgeplane/bare ratio towards 1.
 */
function cannon(baseUrl: string, headers: Record<string, string>, scenario: Scenario, connections: number, seconds: number): Promise<autocannon.Result> {
  return autocannon({
    url: baseUrl + scenario.path,
    method: scenario.method,
    headers,
    body: scenario.body,
    connections,
    duration: seconds,
    workers: 1,
  });
}

async function runScenario(edgeplane: Edgeplane, bare: BareServer, scenario: Scenario, settings: Settings): Promise<Outcome> {
  const headers = requestHeaders(scenario.token ?? edgeplane.token, scenario);
  const responseBytes = await measureResponse(edgeplane.baseUrl, headers, scenario);
  bare.setBodySize(responseBytes);

  await cannon(edgeplane.baseUrl, headers, scenario, settings.connections, WARMUP_SECONDS);
  const edgeplaneResult = await cannon(edgeplane.baseUrl, headers, scenario, settings.connections, settings.seconds);
  await cannon(bare.url, headers, scenario, settings.connections, WARMUP_SECONDS);
  const bareResult = await cannon(bare.url, headers, scenario, settings.connections, settings.seconds);
  return { scenario, responseBytes, edgeplane: edgeplaneResult, bare: bareResult };
}

const reqPerSec = (result: autocannon.Result): number => result.requests.average;
const ratioOf = (outcome: Outcome): number => (reqPerSec(outcome.bare) > 0 ? reqPerSec(outcome.edgeplane) / reqPerSec(outcome.bare) : 0);
const formatRate = (value: number): string => Math.round(value).toLocaleString('en-US');
const formatMs = (value: number): string => (Number.isInteger(value) ? String(value) : value.toFixed(2));

/**
 * A second account whose enforced `api` IP restriction has RESTRICTION_RULES rules, one of
 * them allowing loopback, made through the API itself. Returns its token and one key id.
 */
async function restrictedAccount(edgeplane: Edgeplane): Promise<{ token: string; keyId: string }> {
  const api = await edgeplane.harness.newAccount();
  const ipp = (await api.post('/ip_policies', { description: 'bench' })).json.id as string;
  const started = performance.now();
  for (let i = 0; i < RESTRICTION_RULES - 1; i++) {
    // Deny and allow rules of several prefix lengths, none of them matching loopback.
    const cidr = i % 3 === 0 ? `2001:db8:${i.toString(16)}::/48` : `10.${(i >> 8) & 0xff}.${i & 0xff}.0/${i % 2 ? 24 : 28}`;
    const res = await api.post('/ip_policy_rules', { ip_policy_id: ipp, cidr, action: i % 5 === 0 ? 'deny' : 'allow' });
    if (res.status !== 201) throw new Error(`rule ${cidr}: ${res.status} ${res.text}`);
    if ((i + 1) % 250 === 0) console.log(`  seeding ip policy rules: ${String(i + 1).padStart(5)} / ${RESTRICTION_RULES}`);
  }
  await api.post('/ip_policy_rules', { ip_policy_id: ipp, cidr: '127.0.0.1/32', action: 'allow' });
  const restriction = await api.post('/ip_restrictions', { type: 'api', enforced: true, ip_policy_ids: [ipp] });
  if (restriction.status !== 201) throw new Error(`restriction: ${restriction.status} ${restriction.text}`);
  console.log(`  enforced an api restriction of ${RESTRICTION_RULES} rules in ${Math.round(performance.now() - started)} ms`);
  return { token: api.token!, keyId: api.info.keyId };
}

function reportScenario(outcome: Outcome, nameWidth: number, outcomes: readonly Outcome[] = []): void {
  const { scenario, edgeplane, bare } = outcome;
  console.log(
    [
      scenario.name.padEnd(nameWidth),
      `edgeplane ${formatRate(reqPerSec(edgeplane)).padStart(7)} req/s`,
      `bare ${formatRate(reqPerSec(bare)).padStart(7)} req/s`,
      `ratio ${ratioOf(outcome).toFixed(2)}`,
      `p99 ${formatMs(edgeplane.latency.p99).padStart(6)} ms`,
      `non-2xx ${edgeplane.non2xx}`,
      `(body ${outcome.responseBytes} B)`,
    ].join('   '),
  );
  for (const [target, result] of [['edgeplane', edgeplane], ['bare', bare]] as const) {
    if (result.non2xx > 0) console.log(`  WARNING: ${target} answered ${result.non2xx} non-2xx responses in '${scenario.name}'`);
    if (result.errors > 0) console.log(`  WARNING: ${target} had ${result.errors} connection errors (${result.timeouts} timeouts) in '${scenario.name}'`);
  }
  if (scenario.targetRatio !== undefined) {
    const met = ratioOf(outcome) >= scenario.targetRatio;
    console.log(`  target ${scenario.targetRatio.toFixed(2)}: ${met ? 'met' : 'NOT met'}`);
  }
  const versus = scenario.versus && outcomes.find((o) => o.scenario.name === scenario.versus!.name);
  if (scenario.versus && versus) {
    const ratio = reqPerSec(edgeplane) / reqPerSec(versus.edgeplane);
    console.log(`  versus '${versus.scenario.name}': ratio ${ratio.toFixed(2)}, target ${scenario.versus.target.toFixed(2)}: ${ratio >= scenario.versus.target ? 'met' : 'NOT met'}`);
  }
}

function reportSummary(outcomes: Outcome[]): void {
  const header = ['scenario', 'edgeplane req/s', 'bare req/s', 'ratio', 'p99 ms', 'non-2xx'];
  const rows = outcomes.map((o) => [
    o.scenario.name,
    formatRate(reqPerSec(o.edgeplane)),
    formatRate(reqPerSec(o.bare)),
    ratioOf(o).toFixed(2),
    formatMs(o.edgeplane.latency.p99),
    String(o.edgeplane.non2xx),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log('\nsummary');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) console.log(line(row));
}

/**
 * SSH certificate signing: certificates per second issued through the API (Ed25519 CA, Ed25519
 * subject) beside a bare in-process loop that only signs, as the ratio's baseline.
 */
async function signingThroughput(edgeplane: Edgeplane, settings: Settings): Promise<void> {
  const api = await edgeplane.harness.newAccount();
  const ca = (await api.post('/ssh_certificate_authorities', { private_key_type: 'ed25519' })).json;
  const subject = generateKeyPairSync('ed25519');
  const publicKey = authorizedKeysLine(toSshPublicKey(subject.publicKey));
  const body = JSON.stringify({ ssh_certificate_authority_id: ca.id, public_key: publicKey, principals: ['deploy'] });
  const scenario: Scenario = { name: 'e. POST /ssh_user_certificates', method: 'POST', path: '/ssh_user_certificates', body, expectedStatus: 201 };
  const headers = requestHeaders(api.token!, scenario);
  await measureResponse(edgeplane.baseUrl, headers, scenario);
  await cannon(edgeplane.baseUrl, headers, scenario, settings.connections, WARMUP_SECONDS);
  const viaApi = await cannon(edgeplane.baseUrl, headers, scenario, settings.connections, settings.seconds);

  const caKey = generateKeyPairSync('ed25519').privateKey;
  const caPublic = toSshPublicKey(caKey);
  const sshSubject = toSshPublicKey(subject.publicKey);
  const sign = () => signCertificate(caKey, { type: 'user', subject: sshSubject, keyId: 'bench', principals: ['deploy'], validAfter: new Date(), validBefore: new Date(Date.now() + 86_400_000) }, caPublic);
  for (const end = performance.now() + WARMUP_SECONDS * 1000; performance.now() < end; ) sign();
  let signed = 0;
  const started = performance.now();
  const end = started + settings.seconds * 1000;
  while (performance.now() < end) {
    sign();
    signed++;
  }
  const bare = signed / ((performance.now() - started) / 1000);
  const rate = reqPerSec(viaApi);
  console.log(`\nSSH signing (Ed25519 CA, Ed25519 subject)`);
  console.log(`  through the API: ${formatRate(rate)} certificates/s (p99 ${formatMs(viaApi.latency.p99)} ms, non-2xx ${viaApi.non2xx})`);
  console.log(`  bare signing loop in process: ${formatRate(bare)} certificates/s`);
  console.log(`  ratio ${(rate / bare).toFixed(2)}`);
  if (viaApi.non2xx > 0) console.log(`  WARNING: ${viaApi.non2xx} non-2xx responses`);
}

async function main(): Promise<void> {
  const settings: Settings = {
    seconds: positiveIntFromEnv('BENCH_SECONDS', 5),
    connections: positiveIntFromEnv('BENCH_CONNECTIONS', 10),
  };
  console.log(`edgeplane benchmark: node ${process.version}, ${settings.connections} connections, ${settings.seconds} s per run (after a ${WARMUP_SECONDS} s warm-up)`);

  let edgeplane: Edgeplane | undefined;
  let bare: BareServer | undefined;
  try {
    edgeplane = await startEdgeplane();
    bare = await startBareServer();
    const ids = await seedKeys(edgeplane.store, edgeplane.accountId, edgeplane.userId);
    const restricted = await restrictedAccount(edgeplane);

    const scenarios: Scenario[] = [
      { name: 'a. GET /api_keys/{id}', method: 'GET', path: `/api_keys/${ids[Math.floor(ids.length / 2)]}`, expectedStatus: 200, targetRatio: TARGET_RATIO },
      { name: 'b. GET /api_keys?limit=100', method: 'GET', path: '/api_keys?limit=100', expectedStatus: 200 },
      { name: 'c. POST /api_keys', method: 'POST', path: '/api_keys', body: JSON.stringify({ description: 'bench' }), expectedStatus: 201 },
      {
        name: `d. GET /api_keys/{id}, ${RESTRICTION_RULES}-rule IP restriction`,
        method: 'GET',
        path: `/api_keys/${restricted.keyId}`,
        expectedStatus: 200,
        token: restricted.token,
        versus: { name: 'a. GET /api_keys/{id}', target: RESTRICTION_TARGET },
      },
    ];
    const nameWidth = Math.max(...scenarios.map((s) => s.name.length));

    console.log('');
    const outcomes: Outcome[] = [];
    for (const scenario of scenarios) {
      const outcome = await runScenario(edgeplane, bare, scenario, settings);
      reportScenario(outcome, nameWidth, outcomes);
      outcomes.push(outcome);
    }
    reportSummary(outcomes);
    await signingThroughput(edgeplane, settings);
  } finally {
    await bare?.close();
    await edgeplane?.harness.close();
  }
}

main().catch((error: unknown) => {
  console.error('benchmark crashed:', error);
  process.exitCode = 1;
});
