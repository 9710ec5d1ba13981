import { Type } from '@sinclair/typebox';
import { Body, BoundedString, DescribedCreate, DescribedFields, DescribedPatch, IdString, Nullable, Patch, Ref } from '../../core/schema.js';
import { CertificateManagementFields, CertPolicyInput } from '../../certificates/certificate-management.js';

const NullableRef = Nullable(Ref);

export const ReservedDomain = Type.Object(
  {
    ...DescribedFields('rd'),
    domain: Type.String({ description: 'lower case, internationalized labels as A-labels (xn--…)' }),
    region: Nullable(Type.String({ description: 'deprecated; as sent, null when not sent' })),
    cname_target: Nullable(Type.String({ description: 'where to point a CNAME for the domain; null under a service-owned base domain' })),
    certificate: NullableRef,
    ...CertificateManagementFields,
    acme_challenge_cname_target: Nullable(
      Type.String({ description: 'where to point _acme-challenge.<domain> for a wildcard not under a service-owned base' }),
    ),
    http_endpoint_configuration: NullableRef,
    https_endpoint_configuration: NullableRef,
  },
  { description: 'reserved domain' },
);

const Domain = BoundedString(300, { description: 'the hostname; a leading *. reserves a wildcard' });
const Region = Type.String({ maxLength: 16, description: 'deprecated: one of the configured regions' });
const CertificateId = IdString('cert', 'uploaded TLS certificate');
const HttpConfiguration = IdString('ec', 'endpoint configuration of type http');
const HttpsConfiguration = IdString('ec', 'endpoint configuration of type https');

export const ReservedDomainCreate = Body({
  ...DescribedCreate,
  domain: Domain,
  region: Type.Optional(Region),
  certificate_id: Type.Optional(CertificateId),
  certificate_management_policy: Type.Optional(CertPolicyInput),
  http_endpoint_configuration_id: Type.Optional(HttpConfiguration),
  https_endpoint_configuration_id: Type.Optional(HttpsConfiguration),
});

export const ReservedDomainUpdate = Body({
  ...DescribedPatch,
  certificate_id: Patch(CertificateId),
  certificate_management_policy: Patch(CertPolicyInput),
  http_endpoint_configuration_id: Patch(HttpConfiguration),
  https_endpoint_configuration_id: Patch(HttpsConfiguration),
});
