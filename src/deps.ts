// Explicit wiring: what the app and the jobs are made of. Tests swap parts through overrides.
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { Sealer } from './lib/crypto/sealer.js';
import { systemClock, type Clock } from './core/time.js';
import type { Store } from './db/store.js';
import type { CrossAccountReader } from './db/cross-account.js';
import type { JobDefinition } from './jobs/runner.js';
import { createRequestLimiter, type RequestLimiter } from './http/rate-limit.js';
import { certificateJobs, type AutomationTuning } from './certificates/certificate-automation.js';
import { KeyAuthenticator } from './resources/api-keys/api-key.auth.js';
import { AccountService } from './accounts/account.service.js';
import { ApiIpGuard } from './resources/ip-restrictions/api-ip-guard.js';
import { buildResources, type Resources } from './resources/registry.js';
import { noSessionsHere } from './resources/tunnel-sessions/tunnel-session.commands.js';
import type { SessionCommands } from './core/live-agents.js';

export interface Deps {
  config: Config;
  sealer: Sealer;
  logger: Logger;
  store: Store;
  /**
   * The store's reader for the reads that look past one account: API key authentication, and the
   * kinds whose names and addresses are unique across accounts. Everything else is scoped.
   */
  acrossAccounts: CrossAccountReader;
  clock: Clock;
  auth: KeyAuthenticator;
  ipGuard: ApiIpGuard;
  accounts: AccountService;
  resources: Resources;
  /** Every kind of background job the runner serves. */
  jobs: readonly JobDefinition[];
  /** Per-account request limits; undefined when EDGEPLANE_RATE_LIMIT is 0. */
  rateLimiter?: RequestLimiter;
  /** Commands to the agent sessions this process holds (the API's restart, stop and update). */
  sessionCommands: SessionCommands;
}

export function createDeps(
  base: { config: Config; logger: Logger; store: Store; masterKey: Buffer },
  overrides: Partial<Pick<Deps, 'clock' | 'sessionCommands'>> & { certificates?: AutomationTuning; credentialDeleted?: (credentialId: string) => void } = {},
): Deps {
  const clock = overrides.clock ?? systemClock;
  const now = () => clock.now().getTime();
  const acrossAccounts: CrossAccountReader = base.store;
  const auth = new KeyAuthenticator(acrossAccounts, now);
  const ipGuard = new ApiIpGuard(base.store, now);
  const sealer = new Sealer(base.masterKey);
  return {
    config: base.config,
    logger: base.logger,
    store: base.store,
    acrossAccounts,
    sealer,
    clock,
    auth,
    ipGuard,
    accounts: new AccountService(base.store, clock),
    resources: buildResources({
      store: base.store,
      acrossAccounts,
      auth,
      ipGuard,
      sealer,
      domains: base.config.domains,
      credentialDeleted: overrides.credentialDeleted,
    }),
    rateLimiter: createRequestLimiter(base.config.rateLimit, base.logger),
    jobs: certificateJobs({ config: base.config, store: base.store, sealer, clock }, overrides.certificates),
    // Without the data plane's, every session is another instance's: commands are queued for it.
    sessionCommands: overrides.sessionCommands ?? noSessionsHere,
  };
}
