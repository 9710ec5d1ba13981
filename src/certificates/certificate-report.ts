// What `edgeplane certificates status` shows an operator: each managed certificate's state and
// the days left before it expires, across accounts (or of one): the caller (the CLI, the metrics)
// hands the store as the CrossAccountReader.
import { readAcrossAccounts, type CrossAccountReader } from '../db/cross-account.js';

/** issued: valid, nothing under way; provisioning: the first certificate is being made; renewing: a new one replaces it; failing: the job reports an error. */
export type CertificateState = 'issued' | 'provisioning' | 'renewing' | 'failing';

export interface ManagedCertificateStatus {
  account_id: string;
  /** The reserved domain or agent ingress. */
  id: string;
  domain: string;
  state: CertificateState;
  certificate_id: string | null;
  not_after: string | null;
  /** Whole days until `not_after` (negative once expired); null without a certificate. */
  days_to_expiry: number | null;
  renews_at: string | null;
  error_code: string | null;
  msg: string | null;
  retries_at: string | null;
}

const DAY_MS = 86_400_000;

/** A resource under automatic certificate management, with its certificate's expiry. */
interface ManagedCertificateRow {
  account_id: string;
  id: string;
  domain: string;
  certificate_id: string | null;
  not_after: string | null;
  cert_renews_at: string | null;
  cert_job_started_at: string | null;
  cert_job_error_code: string | null;
  cert_job_msg: string | null;
  cert_job_retries_at: string | null;
}

/** Every managed reserved domain and agent ingress (of one account, when given), by domain. */
async function managedCertificateRows(across: CrossAccountReader, accountId?: string): Promise<ManagedCertificateRow[]> {
  const rows: ManagedCertificateRow[] = [];
  for (const table of ['reserved_domains', 'agent_ingresses'] as const) {
    const found = await readAcrossAccounts(across, (reader) => {
      let query = reader
        .selectFrom(table)
        .leftJoin('tls_certificates', 'tls_certificates.id', `${table}.certificate_id`)
        .select([
          `${table}.account_id`,
          `${table}.id`,
          `${table}.domain`,
          `${table}.certificate_id`,
          'tls_certificates.not_after',
          `${table}.cert_renews_at`,
          `${table}.cert_job_started_at`,
          `${table}.cert_job_error_code`,
          `${table}.cert_job_msg`,
          `${table}.cert_job_retries_at`,
        ])
        .where(`${table}.cert_authority`, 'is not', null);
      if (accountId !== undefined) query = query.where(`${table}.account_id`, '=', accountId);
      return query.execute();
    });
    rows.push(...(found as ManagedCertificateRow[]));
  }
  return rows.sort((a, b) => (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0));
}

function stateOf(row: ManagedCertificateRow): CertificateState {
  if (row.cert_job_error_code !== null) return 'failing';
  if (row.cert_job_started_at !== null) return row.certificate_id === null ? 'provisioning' : 'renewing';
  return row.certificate_id === null ? 'provisioning' : 'issued';
}

export async function managedCertificates(across: CrossAccountReader, now: Date, accountId?: string): Promise<ManagedCertificateStatus[]> {
  const rows = await managedCertificateRows(across, accountId);
  return rows.map((row) => ({
    account_id: row.account_id,
    id: row.id,
    domain: row.domain,
    state: stateOf(row),
    certificate_id: row.certificate_id,
    not_after: row.not_after,
    days_to_expiry: row.not_after === null ? null : Math.floor((Date.parse(row.not_after) - now.getTime()) / DAY_MS),
    renews_at: row.cert_renews_at,
    error_code: row.cert_job_error_code,
    msg: row.cert_job_msg,
    retries_at: row.cert_job_retries_at,
  }));
}

/** One line per certificate, tab-separated, for a terminal or `cut`. */
export function statusLine(status: ManagedCertificateStatus): string {
  const expiry = status.not_after === null ? 'no certificate yet' : `expires ${status.not_after} (${status.days_to_expiry} days)`;
  const next =
    status.state === 'failing'
      ? `${status.error_code}: ${status.msg} (retries ${status.retries_at})`
      : status.renews_at === null
        ? ''
        : `renews ${status.renews_at}`;
  return [status.account_id, status.id, status.domain, status.state, expiry, next].join('\t').trimEnd();
}
