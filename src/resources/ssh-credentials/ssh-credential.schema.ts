import { Type, type Static } from '@sinclair/typebox';
import { Body, BoundedString, DescribedCreate, DescribedPatch, IdString, Patch, Timestamp, Uri } from '../../core/schema.js';
import { Acl } from '../credentials/credential.schema.js';

/** Room for the largest RSA key OpenSSH takes (16384 bits: about 2,800 characters) and a long comment. */
export const MAX_PUBLIC_KEY_BYTES = 16384;

export const SshCredential = Type.Object(
  {
    id: Type.String({ description: 'sshcr_…' }),
    uri: Uri,
    created_at: Timestamp,
    description: Type.String(),
    metadata: Type.String(),
    public_key: Type.String({ description: 'the key in its canonical authorized_keys form, `<type> <base64>` (no comment)' }),
    acl: Type.Array(Type.String(), { description: 'ACL rules in their stored form (domains lower case, as A-labels)' }),
    owner_id: Type.String({ description: 'user (usr_…) or bot user (bot_…) that owns the SSH credential' }),
  },
  { description: 'SSH credential: a public key that may open tunnels with `ssh -R`' },
);

export const SshCredentialCreate = Body({
  ...DescribedCreate,
  acl: Type.Optional(Acl),
  public_key: BoundedString(MAX_PUBLIC_KEY_BYTES, {
    description: 'one OpenSSH public key in authorized_keys form (ssh-ed25519, ecdsa-sha2-nistp256/384/521, or ssh-rsa of 2048 bits or more), without options',
  }),
  owner_id: Type.Optional(IdString('usr or bot', 'owning user or bot user')),
});

export const SshCredentialUpdate = Body({ ...DescribedPatch, acl: Patch(Acl) });

export type SshCredential = Static<typeof SshCredential>;
