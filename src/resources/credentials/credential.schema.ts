import { Type, type Static } from '@sinclair/typebox';
import { Body, DescribedCreate, DescribedPatch, IdString, OrNull, Patch, Timestamp, Uri } from '../../core/schema.js';
import { MAX_ACL_RULE_LENGTH, MAX_ACL_RULES } from './credential-acl.js';

/** A credential's ACL in a create or PATCH body (SSH credentials take the same). */
export const Acl = Type.Array(Type.String({ maxLength: MAX_ACL_RULE_LENGTH }), {
  description: `at most ${MAX_ACL_RULES} rules: '*', 'bind:<domain>', 'bind:*.<domain>', 'bind:<key>=<value>' (key or value may be '*') or 'bind:*'; empty allows every bind`,
});

export const Credential = Type.Object(
  {
    id: Type.String({ description: 'cr_…' }),
    uri: Uri,
    created_at: Timestamp,
    description: Type.String(),
    metadata: Type.String(),
    token: OrNull(Type.String({ description: 'the agent authtoken; only in the response to creation' })),
    acl: Type.Array(Type.String(), { description: 'ACL rules in their stored form (domains lower case, as A-labels)' }),
    owner_id: Type.String({ description: 'user (usr_…) or bot user (bot_…) that owns the credential' }),
  },
  { description: 'tunnel credential (agent authtoken)' },
);

export const CredentialCreate = Body({
  ...DescribedCreate,
  acl: Type.Optional(Acl),
  owner_id: Type.Optional(IdString('usr or bot', 'owning user or bot user')),
});

export const CredentialUpdate = Body({ ...DescribedPatch, acl: Patch(Acl) });

export type Credential = Static<typeof Credential>;
