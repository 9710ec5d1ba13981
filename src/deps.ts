// Explicit wiring: what the app and the jobs are made of. Tests swap parts through overrides.
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { systemClock, type Clock } from './core/time.js';
import type { Store } from './db/store.js';
import { Authenticator } from './http/auth.js';
import { AccountService } from './modules/accounts/account.service.js';
import { buildResources, type Resources } from './modules/registry.js';

export interface Deps {
  config: Config;
  logger: Logger;
  store: Store;
  clock: Clock;
  auth: Authenticator;
  accounts: AccountService;
  resources: Resources;
}

export function createDeps(base: { config: Config; logger: Logger; store: Store }, overrides: Partial<Pick<Deps, 'clock'>> = {}): Deps {
  const clock = overrides.clock ?? systemClock;
  const auth = new Authenticator(base.store, () => clock.now().getTime());
  return {
    ...base,
    clock,
    auth,
    accounts: new AccountService(base.store, clock),
    resources: buildResources(base.store, auth),
  };
}
