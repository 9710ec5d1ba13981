// Certificate management of reserved domains and agent ingresses, defined once: the policy a
// request sets, the status a response shows, and the columns a change writes. Setting a policy
// records a provisioning job in the same transaction as the change (the job columns); the
// background work that issues and renews certificates picks the jobs up from there (the
// certificate job, certificate-job.ts). Every documented key of the status is always present,
// null when unset: clients crash on missing keys.
import { Type } from '@sinclair/typebox';
import type { RequestContext } from '../core/context.js';
import { Nullable } from '../core/schema.js';
import { rfc3339 } from '../core/time.js';
import type { ScopedDb } from '../db/scoped.js';
import type { CertificateManagementColumns } from '../db/schema.js';
import { cancelJobs, enqueueJob } from '../jobs/queue.js';
import { certificateManagementErrors } from './certificate-management.errors.js';

export const AUTHORITIES = ['letsencrypt'] as const;
export const MANAGED_KEY_TYPES = ['rsa', 'ecdsa'] as const;
export const PROVISIONING_MESSAGE = 'Managed certificate provisioning in progress.';
export const RENEWAL_MESSAGE = 'Managed certificate renewal in progress.';
/** The job kind that provisions and renews the certificate of a managed resource. */
export const CERTIFICATE_JOB = 'certificate';

/** Strings rather than enums in the request, so that a bad value gets its own code and names the choices. */
export const CertPolicyInput = Type.Object(
  {
    authority: Type.Optional(Type.String({ maxLength: 64, description: 'certificate authority: letsencrypt (the default and only one)' })),
    private_key_type: Type.Optional(Type.String({ maxLength: 64, description: 'rsa (default) or ecdsa' })),
  },
  { additionalProperties: false, description: 'automatic certificate management' },
);

const CertPolicy = Type.Object({ authority: Type.String(), private_key_type: Type.String() }, { description: 'automatic certificate management' });

const CertJob = Type.Object(
  {
    error_code: Nullable(Type.String({ description: 'INTERNAL_ERROR (temporary, retried) or DNS_ERROR (fix DNS); null while not failing' })),
    msg: Type.String(),
    started_at: Type.String({ format: 'date-time' }),
    retries_at: Nullable(Type.String({ format: 'date-time' })),
  },
  { description: 'a certificate being provisioned or renewed' },
);

const CertStatus = Type.Object(
  {
    renews_at: Nullable(Type.String({ format: 'date-time', description: 'when the next renewal is requested' })),
    provisioning_job: Nullable(CertJob),
  },
  { description: 'state of automatic certificate management' },
);

/** The two response fields, null when automatic management is off. */
export const CertificateManagementFields = {
  certificate_management_policy: Nullable(CertPolicy),
  certificate_management_status: Nullable(CertStatus),
};

export type CertPolicyBody = { authority?: string; private_key_type?: string };

/** The policy of a request with its defaults, or the 400 for a bad value. */
export function readPolicy(body: CertPolicyBody): { authority: string; keyType: string } {
  const authority = body.authority ?? 'letsencrypt';
  if (!(AUTHORITIES as readonly string[]).includes(authority)) throw certificateManagementErrors.invalidAuthority({ value: authority });
  const keyType = body.private_key_type ?? 'rsa';
  if (!(MANAGED_KEY_TYPES as readonly string[]).includes(keyType)) throw certificateManagementErrors.invalidCertKeyType({ value: keyType });
  return { authority, keyType };
}

/** Every column off: no policy, no job, no renewal. */
export const NO_MANAGEMENT: CertificateManagementColumns = {
  cert_authority: null,
  cert_key_type: null,
  cert_renews_at: null,
  cert_job_started_at: null,
  cert_job_msg: null,
  cert_job_error_code: null,
  cert_job_retries_at: null,
};

/**
 * The columns that set `policy` on a row now holding `current`: a new policy, or one whose
 * authority or key type changed, (re)starts the provisioning job; the same policy again changes
 * nothing, so a client that sends the whole resource back does not restart a running job.
 */
export function policyChanges(
  current: CertificateManagementColumns | undefined,
  policy: { authority: string; keyType: string },
  now: Date,
): Partial<CertificateManagementColumns> {
  if (current && current.cert_authority === policy.authority && current.cert_key_type === policy.keyType) return {};
  return {
    cert_authority: policy.authority,
    cert_key_type: policy.keyType,
    cert_renews_at: current?.cert_renews_at ?? null,
    cert_job_started_at: rfc3339(now),
    cert_job_msg: PROVISIONING_MESSAGE,
    cert_job_error_code: null,
    cert_job_retries_at: null,
  };
}

export function isManaged(row: CertificateManagementColumns): boolean {
  return row.cert_authority !== null;
}

/** The policy and status of a row, as the API shows them. */
export function certificateManagementToApi(row: CertificateManagementColumns) {
  if (row.cert_authority === null) return { certificate_management_policy: null, certificate_management_status: null };
  return {
    certificate_management_policy: { authority: row.cert_authority, private_key_type: row.cert_key_type ?? 'rsa' },
    certificate_management_status: {
      renews_at: row.cert_renews_at,
      provisioning_job:
        row.cert_job_started_at === null
          ? null
          : {
              error_code: row.cert_job_error_code,
              msg: row.cert_job_msg ?? PROVISIONING_MESSAGE,
              started_at: row.cert_job_started_at,
              retries_at: row.cert_job_retries_at,
            },
    },
  };
}

/** A resource that takes a certificate management policy, and holds the certificate it was issued. */
type ManagedRow = CertificateManagementColumns & { id: string; certificate_id: string | null };

/**
 * Keeps the resource's certificate job in step with a change, in the change's transaction (the
 * kinds' afterWrite): a policy set or changed by this request starts it now, and so does any
 * change of a resource whose provisioning is failing (the user may have fixed DNS: check again
 * at once); no policy cancels it; deleting the resource also deletes the certificate it was issued.
 */
export async function followCertificateChange(db: ScopedDb, ctx: RequestContext, row: ManagedRow, operation: 'create' | 'update' | 'delete'): Promise<void> {
  if (operation === 'delete') {
    await cancelJobs(db, row.id, CERTIFICATE_JOB);
    if (row.certificate_id !== null) await dropIssued(db, row.certificate_id);
    return;
  }
  if (!isManaged(row)) {
    await cancelJobs(db, row.id, CERTIFICATE_JOB);
    return;
  }
  const startedNow = row.cert_job_started_at === rfc3339(ctx.now);
  if (startedNow || row.cert_job_error_code !== null) await enqueueJob(db, CERTIFICATE_JOB, row.id, ctx.now, ctx.now);
}

/** Deletes a certificate edgeplane issued (one the user uploaded stays theirs). */
export async function dropIssued(db: ScopedDb, certificateId: string): Promise<void> {
  const certificate = await db.find('tls_certificates', certificateId);
  if (certificate && certificate.issued_at !== null) await db.delete('tls_certificates', { id: certificateId });
}
