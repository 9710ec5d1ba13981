// SSH user and host certificates. Everything slow (loading and unsealing the CA key, signing)
// happens before the transaction; the transaction only checks that the CA still exists (a
// declared reference) and inserts the row. The certificate's key id is the resource id.
import { newId } from '../../core/ids.js';
import { rfc3339 } from '../../core/time.js';
import type { RequestContext } from '../../core/context.js';
import { describedColumns } from '../../core/schema.js';
import { defineResource } from '../../crud/definition.js';
import type { ColumnReference } from '../../crud/references.js';
import type { ScopedDb } from '../../db/scoped.js';
import type { SshHostCertificatesTable, SshUserCertificatesTable } from './ssh-certificate.table.js';
import type { Sealer } from '../../lib/crypto/sealer.js';
import { certificateLine, signCertificate, type CertificateType } from '../../lib/ssh/certificate.js';
import { KeyError, parseAuthorizedKey } from '../../lib/ssh/keys.js';
import { loadCaKey } from '../ssh-certificate-authorities/ssh-certificate-authority.resource.js';
import { sshCertificateCatalogue, sshCertificateErrors } from './ssh-certificate.errors.js';
import * as S from './ssh-certificate.schema.js';
import { criticalOptions, DEFAULT_EXTENSIONS, extensions, hostPrincipals, userPrincipals, validity } from './ssh-values.js';

const DAY_MS = 24 * 60 * 60 * 1000;

interface CertificateBody {
  ssh_certificate_authority_id: string;
  public_key: string;
  principals?: string[];
  valid_after?: string;
  valid_until?: string;
  critical_options?: Record<string, string>;
  extensions?: Record<string, string>;
  description?: string;
  metadata?: string;
}

/** Signs the request and returns the columns of the new certificate row. */
async function issue(db: ScopedDb, sealer: Sealer, ctx: RequestContext, type: CertificateType, prefix: string, body: CertificateBody) {
  let subject;
  try {
    subject = parseAuthorizedKey(body.public_key);
  } catch (error) {
    if (error instanceof KeyError) throw sshCertificateErrors.invalidPublicKey({ reason: error.message });
    throw error;
  }
  const principals = type === 'user' ? userPrincipals(body.principals ?? []) : hostPrincipals(body.principals ?? []);
  const { after, until } = validity(body, ctx.now, type === 'user' ? DAY_MS : 365 * DAY_MS);
  const options = type === 'user' ? criticalOptions(body.critical_options ?? {}) : {};
  const exts = type === 'user' ? extensions(body.extensions ?? DEFAULT_EXTENSIONS) : {};

  const ca = await loadCaKey(db, sealer, body.ssh_certificate_authority_id);
  if (!ca) throw sshCertificateErrors.sshCaNotFound({ id: body.ssh_certificate_authority_id });
  const id = newId(prefix);
  const cert = signCertificate(
    ca.key,
    { type, subject, keyId: id, principals, validAfter: after, validBefore: until, criticalOptions: options, extensions: exts },
    ca.publicKey,
  );
  return {
    id,
    row: {
      ...describedColumns(body),
      ssh_certificate_authority_id: body.ssh_certificate_authority_id,
      public_key: body.public_key.trim(),
      key_type: subject.keyType,
      principals: JSON.stringify(principals),
      valid_after: rfc3339(after),
      valid_until: rfc3339(until),
      serial: cert.serial.toString(),
      certificate: certificateLine(cert, id),
      ...(type === 'user' && { critical_options: JSON.stringify(options), extensions: JSON.stringify(exts) }),
    },
  };
}

const common = (row: SshHostCertificatesTable) => ({
  id: row.id,
  created_at: row.created_at,
  description: row.description,
  metadata: row.metadata,
  ssh_certificate_authority_id: row.ssh_certificate_authority_id,
  public_key: row.public_key,
  key_type: row.key_type,
  principals: JSON.parse(row.principals) as string[],
  valid_after: row.valid_after,
  valid_until: row.valid_until,
  certificate: row.certificate,
});

const signedBy: ColumnReference<SshHostCertificatesTable> = {
  in: 'column',
  column: 'ssh_certificate_authority_id',
  kinds: ['ssh_certificate_authority'],
  notFound: (id) => sshCertificateErrors.sshCaNotFound({ id }),
  onDelete: 'restrict',
};

export function sshCertificateDefinitions(sealer: Sealer) {
  const user = defineResource({
    kind: 'ssh_user_certificate',
    title: 'SSH user certificate',
    errors: sshCertificateCatalogue,
    prefix: 'sucrt',
    path: '/ssh_user_certificates',
    listKey: 'ssh_user_certificates',
    table: 'ssh_user_certificates',
    schemas: { resource: S.SshUserCertificate, create: S.SshUserCertificateCreate, update: S.SshCertificateUpdate },
    references: [signedBy],
    prepare: async (ctx, body, db) =>
      (await issue(db, sealer, ctx, 'user', 'sucrt', body)) as { id: string; row: Omit<SshUserCertificatesTable, 'id' | 'account_id' | 'created_at'> },
    toApi: (row: SshUserCertificatesTable) => ({ ...common(row), critical_options: JSON.parse(row.critical_options), extensions: JSON.parse(row.extensions) }),
  });

  const host = defineResource({
    kind: 'ssh_host_certificate',
    title: 'SSH host certificate',
    errors: sshCertificateCatalogue,
    prefix: 'shcrt',
    path: '/ssh_host_certificates',
    listKey: 'ssh_host_certificates',
    table: 'ssh_host_certificates',
    schemas: { resource: S.SshHostCertificate, create: S.SshHostCertificateCreate, update: S.SshCertificateUpdate },
    references: [signedBy],
    prepare: async (ctx, body, db) =>
      (await issue(db, sealer, ctx, 'host', 'shcrt', body)) as { id: string; row: Omit<SshHostCertificatesTable, 'id' | 'account_id' | 'created_at'> },
    toApi: (row: SshHostCertificatesTable) => common(row),
  });

  return { sshUserCertificates: user, sshHostCertificates: host };
}
