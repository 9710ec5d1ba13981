// GET /healthz and GET /readyz: what a load balancer, an orchestrator or a monitor asks before
// sending traffic. /healthz says only that the process answers (it touches no store, so a slow
// database never gets a live process restarted); /readyz says whether this instance can serve:
// its store answers, and holds every migration this code knows. Both are public and left out of
// the OpenAPI document: they are for the operator's machinery, not for API clients.
import type { FastifyInstance } from 'fastify';
import { DEFAULT_MIGRATION_TABLE, sql } from 'kysely';
import type { Logger } from 'pino';
import { ApiError } from '../core/errors.js';
import { migrationProvider } from '../db/migrations/index.js';
import { translateStoreError, type Store } from '../db/store.js';

/** How long /readyz waits for the store by default before calling it unavailable. */
export const READY_TIMEOUT_MS = 2_000;

export interface HealthDeps {
  store: Store;
  logger: Logger;
  /** The longest wait for each of the store's answers (default READY_TIMEOUT_MS). */
  timeoutMs?: number;
}

/** Each check's verdict: `ok`, or what is wrong in words an operator can act on. */
export interface ReadinessChecks {
  store: string;
  migrations: string;
}

export interface Readiness {
  ready: boolean;
  checks: ReadinessChecks;
}

const OK = 'ok';

/** The value of `work`, or a rejection once `ms` have passed without one. */
async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new TimedOut(ms)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

class TimedOut extends Error {
  constructor(readonly ms: number) {
    super(`no answer within ${ms} ms`);
  }
}

/**
 * What a failed check says in the public body: the time limit, or the store's problem as the API
 * describes it to clients (unreachable, lost, missing tables). A driver's own message can name
 * hosts or paths, so it goes to the log only.
 */
function describeFailure(error: unknown): string {
  if (error instanceof TimedOut) return error.message;
  const translated = translateStoreError(error);
  if (translated instanceof ApiError) return `${translated.errorCode}: ${translated.message}`;
  return 'the query failed (the server log has the details)';
}

/** The names of every migration this code knows, in the order they run. */
async function knownMigrations(store: Store): Promise<string[]> {
  return Object.keys(await migrationProvider(store.dialect).getMigrations()).sort();
}

/** The names of the migrations recorded as applied in the store (Kysely's own table, in the store's schema). */
async function appliedMigrations(store: Store): Promise<Set<string>> {
  const { rows } = await sql<{ name: string }>`select name from ${sql.table(DEFAULT_MIGRATION_TABLE)}`.execute(store.reader);
  return new Set(rows.map((row) => row.name));
}

async function checkStore(store: Store, timeoutMs: number): Promise<void> {
  await within(timeoutMs, sql`select 1`.execute(store.reader));
}

/** `ok`, or the migrations the store lacks. */
async function checkMigrations(store: Store, timeoutMs: number): Promise<string> {
  const [known, applied] = await Promise.all([knownMigrations(store), within(timeoutMs, appliedMigrations(store))]);
  const missing = known.filter((name) => !applied.has(name));
  return missing.length === 0 ? OK : `not applied: ${missing.join(', ')} (a server applies them as it starts, and so does \`edgeplane migrate\`)`;
}

/** Runs both checks at once; never rejects. Failures are logged with the driver's error. */
export async function readiness(deps: HealthDeps): Promise<Readiness> {
  const timeoutMs = deps.timeoutMs ?? READY_TIMEOUT_MS;
  const failed = (check: keyof ReadinessChecks) => (error: unknown) => {
    deps.logger.warn({ err: error, check }, 'readiness check failed');
    return describeFailure(error);
  };
  const [store, migrations] = await Promise.all([
    checkStore(deps.store, timeoutMs).then(() => OK, failed('store')),
    checkMigrations(deps.store, timeoutMs).catch(failed('migrations')),
  ]);
  return { ready: store === OK && migrations === OK, checks: { store, migrations } };
}

/** Registers GET /healthz and GET /readyz: public, and hidden from the OpenAPI document. */
export function registerHealth(app: FastifyInstance, deps: HealthDeps): void {
  const route = { schema: { hide: true }, config: { public: true } } as const;

  app.get('/healthz', route, async () => ({ status: 'ok' }));

  app.get('/readyz', route, async (_request, reply) => {
    const { ready, checks } = await readiness(deps);
    reply.header('Cache-Control', 'no-store');
    if (ready) return { status: 'ok', checks };
    return reply.code(503).send({ status: 'unavailable', checks });
  });
}
