// What a certificate is issued for, per kind of resource that takes a certificate management
// policy: the names it covers, how the CA's challenge is answered, and what DNS must show first.
//
// - A reserved domain is CNAMEd to its `cname_target`, which the operator points at its edge: the
//   CA's HTTP-01 request reaches the edge, which hands `/.well-known/acme-challenge/` to edgeplane's
//   responder. A wildcard cannot be proven by HTTP-01; its `_acme-challenge` name is CNAMEd to its
//   `acme_challenge_cname_target` in the ACME challenge zone, which edgeplane's DNS server answers.
// - An agent ingress's domain is delegated (NS) to edgeplane's nameservers, which answer the
//   DNS-01 challenge of each regional name (`tunnel.<region>.<domain>`) under it.
import type { DomainSettings } from '../config.js';
import type { AgentIngressesTable, ReservedDomainsTable } from '../db/schema.js';
import type { ChallengeType } from '../db/acme.js';

export type SubjectTable = 'reserved_domains' | 'agent_ingresses';

/** A DNS record the subject's owner must have set, checked before an order is placed. */
export type DnsExpectation = { type: 'CNAME'; name: string; want: string } | { type: 'NS'; name: string; want: string[] };

export interface CertificateSubject {
  table: SubjectTable;
  /** The names the certificate covers. */
  identifiers: string[];
  challenge: ChallengeType;
  /** For DNS-01: the name whose TXT record edgeplane's DNS server serves for `identifier`. */
  challengeName(identifier: string): string;
  expectations: DnsExpectation[];
}

/** The table of a subject id, by its prefix; undefined for an id of another kind. */
export function subjectTable(id: string): SubjectTable | undefined {
  if (id.startsWith('rd_')) return 'reserved_domains';
  if (id.startsWith('agin_')) return 'agent_ingresses';
  return undefined;
}

export function reservedDomainSubject(row: ReservedDomainsTable): CertificateSubject {
  const wildcard = row.domain.startsWith('*.');
  // Every domain that may carry a policy has a CNAME target (only service-owned ones have none).
  const cname: DnsExpectation = { type: 'CNAME', name: row.domain, want: row.cname_target ?? '' };
  if (!wildcard) return { table: 'reserved_domains', identifiers: [row.domain], challenge: 'http-01', challengeName: () => '', expectations: [cname] };
  const acmeTarget = row.acme_challenge_cname_target ?? '';
  return {
    table: 'reserved_domains',
    identifiers: [row.domain],
    challenge: 'dns-01',
    challengeName: () => acmeTarget,
    expectations: [cname, { type: 'CNAME', name: `_acme-challenge.${row.domain.slice(2)}`, want: acmeTarget }],
  };
}

export function agentIngressSubject(row: AgentIngressesTable, settings: DomainSettings): CertificateSubject {
  return {
    table: 'agent_ingresses',
    identifiers: regionDomains(row.domain, settings),
    challenge: 'dns-01',
    challengeName: (identifier) => `_acme-challenge.${identifier}`,
    expectations: [{ type: 'NS', name: row.domain, want: settings.nameservers.map((n) => n.replace(/\.$/, '')) }],
  };
}

/** The regional names agents connect to under an agent ingress domain. */
export function regionDomains(domain: string, settings: Pick<DomainSettings, 'regions'>): string[] {
  return settings.regions.map((region) => `tunnel.${region}.${domain}`);
}
