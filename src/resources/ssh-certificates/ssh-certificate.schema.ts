import { Type } from '@sinclair/typebox';
import { Body, BoundedString, DescribedCreate, DescribedFields, DescribedPatch, IdString, StringEnum } from '../../core/schema.js';
import { KEY_TYPES } from '../ssh-certificate-authorities/ssh-certificate-authority.schema.js';

export const MAX_PRINCIPALS = 256;

const PublicKeyField = BoundedString(16384, { description: 'OpenSSH public key line (authorized-keys format)' });
const Time = BoundedString(64, { description: 'RFC 3339' });
const Principals = Type.Array(BoundedString(255), { maxItems: MAX_PRINCIPALS });
const OptionMap = Type.Record(Type.String({ maxLength: 255 }), Type.String({ maxLength: 4096 }));

const certificateFields = {
  ssh_certificate_authority_id: Type.String(),
  public_key: Type.String(),
  key_type: StringEnum(KEY_TYPES),
  principals: Type.Array(Type.String()),
  valid_after: Type.String({ format: 'date-time' }),
  valid_until: Type.String({ format: 'date-time' }),
  certificate: Type.String({ description: 'the signed certificate, one authorized-keys line ending with the resource id' }),
};

const certificateCreate = {
  ...DescribedCreate,
  ssh_certificate_authority_id: IdString('sshca', 'SSH certificate authority'),
  public_key: PublicKeyField,
  principals: Type.Optional(Principals),
  valid_after: Type.Optional(Time),
  valid_until: Type.Optional(Time),
};

export const SshUserCertificate = Type.Object(
  {
    ...DescribedFields('sucrt'),
    ...certificateFields,
    critical_options: Type.Record(Type.String(), Type.String()),
    extensions: Type.Record(Type.String(), Type.String()),
  },
  { description: 'SSH user certificate' },
);

export const SshUserCertificateCreate = Body({
  ...certificateCreate,
  critical_options: Type.Optional(OptionMap),
  extensions: Type.Optional(OptionMap),
});

export const SshHostCertificate = Type.Object({ ...DescribedFields('shcrt'), ...certificateFields }, { description: 'SSH host certificate' });
export const SshHostCertificateCreate = Body(certificateCreate);
export const SshCertificateUpdate = Body(DescribedPatch);
