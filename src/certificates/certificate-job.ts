// The certificate job of a reserved domain or an agent ingress: one per managed resource, enqueued
// when its policy is set (src/certificates/certificate-management.ts), and
// rescheduled by itself at `renews_at` after each certificate, so it is also the renewal schedule.
//
// A run checks DNS, orders the certificate (acme-orders.ts), and stores it with the resource in
// the transaction that ends the run, only while the run still holds its claim: a run whose job
// was cancelled (policy detached, resource deleted) or replaced (a new key type) stores nothing,
// and a run killed before it stored anything is retried after its lease. A failure is recorded on
// the resource (DNS_ERROR or INTERNAL_ERROR, the message, when it is retried) with the retry.
import type { DomainSettings } from '../config.js';
import { newId } from '../core/ids.js';
import { rfc3339, systemClock, type Clock } from '../core/time.js';
import { scopedRead, scopedTx, type ScopedDb } from '../db/scoped.js';
import type { AgentIngressesTable, ReservedDomainsTable } from '../db/schema.js';
import type { Store } from '../db/store.js';
import type { Sealer } from '../lib/crypto/sealer.js';
import { defineJob, type Backoff, type Job, type JobDefinition, type JobResult, type JobWrite } from '../jobs/runner.js';
import { readCertificateUpload } from './pem.js';
import type { AcmeOrders } from './acme-orders.js';
import { CERTIFICATE_JOB, dropIssued, isManaged, RENEWAL_MESSAGE } from './certificate-management.js';
import { checkDnsExpectations, CertificateProblem, problemCode, type DnsChecker } from './certificate-problems.js';
import { agentIngressSubject, reservedDomainSubject, subjectTable, type CertificateSubject, type SubjectTable } from './certificate-subjects.js';

type SubjectRow = ReservedDomainsTable | AgentIngressesTable;

export interface CertificateJobOptions {
  store: Store;
  sealer: Sealer;
  orders: Pick<AcmeOrders, 'issue'>;
  dns: DnsChecker;
  domains: DomainSettings;
  clock?: Clock;
  backoff?: Partial<Backoff>;
}

/** A certificate is renewed when this share of its lifetime has passed. */
const RENEW_AFTER = 2 / 3;

/** The instant two thirds into the certificate's lifetime, to the second (as `renews_at` shows it). */
export function renewalTime(notBefore: string, notAfter: string): Date {
  const from = Date.parse(notBefore);
  return new Date(Math.floor((from + (Date.parse(notAfter) - from) * RENEW_AFTER) / 1000) * 1000);
}

export function certificateJob(options: CertificateJobOptions): JobDefinition {
  const { store, sealer, orders, dns, domains } = options;
  const clock = options.clock ?? systemClock;

  const subjectOf = (table: SubjectTable, row: SubjectRow): CertificateSubject =>
    table === 'reserved_domains' ? reservedDomainSubject(row as ReservedDomainsTable) : agentIngressSubject(row as AgentIngressesTable, domains);

  /** The resource, read (and locked, in a transaction) in its account. */
  const load = async (db: ScopedDb, table: SubjectTable, id: string, lock?: 'update') => (await db.find(table, id, lock)) as SubjectRow | undefined;

  return defineJob({
    kind: CERTIFICATE_JOB,
    backoff: { baseMs: 30_000, ...options.backoff },

    async run(job: Job): Promise<JobResult | void> {
      const table = subjectTable(job.subject_id);
      if (!table) return;
      const scope = { accountId: job.account_id };
      const row = await scopedRead(store, scope, (db) => load(db, table, job.subject_id));
      // Deleted, or its policy detached, since the job was enqueued: nothing to do.
      if (!row || !isManaged(row)) return;
      const now = clock.now();
      if (row.cert_job_started_at === null) {
        // A renewal: due, or a run again after one that stored its certificate and then died.
        if (row.cert_renews_at !== null && Date.parse(row.cert_renews_at) > now.getTime()) return { rerunAt: new Date(row.cert_renews_at) };
        await scopedTx(store, scope, (db) => markRenewing(db, table, row.id, now));
      }
      const subject = subjectOf(table, row);
      const problem = await checkDnsExpectations(dns, subject);
      if (problem) throw new CertificateProblem('DNS_ERROR', problem);
      const keyType = row.cert_key_type === 'ecdsa' ? 'ecdsa' : 'rsa';
      const issued = await orders.issue({ subjectId: row.id, keyType, ...subject });
      const read = readCertificateUpload(issued.certificatePem, issued.keyPem, clock.now());
      const renewsAt = renewalTime(read.details.not_before, read.details.not_after);
      const certificateId = newId('cert');
      const sealedKey = sealer.seal(read.keyPem, certificateId);

      return {
        rerunAt: renewsAt,
        async write(db) {
          const current = await load(db, table, row.id, 'update');
          // Detached, deleted or given another key type while the order ran: not this certificate.
          if (!current || !isManaged(current) || current.cert_key_type !== row.cert_key_type) return;
          const issuedAt = rfc3339(clock.now());
          await db.insert('tls_certificates', {
            id: certificateId,
            description: '',
            metadata: '',
            created_at: issuedAt,
            certificate_pem: read.certificatePem,
            private_key_sealed: sealedKey,
            private_key_type: read.keyType,
            dns_names: JSON.stringify(read.dnsNames),
            details: JSON.stringify(read.details),
            not_after: read.details.not_after,
            issued_at: issuedAt,
          });
          await db.update(
            table,
            { id: row.id },
            {
              certificate_id: certificateId,
              cert_renews_at: rfc3339(renewsAt),
              cert_job_started_at: null,
              cert_job_msg: null,
              cert_job_error_code: null,
              cert_job_retries_at: null,
            },
          );
          if (current.certificate_id !== null) await dropIssued(db, current.certificate_id);
        },
      };
    },

    recordFailure(error: unknown, job: Job, retryAt: Date): JobWrite | undefined {
      const table = subjectTable(job.subject_id);
      if (!table) return undefined;
      const message = error instanceof Error ? error.message : String(error);
      return async (db) => {
        const current = await load(db, table, job.subject_id, 'update');
        if (!current || !isManaged(current)) return;
        await db.update(
          table,
          { id: current.id },
          {
            cert_job_started_at: current.cert_job_started_at ?? rfc3339(clock.now()),
            cert_job_error_code: problemCode(error),
            cert_job_msg: message,
            cert_job_retries_at: rfc3339(retryAt),
          },
        );
      };
    },
  });
}

/** Shows the renewal as a provisioning job, unless a run did already. */
async function markRenewing(db: ScopedDb, table: SubjectTable, id: string, now: Date): Promise<void> {
  await db.update(table, { id, cert_job_started_at: null }, { cert_job_started_at: rfc3339(now), cert_job_msg: RENEWAL_MESSAGE });
}
