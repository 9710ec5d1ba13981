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
  /**
   * For a server name (lower case, no trailing dot); never rejects: the default when nothing
   * better is found. With `variant`, the same certificate with an edge's own settings: a lowest
   * TLS version, and the CAs client certificates are checked against.
   */
  contextFor(serverName: string, variant?: TlsVariant): Promise<tls.SecureContext>;
}

/** An edge's own TLS settings for the certificate of a name. */
export interface TlsVariant {
  minVersion?: tls.SecureVersion;
  /** CA certificates (PEM) that client certificates must chain to. */
  ca?: readonly string[];
}

const variantKey = (variant: TlsVariant | undefined) => (variant ? `${variant.minVersion ?? ''}\n${(variant.ca ?? []).join('\n')}` : '');

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

/** A certificate and key, and the contexts made of them so far (by variant; '' is the plain one). */
interface Material {
  cert: string;
  key: string;
  contexts: Map<string, tls.SecureContext>;
}

interface Cached {
  material: Material;
  expiresAt: number;
}

/** A context of the material with the variant's settings, made once. */
function contextOf(material: Material, variant: TlsVariant | undefined): tls.SecureContext {
  const key = variantKey(variant);
  let context = material.contexts.get(key);
  if (!context) {
    context = tls.createSecureContext({
      cert: material.cert,
      key: material.key,
      ...(variant?.minVersion && { minVersion: variant.minVersion }),
      ...(variant?.ca && { ca: [...variant.ca] }),
    });
    // Bounded: a name's variants are its edge's settings, which change rarely; the oldest go past 8.
    if (material.contexts.size >= 8) material.contexts.delete(material.contexts.keys().next().value!);
    material.contexts.set(key, context);
  }
  return context;
}

export function createIngressCertificates(options: IngressCertificatesOptions): IngressCertificates {
  const { store, sealer, domains, dataDir, log } = options;
  const ttlMs = options.ttlMs ?? 60_000;
  const maxEntries = options.maxEntries ?? 10_000;
  const now = options.now ?? Date.now;
  const defaultMaterial: Material = { ...options.defaultCertificate, contexts: new Map() };
  const defaultContext = contextOf(defaultMaterial, undefined);
  const cache = new Map<string, Cached>();
  const pending = new Map<string, Promise<Material>>();

  function remember(key: string, material: Material): Material {
    cache.delete(key);
    cache.set(key, { material, expiresAt: now() + ttlMs });
    while (cache.size > maxEntries) cache.delete(cache.keys().next().value!);
    return material;
  }

  /** One lookup at a time per key; a fresh cached answer without any. */
  function cached(key: string, load: () => Promise<{ material: Material; keep: boolean }>): Promise<Material> {
    const hit = cache.get(key);
    if (hit && hit.expiresAt > now()) return Promise.resolve(hit.material);
    let loading = pending.get(key);
    if (!loading) {
      loading = load()
        .then(({ material, keep }) => (keep ? remember(key, material) : material))
        .finally(() => pending.delete(key));
      pending.set(key, loading);
    }
    return loading;
  }

  const material = (cert: string, key: string): Material => {
    const made: Material = { cert, key, contexts: new Map() };
    // Made at once, so that a certificate and key that do not go together fail here, not in a handshake.
    contextOf(made, undefined);
    return made;
  };

  async function serviceDomainContext(base: string): Promise<{ material: Material; keep: boolean }> {
    try {
      const { cert, key } = await ensureServiceDomainTls(dataDir, base);
      return { material: material(cert, key), keep: true };
    } catch (err) {
      log.error({ err, domain: base }, 'ingress: the local CA could not issue the service domain certificate; serving the default');
      return { material: defaultMaterial, keep: false };
    }
  }

  async function storedContext(name: string): Promise<{ material: Material; keep: boolean }> {
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
      return { material: defaultMaterial, keep: false };
    }
    const row = rows.find((r) => r.domain === name) ?? rows[0];
    if (!row) return { material: defaultMaterial, keep: true };
    try {
      const key = sealer.open(row.privateKeySealed, row.certificateId);
      return { material: material(row.certificatePem, key), keep: true };
    } catch (err) {
      // The message only: the error of a key that does not parse may quote it.
      log.error({ certificate_id: row.certificateId, err: (err as Error).message }, 'a stored certificate could not be used; serving the default');
      return { material: defaultMaterial, keep: true };
    }
  }

  return {
    defaultCertificate: options.defaultCertificate,
    defaultContext,
    async contextFor(serverName, variant) {
      let found: Material;
      if (options.serves === 'agents') found = await cached(`name:${serverName}`, () => storedContext(serverName));
      else {
        const base = domains.serviceDomains.find((d) => isUnder(serverName, d));
        found = await (base !== undefined
          ? cached(`service:${base}`, () => serviceDomainContext(base))
          : cached(`name:${serverName}`, () => storedContext(serverName)));
      }
      return contextOf(found, variant);
    },
  };
}
