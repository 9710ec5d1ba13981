// The certificate public ingress presents for a server name: a reserved domain's own certificate
// (uploaded or issued by certificate automation), the local CA's wildcard for names under a service
// domain, or else the default certificate. Secure contexts are cached per name for a short while,
// so a renewed certificate is served within a minute without a query per handshake.
import tls from 'node:tls';
import type { Logger } from 'pino';
import type { DomainSettings } from '../config.js';
import { agentIngressCertificates, reservedDomainCertificates } from '../db/served-certificates.js';
import type { Store } from '../db/store.js';
import type { Sealer } from '../lib/crypto/sealer.js';
import { isUnder } from '../lib/dns/names.js';
import { ensureServiceDomainTls } from '../tls.js';

export interface IngressCertificates {
  /** For a connection that names no server, and names no certificate is found for. */
  readonly defaultCertificate: { cert: string; key: string };
  readonly defaultContext: tls.SecureContext;
  /** For a server name (lower case, no trailing dot); never rejects: the default when nothing better is found. */
  contextFor(serverName: string): Promise<tls.SecureContext>;
}

export interface IngressCertificatesOptions {
  store: Store;
  sealer: Sealer;
  domains: Pick<DomainSettings, 'serviceDomains'>;
  /** Where the local CA lives (`<dataDir>/tls`); the service domains' wildcards are issued from it. */
  dataDir: string;
  defaultCertificate: { cert: string; key: string };
  log: Logger;
  /**
   * Whose certificates: `endpoints` (public ingress: service domains, reserved domains) or
   * `agents` (the agent listener: the agent ingress a name is under, e.g. `tunnel.us.<its domain>`).
   */
  serves?: 'endpoints' | 'agents';
  /** How long a name's context is kept (default 60 s). */
  ttlMs?: number;
  /** Names kept at most (default 10 000); the oldest go first. */
  maxEntries?: number;
  now?: () => number;
}

interface Cached {
  context: tls.SecureContext;
  expiresAt: number;
}

export function createIngressCertificates(options: IngressCertificatesOptions): IngressCertificates {
  const { store, sealer, domains, dataDir, log } = options;
  const ttlMs = options.ttlMs ?? 60_000;
  const maxEntries = options.maxEntries ?? 10_000;
  const now = options.now ?? Date.now;
  const defaultContext = tls.createSecureContext(options.defaultCertificate);
  const cache = new Map<string, Cached>();
  const pending = new Map<string, Promise<tls.SecureContext>>();

  function remember(key: string, context: tls.SecureContext): tls.SecureContext {
    cache.delete(key);
    cache.set(key, { context, expiresAt: now() + ttlMs });
    while (cache.size > maxEntries) cache.delete(cache.keys().next().value!);
    return context;
  }

  /** One lookup at a time per key; a fresh cached answer without any. */
  function cached(key: string, load: () => Promise<{ context: tls.SecureContext; keep: boolean }>): Promise<tls.SecureContext> {
    const hit = cache.get(key);
    if (hit && hit.expiresAt > now()) return Promise.resolve(hit.context);
    let loading = pending.get(key);
    if (!loading) {
      loading = load()
        .then(({ context, keep }) => (keep ? remember(key, context) : context))
        .finally(() => pending.delete(key));
      pending.set(key, loading);
    }
    return loading;
  }

  async function serviceDomainContext(base: string): Promise<{ context: tls.SecureContext; keep: boolean }> {
    try {
      const { cert, key } = await ensureServiceDomainTls(dataDir, base);
      return { context: tls.createSecureContext({ cert, key }), keep: true };
    } catch (err) {
      log.error({ err, domain: base }, 'ingress: the local CA could not issue the service domain certificate; serving the default');
      return { context: defaultContext, keep: false };
    }
  }

  async function storedContext(name: string): Promise<{ context: tls.SecureContext; keep: boolean }> {
    let rows;
    try {
      if (options.serves === 'agents') {
        // The agent ingress whose domain the name is, or is under (the nearest first).
        const labels = name.split('.');
        const candidates = labels.slice(0, -1).map((_, i) => labels.slice(i).join('.'));
        rows = (await agentIngressCertificates(store, candidates)).sort((a, b) => b.domain.length - a.domain.length);
      } else {
        const dot = name.indexOf('.');
        const candidates = dot > 0 && name.indexOf('.', dot + 1) > 0 ? [name, `*.${name.slice(dot + 1)}`] : [name];
        rows = await reservedDomainCertificates(store, candidates);
      }
    } catch (err) {
      // Not kept: the next handshake asks again once the store is back.
      log.warn({ err, server_name: name }, 'ingress: certificates could not be read from the store; serving the default');
      return { context: defaultContext, keep: false };
    }
    const row = rows.find((r) => r.domain === name) ?? rows[0];
    if (!row) return { context: defaultContext, keep: true };
    try {
      const key = sealer.open(row.privateKeySealed, row.certificateId);
      return { context: tls.createSecureContext({ cert: row.certificatePem, key }), keep: true };
    } catch (err) {
      // The message only: the error of a key that does not parse may quote it.
      log.error({ certificate_id: row.certificateId, err: (err as Error).message }, 'a stored certificate could not be used; serving the default');
      return { context: defaultContext, keep: true };
    }
  }

  return {
    defaultCertificate: options.defaultCertificate,
    defaultContext,
    contextFor(serverName) {
      if (options.serves === 'agents') return cached(`name:${serverName}`, () => storedContext(serverName));
      const base = domains.serviceDomains.find((d) => isUnder(serverName, d));
      if (base !== undefined) return cached(`service:${base}`, () => serviceDomainContext(base));
      return cached(`name:${serverName}`, () => storedContext(serverName));
    },
  };
}
