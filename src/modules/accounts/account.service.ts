// Accounts and their (human) users are operator business: created with the CLI, not the API.
// Each new account or user gets a first API key whose token is returned exactly once.
import { newId } from '../../core/ids.js';
import { rfc3339, type Clock } from '../../core/time.js';
import { createAccount, hasAnyAccount, listAccounts, withExistingAccount } from '../../db/accounts.js';
import type { AccountsTable, Role } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import { newKeyMaterial } from '../api-keys/api-key.token.js';

export const ROLES: readonly Role[] = ['admin', 'developer', 'read_only'];

export interface IssuedUser {
  account_id: string;
  user_id: string;
  api_key_id: string;
  token: string;
}

export class InputError extends Error {}

function checkName(name: string, what: string): string {
  const trimmed = name.trim();
  if (trimmed === '') throw new InputError(`${what} name must not be empty`);
  if (Buffer.byteLength(trimmed, 'utf8') > 255) throw new InputError(`${what} name is limited to 255 bytes`);
  return trimmed;
}

export class AccountService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  /** A new account with one admin user and that user's first API key. */
  async createAccount(input: { name: string; adminName?: string }): Promise<IssuedUser> {
    const name = checkName(input.name, 'account');
    const adminName = checkName(input.adminName ?? 'admin', 'user');
    const now = rfc3339(this.clock.now());
    const accountId = newId('acct');
    const userId = newId('usr');
    const key = newKeyMaterial();
    await createAccount(this.store, { id: accountId, name, created_at: now }, async (db) => {
      await db.insert('users', { id: userId, name: adminName, role: 'admin', created_at: now });
      await db.insert('api_keys', {
        id: key.id,
        owner_id: userId,
        description: 'first admin key',
        metadata: '',
        secret_hash: key.secret_hash,
        created_at: now,
      });
    });
    return { account_id: accountId, user_id: userId, api_key_id: key.id, token: key.token };
  }

  /** A new user of an existing account, with that user's first API key. */
  async createUser(input: { accountId: string; name: string; role: string }): Promise<IssuedUser> {
    if (!ROLES.includes(input.role as Role)) throw new InputError(`role must be one of ${ROLES.join(', ')}; got '${input.role}'`);
    const name = checkName(input.name, 'user');
    const now = rfc3339(this.clock.now());
    const userId = newId('usr');
    const key = newKeyMaterial();
    const found = await withExistingAccount(this.store, input.accountId, async (db) => {
      await db.insert('users', { id: userId, name, role: input.role as Role, created_at: now });
      await db.insert('api_keys', {
        id: key.id,
        owner_id: userId,
        description: `first key of ${name}`,
        metadata: '',
        secret_hash: key.secret_hash,
        created_at: now,
      });
    });
    if (!found) throw new InputError(`no account with id '${input.accountId}'`);
    return { account_id: input.accountId, user_id: userId, api_key_id: key.id, token: key.token };
  }

  async listAccounts(): Promise<AccountsTable[]> {
    return listAccounts(this.store);
  }

  async hasAnyAccount(): Promise<boolean> {
    return hasAnyAccount(this.store);
  }
}
