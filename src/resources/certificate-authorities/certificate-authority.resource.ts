// Certificate authorities that mutual TLS modules trust: one CA certificate each, checked as a CA
// (basic constraints, key usage) when uploaded; the response fields are derived from it then.
import { Type } from '@sinclair/typebox';
import { Body, BoundedString, DescribedCreate, DescribedFields, DescribedPatch, describedColumns, describedResponse, Timestamp } from '../../core/schema.js';
import { defineResource } from '../../crud/definition.js';
import type { CertificateAuthoritiesTable } from './certificate-authority.table.js';
import { readCaUpload, type CaDetails } from '../../certificates/pem.js';
import { certificateAuthorityCatalogue, certificateAuthorityErrors } from './certificate-authority.errors.js';

export const CertificateAuthority = Type.Object(
  {
    ...DescribedFields('ca'),
    ca_pem: Type.String({ description: 'the CA certificate, PEM' }),
    subject_common_name: Type.String(),
    not_before: Timestamp,
    not_after: Timestamp,
    key_usages: Type.Array(Type.String()),
    extended_key_usages: Type.Array(Type.String()),
  },
  { description: 'certificate authority trusted by mutual TLS modules' },
);

export const CertificateAuthorityCreate = Body({
  ...DescribedCreate,
  ca_pem: BoundedString(65536, { description: 'one CA certificate, PEM' }),
});
export const CertificateAuthorityUpdate = Body(DescribedPatch);

export const certificateAuthorityDefinition = defineResource({
  kind: 'certificate_authority',
  title: 'certificate authority',
  errors: certificateAuthorityCatalogue,
  prefix: 'ca',
  path: '/certificate_authorities',
  listKey: 'certificate_authorities',
  table: 'certificate_authorities',
  schemas: { resource: CertificateAuthority, create: CertificateAuthorityCreate, update: CertificateAuthorityUpdate },
  inUse: (id, referrers) => certificateAuthorityErrors.certificateAuthorityInUse({ id, referrers }),

  prepare(ctx, body) {
    const read = readCaUpload(body.ca_pem, ctx.now);
    return { row: { ...describedColumns(body), ca_pem: read.caPem, details: JSON.stringify(read.details) } };
  },

  toApi: (row: CertificateAuthoritiesTable) => ({
    ...describedResponse(row),
    ca_pem: row.ca_pem,
    ...(JSON.parse(row.details) as CaDetails),
  }),
});
