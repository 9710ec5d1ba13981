// Uploaded TLS certificates. The chain and key are read and checked before the transaction
// (tls-certificate-pem.ts); the fields a response shows are derived from the leaf once, at upload,
// and stored with it. The private key is sealed with the master key and never returned.
import { newId } from '../../core/ids.js';
import { describedColumns, describedResponse } from '../../core/schema.js';
import { defineResource } from '../../crud/definition.js';
import type { ColumnReference } from '../../crud/references.js';
import type { TlsCertificatesTable } from '../../db/schema.js';
import type { Sealer } from '../../lib/crypto/sealer.js';
import { readCertificateUpload, type CertificateDetails } from '../../certificates/pem.js';
import { tlsCertificateCatalogue, tlsCertificateErrors } from './tls-certificate.errors.js';
import { TlsCertificate, TlsCertificateCreate, TlsCertificateUpdate } from './tls-certificate.schema.js';

/** A row's `certificate_id`: the TLS certificate it is served with, which cannot be deleted under it. */
export function certificateReference<Row extends { certificate_id: string | null }>(): ColumnReference<Row> {
  return {
    in: 'column',
    column: 'certificate_id' as keyof Row & string,
    kinds: ['tls_certificate'],
    notFound: (id) => tlsCertificateErrors.tlsCertificateNotFound({ id }),
    onDelete: 'restrict',
  };
}

export function tlsCertificateDefinition(sealer: Sealer) {
  return defineResource({
    kind: 'tls_certificate',
    title: 'TLS certificate',
    errors: tlsCertificateCatalogue,
    prefix: 'cert',
    path: '/tls_certificates',
    listKey: 'tls_certificates',
    table: 'tls_certificates',
    schemas: { resource: TlsCertificate, create: TlsCertificateCreate, update: TlsCertificateUpdate },
    inUse: (id, referrers) => tlsCertificateErrors.tlsCertificateInUse({ id, referrers }),

    prepare(ctx, body) {
      const read = readCertificateUpload(body.certificate_pem, body.private_key_pem, ctx.now);
      const id = newId('cert');
      return {
        id,
        row: {
          ...describedColumns(body),
          certificate_pem: read.certificatePem,
          private_key_sealed: sealer.seal(read.keyPem, id),
          private_key_type: read.keyType,
          dns_names: JSON.stringify(read.dnsNames),
          details: JSON.stringify(read.details),
          not_after: read.details.not_after,
          issued_at: null,
        },
      };
    },

    toApi: (row: TlsCertificatesTable) => ({
      ...describedResponse(row),
      certificate_pem: row.certificate_pem,
      ...(JSON.parse(row.details) as CertificateDetails),
      issued_at: row.issued_at,
      private_key_type: row.private_key_type,
    }),
  });
}
