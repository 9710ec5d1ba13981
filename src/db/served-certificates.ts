// What the TLS listeners read of the certificates they serve, across accounts: the certificate of
// the reserved domain a server name falls under (public ingress), or of the agent ingress whose
// domain it is under (the agent listener). Domains are unique across accounts, so a name has at
// most one exact reserved domain and one wildcard over it, and one agent ingress over it.
import type { Store } from './store.js';
import { read } from './store.js';

export interface ServedCertificateRow {
  /** The reserved domain that matched: the name itself or `*.<parent>`. */
  domain: string;
  certificateId: string;
  certificatePem: string;
  /** Sealed with the master key, bound to `certificateId`. */
  privateKeySealed: string;
}

/** The certificates of the reserved domains among `domains` that have one, in no order. */
export async function reservedDomainCertificates(store: Store, domains: readonly string[]): Promise<ServedCertificateRow[]> {
  if (domains.length === 0) return [];
  const rows = await read(() =>
    store.reader
      .selectFrom('reserved_domains')
      .innerJoin('tls_certificates', (join) =>
        join.onRef('tls_certificates.id', '=', 'reserved_domains.certificate_id').onRef('tls_certificates.account_id', '=', 'reserved_domains.account_id'),
      )
      .select(['reserved_domains.domain', 'tls_certificates.id', 'tls_certificates.certificate_pem', 'tls_certificates.private_key_sealed'])
      .where('reserved_domains.domain', 'in', [...domains])
      .execute(),
  );
  return rows.map((row) => ({ domain: row.domain, certificateId: row.id, certificatePem: row.certificate_pem, privateKeySealed: row.private_key_sealed }));
}

/** The certificates of the agent ingresses whose domain is among `domains` (a name and its parents) and that have one. */
export async function agentIngressCertificates(store: Store, domains: readonly string[]): Promise<ServedCertificateRow[]> {
  if (domains.length === 0) return [];
  const rows = await read(() =>
    store.reader
      .selectFrom('agent_ingresses')
      .innerJoin('tls_certificates', (join) =>
        join.onRef('tls_certificates.id', '=', 'agent_ingresses.certificate_id').onRef('tls_certificates.account_id', '=', 'agent_ingresses.account_id'),
      )
      .select(['agent_ingresses.domain', 'tls_certificates.id', 'tls_certificates.certificate_pem', 'tls_certificates.private_key_sealed'])
      .where('agent_ingresses.domain', 'in', [...domains])
      .execute(),
  );
  return rows.map((row) => ({ domain: row.domain, certificateId: row.id, certificatePem: row.certificate_pem, privateKeySealed: row.private_key_sealed }));
}
