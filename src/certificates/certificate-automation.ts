// Certificate automation assembled from the settings: the certificate job (for the job runner),
// and the two listeners that answer the CA's challenges, each on when its address is set.
import { hostPort } from '../lib/net-address.js';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Clock } from '../core/time.js';
import type { Store } from '../db/store.js';
import type { Sealer } from '../lib/crypto/sealer.js';
import { createResolver } from '../lib/dns/resolver.js';
import type { JobDefinition } from '../jobs/runner.js';
import { AcmeOrders, type Polling } from './acme-orders.js';
import { certificateJob } from './certificate-job.js';
import { startAuthoritativeDns } from './dns-responder.js';
import { startHttp01Responder, type RunningResponder } from './http01-responder.js';

export interface AutomationTuning {
  /** How often the CA is asked whether a challenge or order is done. */
  polling?: Partial<Polling>;
  /** Milliseconds: the first retry's upper bound (full jitter, doubling). */
  retryBaseMs?: number;
}

/** The certificate job, wired to the configured CA and resolver. */
export function certificateJobs(base: { config: Config; store: Store; sealer: Sealer; clock: Clock }, tuning: AutomationTuning = {}): JobDefinition[] {
  const { config, store, sealer, clock } = base;
  const orders = new AcmeOrders({ store, sealer, settings: config.certificates, polling: tuning.polling, clock });
  const resolver = config.certificates.dnsResolver;
  const dns = createResolver({ server: resolver && hostPort(resolver.host, resolver.port) });
  return [
    certificateJob({
      store,
      sealer,
      orders,
      dns,
      domains: config.domains,
      clock,
      ...(tuning.retryBaseMs !== undefined && { backoff: { baseMs: tuning.retryBaseMs } }),
    }),
  ];
}

/** Starts the challenge listeners that are configured; says where each listens. */
export async function startChallengeListeners(base: { config: Config; store: Store; log: Logger }, say: (line: string) => void): Promise<RunningResponder[]> {
  const { config, store, log } = base;
  const started: RunningResponder[] = [];
  try {
    const { http01Listen, dnsListen } = config.certificates;
    if (http01Listen) {
      const responder = await startHttp01Responder({ store, ...http01Listen, log: log.child({ component: 'http01' }) });
      started.push(responder);
      say(`HTTP-01 challenge responder listening on ${hostPort(responder.host, responder.port)}`);
    }
    if (dnsListen) {
      const server = await startAuthoritativeDns({ store, ...dnsListen, domains: config.domains, log: log.child({ component: 'dns' }) });
      started.push(server);
      say(`authoritative DNS server listening on ${hostPort(server.host, server.port)} (UDP and TCP)`);
    }
  } catch (error) {
    await Promise.all(started.map((s) => s.close()));
    throw error;
  }
  return started;
}
