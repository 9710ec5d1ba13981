import { Type } from '@sinclair/typebox';
import { Body, BoundedString, DescribedCreate, DescribedPatch, Patch, Timestamp } from '../../core/schema.js';
import { CertificateManagementFields, CertPolicyInput } from '../../certificates/certificate-management.js';

export const AgentIngress = Type.Object(
  {
    id: Type.String({ description: 'agin_…' }),
    uri: Type.String({ description: 'the path of the resource, /agent_ingresses/agin_…' }),
    description: Type.String(),
    metadata: Type.String(),
    domain: Type.String({ description: 'lower case, internationalized labels as A-labels (xn--…)' }),
    ns_targets: Type.Array(Type.String(), { description: 'nameservers to delegate the domain to (NS records), with a trailing dot' }),
    region_domains: Type.Array(Type.String(), { description: 'tunnel.<region>.<domain> for each region the service runs' }),
    created_at: Timestamp,
    ...CertificateManagementFields,
  },
  { description: 'agent ingress: a base domain agents connect to' },
);

export const AgentIngressCreate = Body({
  ...DescribedCreate,
  domain: BoundedString(300, { description: 'a domain of yours, not under a service-owned base domain' }),
  certificate_management_policy: Type.Optional(CertPolicyInput),
});

export const AgentIngressUpdate = Body({
  ...DescribedPatch,
  certificate_management_policy: Patch(CertPolicyInput),
});
