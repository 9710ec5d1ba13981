import { Type } from '@sinclair/typebox';
import { Body, Description, Metadata, Patch, Timestamp, Uri } from '../../core/schema.js';

export const IpPolicy = Type.Object({
  id: Type.String({ description: 'ipp_…' }),
  uri: Uri,
  created_at: Timestamp,
  description: Type.String(),
  metadata: Type.String(),
}, { description: 'IP policy: a named set of allow and deny rules' });

export const IpPolicyCreate = Body({ description: Type.Optional(Description), metadata: Type.Optional(Metadata) });
export const IpPolicyUpdate = Body({ description: Patch(Description), metadata: Patch(Metadata) });
