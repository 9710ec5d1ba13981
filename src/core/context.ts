// Who is calling, for which account: built by the auth hook, handed to every service call.
import type { Scope } from '../db/store.js';
import type { Role } from '../db/schema.js';

export interface Principal {
  /** usr_… or bot_… */
  readonly id: string;
  readonly kind: 'user' | 'bot';
  readonly role: Role;
}

export interface RequestContext {
  readonly scope: Scope;
  readonly principal: Principal;
  /** The API key that authenticated the request. */
  readonly keyId: string;
  readonly baseUrl: string;
  readonly now: Date;
}
