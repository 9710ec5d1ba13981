// Every resource kind the API serves. A new kind is one line here.
import type { Store } from '../db/store.js';
import type { Authenticator } from '../http/auth.js';
import { apiKeysResource } from './api-keys/api-key.resource.js';
import { botUsersResource } from './bot-users/bot-user.resource.js';

export function buildResources(store: Store, auth: Authenticator) {
  return {
    apiKeys: apiKeysResource(store, auth),
    botUsers: botUsersResource(store, auth),
  };
}

export type Resources = ReturnType<typeof buildResources>;
