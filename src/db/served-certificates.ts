// What the TLS listeners read of the certificates they serve, across accounts: the certificate of
// the reserved domain a server name falls under (public ingress), or of the agent ingress whose
// domain it is under (the agent listener). Domains are unique across accounts, so a name has at
// most one exact reserved domain and one wildcard over it, and one agent ingress over it. The
// listeners hand their store as the CrossAccountReader.
import { readAcrossAccounts, type CrossAccountReader } from './cross-account.js';

export interface ServedCertificateRow {
  /** The reserved domain that matched: the name itself or `*.<parent>`. */
  domain: string;
  certificateId: string;
  certificatePem: string;
  /** Sealed with the master key, bound to `certificateId`. */
  privateKeySealed: string;
}

/** The certificates of the rows of `table` whose domain is among `domains` and that have one, in no order. */
async function certificatesOf(
  across: CrossAccountReader,
  table: 'reserved_domains' | 'agent_ingresses',
  domains: readonly string[],
): Promise<ServedCertificateRow[]> {
  if (domains.length === 0) return [];
  const rows = await readAcrossAccounts(across, (reader) =>
    reader
      .selectFrom(table)
      .innerJoin('tls_certificates', (join) =>
        join.onRef('tls_certificates.id', '=', `${table}.certificate_id`).onRef('tls_certificates.account_id', '=', `${table}.account_id`),
      )
      .select([`${table}.domain`, 'tls_certificates.id', 'tls_certificates.certificate_pem', 'tls_certificates.private_key_sealed'])
      .where(`${table}.domain`, 'in', [...domains])
      .execute(),
  );
  return rows.map((row) => ({ domain: row.domain, certificateId: row.id, certificatePem: row.certificate_pem, privateKeySealed: row.private_key_sealed }));
}

/** The certificates of the reserved domains among `domains` that have one, in no order. */
export function reservedDomainCertificates(across: CrossAccountReader, domains: readonly string[]): Promise<ServedCertificateRow[]> {
  return certificatesOf(across, 'reserved_domains', domains);
}

/** The certificates of the agent ingresses whose domain is among `domains` (a name and its parents) and that have one. */
export function agentIngressCertificates(across: CrossAccountReader, domains: readonly string[]): Promise<ServedCertificateRow[]> {
  return certificatesOf(across, 'agent_ingresses', domains);
}
