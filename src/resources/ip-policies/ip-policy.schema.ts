import { Type } from '@sinclair/typebox';
import { Body, DescribedCreate, DescribedFields, DescribedPatch } from '../../core/schema.js';

export const IpPolicy = Type.Object(DescribedFields('ipp'), { description: 'IP policy: a named set of allow and deny rules' });
export const IpPolicyCreate = Body(DescribedCreate);
export const IpPolicyUpdate = Body(DescribedPatch);
