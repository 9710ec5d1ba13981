import { Type, type Static } from '@sinclair/typebox';
import { Body, DescribedCreate, DescribedPatch, IdString, OrNull, Timestamp, Uri } from '../../core/schema.js';

export const ApiKey = Type.Object(
  {
    id: Type.String({ description: 'ak_…' }),
    uri: Uri,
    description: Type.String(),
    metadata: Type.String(),
    created_at: Timestamp,
    token: OrNull(Type.String({ description: 'the bearer token; only in the response to creation' })),
    owner_id: Type.String({ description: 'user (usr_…) or bot user (bot_…) that owns the key' }),
  },
  { description: 'API key' },
);

export const ApiKeyCreate = Body({
  ...DescribedCreate,
  owner_id: Type.Optional(IdString('usr or bot', 'owning user or bot user')),
});

export const ApiKeyUpdate = Body(DescribedPatch);

export type ApiKey = Static<typeof ApiKey>;
