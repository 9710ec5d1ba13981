// Writes docs/examples.md: one worked example of every resource kind's create and of every
// module's PUT, each the request the test suite makes (test/helpers/secured-resources.ts, the
// bodies the security suite sends to every route) and the answer a fresh server gives it. Ids a
// module names are ones made in the same account, so every answer is a success. What changes
// from run to run (ids, times, keys, certificates, tokens, random names) is written as fixed
// stand-ins, so the file only changes when the API does; test/contract/examples.test.ts fails
// when the file on disk is not what this writes: `npm run docs:examples`, review, commit.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startHarness, type Api } from '../test/helpers/harness.js';
import { makeChain } from '../test/helpers/certs.js';
import { readOnlyResources, securedResources } from '../test/helpers/secured-resources.js';

export const EXAMPLES_FILE = fileURLToPath(new URL('../docs/examples.md', import.meta.url));

const BASE_URL = 'https://127.0.0.1:8443';
const TIME = '2026-11-26T12:00:00Z';
const ID = /\b([a-z]+)_[0-9A-Za-z]{27}\b/g;
/** Values that are a secret, a key, a certificate or a digest in full: shown cut. */
const CUT_KEYS = new Set(['token', 'certificate', 'certificate_pem', 'private_key_pem', 'ca_pem', 'public_key', 'serial_number', 'secret', 'client_secret']);

const INTRODUCTION = [
  '# API examples',
  '',
  "One request and its answer for every resource kind's create, for every module, and for a read of",
  'each kind the API only reads, against a',
  'fresh server (`Service-Version: 2` and `Authorization: Bearer <token>` on each). Each request is',
  'one the test suite makes; where a module names another resource (a backend, an IP policy, a',
  'certificate authority), it is one made in the same account. Ids, times, keys, certificates and',
  'tokens are written as stand-ins (`ak_2Ex…1`, `2026-11-26T12:00:00Z`, `…`): the same id is the',
  'same stand-in throughout a section. Reads, updates (`PATCH` with the fields to change), lists',
  '(`?limit=` and `before_id`) and deletes (`204`) follow the conventions of [api.md](api.md).',
  '',
  'This file is written by `npm run docs:examples`; `test/contract/examples.test.ts` fails when it',
  'no longer matches what the server answers.',
];

/** Stand-ins for what differs between runs; one per section, so that ids are numbered from 1 in each. */
class StandIns {
  private readonly ids = new Map<string, string>();

  constructor(private readonly baseUrl: string) {}

  value(value: unknown, key?: string): unknown {
    if (typeof value === 'string') return key && CUT_KEYS.has(key) && value !== '' ? cut(value) : this.text(value);
    if (Array.isArray(value)) return value.map((v) => this.value(v));
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [this.text(k), this.value(v, k)]));
    return value;
  }

  private text(text: string): string {
    return (
      text
        .split(this.baseUrl)
        .join(BASE_URL)
        .replace(ID, (id, prefix: string) => {
          let standIn = this.ids.get(id);
          if (!standIn) this.ids.set(id, (standIn = `${prefix}_2Ex…${this.ids.size + 1}`));
          return standIn;
        })
        .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, TIME)
        .replace(/-----BEGIN ([A-Z ]+)-----[\s\S]*?-----END \1-----\n?/g, '-----BEGIN $1-----\n…\n-----END $1-----\n')
        .replace(/\b(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp\d+)(-cert-v01@openssh\.com)? [A-Za-z0-9+/=]{20,}/g, '$1$2 AAAA…')
        .replace(/SHA256:[A-Za-z0-9+/=]{20,}/g, 'SHA256:…')
        .replace(/\b10\.\d+\.\d+\.\d+\/32\b/g, '10.1.2.3/32')
        .replace(/\b[a-z0-9]{10,}\.[a-z0-9]{10,}\.edgeplane-cname\.app\b/g, '3kq…7d.9fz…2x.edgeplane-cname.app')
        .replace(/(?<![0-9A-Za-z])[0-9a-f]{8}(?![0-9A-Za-z])/g, 'shop')
        // The seeded live agent's name (test/helpers/live-agents.ts).
        .replace(/\bapp-[0-9a-z]{8}\.example\.com\b/g, 'app-shop.example.com')
    );
  }
}

/** `-----BEGIN …`, a key line or a token: its kind kept, its content cut. */
function cut(value: string): string {
  const pem = /^-----BEGIN ([A-Z ]+)-----/.exec(value);
  if (pem) return `-----BEGIN ${pem[1]}-----\n…\n-----END ${pem[1]}-----\n`;
  const key = /^(\S+) [A-Za-z0-9+/=]{20,}/.exec(value);
  if (key) return `${key[1]} AAAA…`;
  return '…';
}

/** Modules that exclude one another (oauth, oidc and saml; policy and traffic_policy). */
const EXCLUSIVE_MODULES = new Set(['oauth', 'oidc', 'saml', 'policy', 'traffic_policy']);

const json = (value: unknown) => JSON.stringify(value, null, 2);

/** One request and its answer, in Markdown, with stand-ins. */
function example(standIns: StandIns, method: string, url: string, body: unknown, status: number, answer: unknown): string[] {
  return [
    '```http',
    `${method} ${standIns.value(url) as string}`,
    ...(body === undefined ? [] : ['', json(standIns.value(body))]),
    '```',
    '',
    `\`${status}\`${answer === undefined ? '' : ':'}`,
    ...(answer === undefined ? [] : ['', '```json', json(standIns.value(answer)), '```']),
    '',
  ];
}

/** Real ids of the account for the ids a module body names (`bkdtg_000…`), so that each PUT succeeds. */
async function realIds(api: Api): Promise<Map<string, string>> {
  const made = async (path: string, body: Record<string, unknown>) => {
    const res = await api.post(path, body);
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${res.text}`);
    return res.json.id as string;
  };
  const zero = (prefix: string) => `${prefix}_${'0'.repeat(27)}`;
  return new Map([
    [zero('bkdtg'), await made('/backends/tunnel_group', { labels: { app: 'shop' } })],
    [zero('ipp'), await made('/ip_policies', { description: 'the office' })],
    [zero('ca'), await made('/certificate_authorities', { ca_pem: (await makeChain()).root.certPem })],
  ]);
}

function withRealIds(body: Record<string, unknown>, ids: Map<string, string>): Record<string, unknown> {
  let text = JSON.stringify(body);
  for (const [zero, real] of ids) text = text.split(zero).join(real);
  return JSON.parse(text) as Record<string, unknown>;
}

/** The text of docs/examples.md, from a fresh server. */
export async function renderExamples(): Promise<string> {
  const h = await startHarness('sqlite', { logLevel: 'silent', rateLimit: { perMinute: 0 } });
  try {
    const api = await h.newAccount();
    const lines = [...INTRODUCTION, ''];
    for (const kind of securedResources) {
      const standIns = new StandIns(h.baseUrl);
      const collection = kind.parent ? await kind.parent(api) : kind.path;
      const body = JSON.parse(JSON.stringify(await kind.create(api)).replaceAll('security suite', 'an example')) as Record<string, unknown>;
      const created = await api.post(collection, body);
      if (created.status !== 201) throw new Error(`POST ${collection}: ${created.status} ${created.text}`);
      lines.push(`## \`${kind.path}\``, '', ...example(standIns, 'POST', collection, body, created.status, created.json));
      const modules = Object.entries(kind.modules ?? {});
      if (modules.length === 0) continue;
      const ids = await realIds(api);
      const item = `${collection}/${created.json.id as string}`;
      for (const [name, moduleBody] of modules) {
        const sent = withRealIds(moduleBody, ids);
        const put = await api.put(`${item}/${name}`, sent);
        if (put.status !== 200) throw new Error(`PUT ${item}/${name}: ${put.status} ${put.text}`);
        lines.push(`### \`${name}\` of \`${kind.path}\``, '', ...example(standIns, 'PUT', `${item}/${name}`, sent, put.status, put.json));
        // Modules that exclude each other: each is taken off before the next is shown.
        if (EXCLUSIVE_MODULES.has(name)) {
          const removed = await api.delete(`${item}/${name}`);
          if (removed.status !== 204) throw new Error(`DELETE ${item}/${name}: ${removed.status} ${removed.text}`);
        }
      }
    }
    // The kinds the API only reads: an item of each, as a GET answers it.
    for (const kind of readOnlyResources) {
      const standIns = new StandIns(h.baseUrl);
      const url = `${kind.path}/${await kind.item(api)}`;
      const got = await api.get(url);
      if (got.status !== 200) throw new Error(`GET ${url}: ${got.status} ${got.text}`);
      lines.push(`## \`${kind.path}\` (read only)`, '', ...example(standIns, 'GET', url, undefined, got.status, got.json));
    }
    return lines.join('\n');
  } finally {
    await h.close();
  }
}

async function main(): Promise<void> {
  const text = await renderExamples();
  const previous = fs.existsSync(EXAMPLES_FILE) ? fs.readFileSync(EXAMPLES_FILE, 'utf8') : undefined;
  fs.writeFileSync(EXAMPLES_FILE, text);
  const state = previous === undefined ? 'created' : previous === text ? 'unchanged' : 'updated';
  console.log(`${path.relative(process.cwd(), EXAMPLES_FILE)}: ${state}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  await main();
}
