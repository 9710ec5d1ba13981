import { Type } from '@sinclair/typebox';
import { Body, DescribedCreate, DescribedFields, DescribedPatch, IdString, Patch, Ref, StringEnum } from '../../core/schema.js';
import { MAX_POLICIES_PER_RESTRICTION } from '../../edge-config/values/named-resources.js';

export const RESTRICTION_TYPES = ['dashboard', 'api', 'agent', 'endpoints'] as const;

const PolicyIds = Type.Array(IdString('ipp', 'IP policy'), {
  minItems: 1,
  maxItems: MAX_POLICIES_PER_RESTRICTION,
  uniqueItems: true,
  description: `1 to ${MAX_POLICIES_PER_RESTRICTION} IP policies of the account, each once`,
});

export const IpRestriction = Type.Object(
  {
    ...DescribedFields('ipx'),
    enforced: Type.Boolean({ description: 'true: refuse traffic the policies do not allow; false: only warn' }),
    type: StringEnum(RESTRICTION_TYPES),
    ip_policies: Type.Array(Ref),
  },
  { description: 'IP restriction' },
);

export const IpRestrictionCreate = Body({
  ...DescribedCreate,
  enforced: Type.Optional(Type.Boolean({ description: 'default false: a new restriction only warns until it is enforced' })),
  type: StringEnum(RESTRICTION_TYPES, { description: 'what traffic is restricted; cannot be changed' }),
  ip_policy_ids: PolicyIds,
});

export const IpRestrictionUpdate = Body({
  ...DescribedPatch,
  enforced: Patch(Type.Boolean()),
  ip_policy_ids: Patch(PolicyIds),
});
