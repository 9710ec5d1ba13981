// The hostports of TLS (and, later, HTTPS) edges: reserved domains of the account as
// `<domain>:443`, each served by one edge at most. The domain rows are locked while an edge claims
// them, and a unique index on `edge_domains.reserved_domain_id` holds the rule whatever happens.
import type { ScopedDb } from '../../db/scoped.js';
import type { HostportKind } from './hostport-edge.js';
import { hostportErrors } from './hostport.errors.js';

export const MAX_DOMAIN_HOSTPORTS = 10;

/** `<domain>:443` values of a request, checked for form before any query; the domain names as stored. */
export function readDomainHostports(values: readonly string[]): string[] {
  if (values.length > MAX_DOMAIN_HOSTPORTS) throw hostportErrors.tooManyHostports({ count: values.length, max: MAX_DOMAIN_HOSTPORTS });
  const seen = new Set<string>();
  return values.map((value) => {
    const m = /^((?:\*\.)?[A-Za-z0-9.-]+):(\d+)$/.exec(value);
    if (!m || m[1]!.startsWith('.') || m[1]!.endsWith('.')) throw hostportErrors.invalidHostport({ value });
    if (m[2]!.length > 5 || Number(m[2]) < 1 || Number(m[2]) > 65535) throw hostportErrors.hostportPort({ value });
    if (Number(m[2]) !== 443) throw hostportErrors.hostportPort443({ value });
    const domain = m[1]!.toLowerCase();
    if (seen.has(domain)) throw hostportErrors.duplicateHostport({ value });
    seen.add(domain);
    return domain;
  });
}

/** Makes `domains` (from readDomainHostports) the ones the edge serves, in order. */
export async function claimDomainHostports(db: ScopedDb, edgeId: string, domains: readonly string[]): Promise<void> {
  const rows = await db.select('reserved_domains', { domain: domains }, { lock: 'update' });
  const byName = new Map(rows.map((r) => [r.domain, r]));
  for (const domain of domains) if (!byName.has(domain)) throw hostportErrors.hostportNotDomain({ value: `${domain}:443` });
  const ids = domains.map((d) => byName.get(d)!.id);
  const served = (await db.select('edge_domains', { reserved_domain_id: ids })).find((s) => s.edge_id !== edgeId);
  if (served) throw hostportErrors.hostportInUse({ value: `${rows.find((r) => r.id === served.reserved_domain_id)!.domain}:443`, edge: served.edge_id });
  await releaseDomainHostports(db, edgeId);
  await db.insert(
    'edge_domains',
    ids.map((reserved_domain_id, position) => ({ edge_id: edgeId, reserved_domain_id, position })),
  );
}

export async function releaseDomainHostports(db: ScopedDb, edgeId: string): Promise<void> {
  await db.delete('edge_domains', { edge_id: edgeId });
}

/** The hostports of a page of edges, `<domain>:443` in order: two queries. */
export async function domainHostportsOf(db: ScopedDb, edgeIds: readonly string[]): Promise<Map<string, string[]>> {
  const links = await db.select('edge_domains', { edge_id: edgeIds }, { orderBy: ['edge_id', 'position'] });
  const domains = await db.select('reserved_domains', { id: links.map((l) => l.reserved_domain_id) });
  const nameOf = new Map(domains.map((d) => [d.id, d.domain]));
  const out = new Map<string, string[]>();
  for (const l of links) out.set(l.edge_id, [...(out.get(l.edge_id) ?? []), `${nameOf.get(l.reserved_domain_id)}:443`]);
  return out;
}

export const domainHostports: HostportKind = {
  read: readDomainHostports,
  claim: claimDomainHostports,
  release: releaseDomainHostports,
  of: domainHostportsOf,
  uniqueIndex: 'edge_domains_reserved_domain_id_key',
  served: { in: 'rows', table: 'edge_domains', column: 'reserved_domain_id', referrer: 'edge_id', kinds: ['reserved_domain'] },
  requestDescription: `reserved domains of the account as <domain>:443; at most ${MAX_DOMAIN_HOSTPORTS}`,
  responseDescription: 'the reserved domains served, as <domain>:443; null when none',
};
