import { Type } from '@sinclair/typebox';
import { Body, DescribedCreate, DescribedFields, DescribedPatch, StringEnum } from '../../core/schema.js';

export const KEY_TYPES = ['rsa', 'ecdsa', 'ed25519'] as const;
export const CURVE_NAMES = ['p256', 'p384', 'p521'] as const;

export const SshCertificateAuthority = Type.Object(
  {
    ...DescribedFields('sshca'),
    public_key: Type.String({ description: 'authorized-keys line of the CA' }),
    key_type: StringEnum(KEY_TYPES),
  },
  { description: 'SSH certificate authority' },
);

export const SshCertificateAuthorityCreate = Body({
  ...DescribedCreate,
  private_key_type: Type.Optional(StringEnum(KEY_TYPES, { description: 'default ed25519' })),
  elliptic_curve: Type.Optional(StringEnum(CURVE_NAMES, { description: 'ECDSA only; default p256' })),
  key_size: Type.Optional(Type.Integer({ description: 'RSA only: 2048 or 4096 (default 4096)' })),
});
export const SshCertificateAuthorityUpdate = Body(DescribedPatch);
