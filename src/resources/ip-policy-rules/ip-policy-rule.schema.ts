import { Type } from '@sinclair/typebox';
import { Body, BoundedString, DescribedCreate, DescribedFields, DescribedPatch, IdString, Patch, Ref, StringEnum } from '../../core/schema.js';

export const RULE_ACTIONS = ['allow', 'deny'] as const;
const Cidr = BoundedString(64, { description: 'IPv4 or IPv6 network in CIDR notation, e.g. 10.0.0.0/8' });

export const IpPolicyRule = Type.Object(
  {
    ...DescribedFields('ipr'),
    cidr: Type.String({ description: 'canonical network form' }),
    ip_policy: Ref,
    action: StringEnum(RULE_ACTIONS),
  },
  { description: 'IP policy rule' },
);

export const IpPolicyRuleCreate = Body({
  ...DescribedCreate,
  cidr: Cidr,
  ip_policy_id: IdString('ipp', 'IP policy'),
  action: StringEnum(RULE_ACTIONS, { description: 'allow or deny; deny wins' }),
});

export const IpPolicyRuleUpdate = Body({
  ...DescribedPatch,
  cidr: Patch(Cidr),
});
