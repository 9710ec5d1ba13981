// Who is calling, for which account: built by the auth hook, handed to every service call.

/** The account a request acts for. Every query on account-owned rows takes it. */
export interface Scope {
  readonly accountId: string;
}

export type Role = 'admin' | 'developer' | 'read_only';

export interface Principal {
  /** usr_… or bot_… */
  readonly id: string;
  readonly kind: 'user' | 'bot';
  readonly role: Role;
}

/** What authentication establishes about a request. */
export interface Authenticated {
  readonly scope: Scope;
  readonly principal: Principal;
  /** The API key that authenticated the request. */
  readonly keyId: string;
}

/** An Idempotency-Key claimed for a request: the account's, of the API key that sent it, for that request alone. */
export interface IdempotencyClaim {
  readonly accountId: string;
  readonly apiKeyId: string;
  readonly key: string;
  /** What the key was sent with: the same key with another request is refused. */
  readonly requestHash: string;
}

export interface RequestContext extends Authenticated {
  readonly baseUrl: string;
  readonly now: Date;
  /** The Idempotency-Key this request claimed: its change marks the claim in its own transaction. */
  readonly idempotency?: IdempotencyClaim;
}

/** Establishes who calls: synchronous for a cached key, a promise when the store must be read. */
export interface Authenticator {
  authenticate(authorization: string | undefined): Authenticated | Promise<Authenticated>;
}

/** The account's `api` IP restriction's word on a caller's address. */
export type Verdict = { allowed: true } | { allowed: false; enforced: boolean; restrictionId: string };

export interface IpScreen {
  check(scope: Scope, ip: string): Verdict | Promise<Verdict>;
}
