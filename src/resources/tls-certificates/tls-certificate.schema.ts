import { Type } from '@sinclair/typebox';
import { Body, BoundedString, DescribedCreate, DescribedFields, DescribedPatch, Nullable } from '../../core/schema.js';

export const TlsCertificate = Type.Object(
  {
    ...DescribedFields('cert'),
    certificate_pem: Type.String({ description: 'the chain, leaf first' }),
    subject_common_name: Type.String(),
    subject_alternative_names: Type.Object({ dns_names: Type.Array(Type.String()), ips: Type.Array(Type.String()) }),
    issued_at: Nullable(Type.String({ format: 'date-time', description: 'when edgeplane issued it; null for an uploaded certificate' })),
    not_before: Type.String({ format: 'date-time' }),
    not_after: Type.String({ format: 'date-time' }),
    key_usages: Type.Array(Type.String()),
    extended_key_usages: Type.Array(Type.String()),
    private_key_type: Type.String({ description: 'rsa, ecdsa or ed25519' }),
    issuer_common_name: Type.String(),
    serial_number: Type.String({ description: 'hexadecimal' }),
    subject_organization: Type.String(),
    subject_organizational_unit: Type.String(),
    subject_locality: Type.String(),
    subject_province: Type.String(),
    subject_country: Type.String(),
  },
  { description: 'TLS certificate; its private key is never returned' },
);

export const TlsCertificateCreate = Body({
  ...DescribedCreate,
  certificate_pem: BoundedString(65536, { description: 'PEM chain: the leaf first, then each intermediate' }),
  private_key_pem: BoundedString(16384, {
    description: 'PEM private key of the leaf (PKCS#1, SEC1 or PKCS#8), unencrypted; sealed at rest and never returned',
  }),
});
export const TlsCertificateUpdate = Body(DescribedPatch);
