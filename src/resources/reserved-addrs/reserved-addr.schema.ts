import { Type } from '@sinclair/typebox';
import { Body, DescribedCreate, DescribedFields, DescribedPatch, IdString, Nullable, Patch, Ref } from '../../core/schema.js';

export const ReservedAddr = Type.Object(
  {
    ...DescribedFields('ra'),
    addr: Type.String({ description: 'host:port, allocated from the pool' }),
    region: Type.String(),
    endpoint_configuration: Nullable(Ref),
  },
  { description: 'reserved TCP address' },
);

export const ReservedAddrCreate = Body({
  ...DescribedCreate,
  region: Type.Optional(Type.String({ maxLength: 16, description: 'one of the configured regions; default us' })),
});

export const ReservedAddrUpdate = Body({
  ...DescribedPatch,
  endpoint_configuration_id: Patch(IdString('ec', 'endpoint configuration of type tcp')),
});
