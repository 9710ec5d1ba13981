import { Type } from '@sinclair/typebox';
import { Body, BoundedString, Patch, Timestamp, Uri } from '../../core/schema.js';

const Name = BoundedString(255, { minLength: 1, description: 'unique within the account; 1 to 255 bytes' });

export const BotUser = Type.Object(
  {
    id: Type.String({ description: 'bot_…' }),
    uri: Uri,
    name: Type.String(),
    active: Type.Boolean({ description: "an inactive bot's API keys are refused" }),
    created_at: Timestamp,
  },
  { description: 'bot user' },
);

export const BotUserCreate = Body({
  name: Name,
  active: Type.Optional(Type.Boolean({ description: 'default true' })),
});

export const BotUserUpdate = Body({
  name: Patch(Name),
  active: Patch(Type.Boolean()),
});
