// Writes the OpenAPI document the server serves at GET /openapi.json to test/contract/openapi.snapshot.json,
// which test/contract/openapi-snapshot.test.ts compares with the live document. After a deliberate change to
// the API's shape: `npm run openapi:snapshot`, review the snapshot's diff, and commit it with the change.
//
// The document comes from a real server over SQLite (the test harness), fetched over HTTP as a client gets it.
// Its one run-dependent value, the server's base URL (a random port), is replaced by a fixed placeholder.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startHarness, type Harness } from '../test/helpers/harness.js';

export const SNAPSHOT_FILE = fileURLToPath(new URL('../test/contract/openapi.snapshot.json', import.meta.url));

/** Stands for the server's base URL in the snapshot (the default listen address). */
export const PLACEHOLDER_BASE_URL = 'http://127.0.0.1:8443';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The document a running server serves, with its base URL replaced by the placeholder wherever it appears. */
export async function fetchOpenApiDocument(h: Harness): Promise<Json> {
  const res = await (await h.newAccount()).get('/openapi.json', { noVersion: true });
  if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}: ${res.text.slice(0, 500)}`);
  const { host } = new URL(h.baseUrl);
  const placeholderHost = new URL(PLACEHOLDER_BASE_URL).host;
  const normalise = (value: Json): Json => {
    if (typeof value === 'string') return value.split(h.baseUrl).join(PLACEHOLDER_BASE_URL).split(host).join(placeholderHost);
    if (Array.isArray(value)) return value.map(normalise);
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [normalise(k) as string, normalise(v)]));
    return value;
  };
  return normalise(res.json as Json);
}

/** Starts a server on a fresh SQLite store, takes its document, and stops it. */
export async function generateOpenApiDocument(): Promise<Json> {
  const h = await startHarness('sqlite', { logLevel: 'silent' });
  try {
    return await fetchOpenApiDocument(h);
  } finally {
    await h.close();
  }
}

/** The snapshot file's exact text: 2-space JSON and a trailing newline. */
export function serialiseSnapshot(doc: Json): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}

async function main(): Promise<void> {
  const doc = await generateOpenApiDocument();
  const text = serialiseSnapshot(doc);
  const previous = fs.existsSync(SNAPSHOT_FILE) ? fs.readFileSync(SNAPSHOT_FILE, 'utf8') : undefined;
  fs.writeFileSync(SNAPSHOT_FILE, text);
  const operations = Object.values((doc as { paths?: Record<string, object> }).paths ?? {}).reduce((n, methods) => n + Object.keys(methods).length, 0);
  const state = previous === undefined ? 'created' : previous === text ? 'unchanged' : 'updated';
  console.log(`${path.relative(process.cwd(), SNAPSHOT_FILE)}: ${state} (${operations} operations)`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  await main();
}
