// Accounts and their (human) users are operator business: created with the CLI, not the API.
// Each new account or user gets a first API key whose token is returned exactly once.
import { newId } from '../core/ids.js';
import { rfc3339, type Clock } from '../core/time.js';
import { accountSummary, createAccount, listAccounts, withExistingAccount } from '../db/accounts.js';
import type { AccountsTable, Role } from '../db/schema.js';
import { UniqueViolation, type Store } from '../db/store.js';
import type { ScopedDb } from '../db/scoped.js';
import { newKeyMaterial } from '../resources/api-keys/api-key.token.js';

export const ROLES: readonly Role[] = ['admin', 'developer', 'read_only'];

export interface IssuedUser {
  account_id: string;
  user_id: string;
  api_key_id: string;
  token: string;
}

/** The operator's input cannot be carried out as given (the CLI exits 2). */
export class InputError extends Error {}

/** What the operator asked to create exists already (the CLI exits 3). */
export class ConflictError extends Error {}

const USER_NAME_KEY = 'users_account_id_name_key';
/** Account names are unique (migration 0024): a second `accounts create --name` with a name in use exits 3. */
const ACCOUNT_NAME_KEY = 'accounts_name_key';

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
    const issued = await createAccount(this.store, { id: accountId, name, created_at: now }, async (db) => {
      await db.insert('users', { id: userId, name: adminName, role: 'admin', created_at: now });
      return this.issueKey(db, userId, 'first admin key', now);
    }).catch(async (error: unknown) => {
      if (!(error instanceof UniqueViolation && error.target === ACCOUNT_NAME_KEY)) throw error;
      const existing = (await listAccounts(this.store)).find((a) => a.name === name);
      throw new ConflictError(`an account named '${name}' exists already${existing ? ` (${existing.id})` : ''}; account names are unique`);
    });
    return { account_id: accountId, user_id: userId, ...issued };
  }

  /** A new user of an existing account, with that user's first API key. User names are unique within an account. */
  async createUser(input: { accountId: string; name: string; role: string }): Promise<IssuedUser> {
    if (!ROLES.includes(input.role as Role)) throw new InputError(`role must be one of ${ROLES.join(', ')}; got '${input.role}'`);
    const name = checkName(input.name, 'user');
    const now = rfc3339(this.clock.now());
    const userId = newId('usr');
    const taken = () => new ConflictError(`account ${input.accountId} already has a user named '${name}'`);
    const issued = await withExistingAccount(this.store, input.accountId, async (db) => {
      const [existing] = await db.select('users', { name });
      if (existing) throw new ConflictError(`account ${input.accountId} already has a user named '${name}' (${existing.id})`);
      await db.insert('users', { id: userId, name, role: input.role as Role, created_at: now });
      return this.issueKey(db, userId, `first key of ${name}`, now);
    }).catch((error: unknown) => {
      // Another process created the same name between the check and the insert.
      throw error instanceof UniqueViolation && error.target === USER_NAME_KEY ? taken() : error;
    });
    if (!issued) throw new InputError(`no account with id '${input.accountId}'`);
    return { account_id: input.accountId, user_id: userId, ...issued };
  }

  /**
   * A new API key for a user of an existing account: the user named, or else the account's
   * oldest admin. For an operator whose admin lost every token (the first one is shown once).
   */
  async createApiKey(input: { accountId: string; userId?: string; description?: string }): Promise<IssuedUser> {
    const description = input.description ?? 'minted by the operator (edgeplane api-keys create)';
    if (Buffer.byteLength(description, 'utf8') > 255) throw new InputError('description is limited to 255 bytes');
    const now = rfc3339(this.clock.now());
    let userId = '';
    const issued = await withExistingAccount(this.store, input.accountId, async (db) => {
      const users = await db.select('users', input.userId ? { id: input.userId } : { role: 'admin' }, { orderBy: ['created_at', 'id'] });
      if (!users[0]) {
        throw new InputError(
          input.userId
            ? `account ${input.accountId} has no user '${input.userId}'`
            : `account ${input.accountId} has no admin user; create one with: edgeplane users create --account ${input.accountId} --name NAME --role admin`,
        );
      }
      userId = users[0].id;
      return this.issueKey(db, userId, description, now);
    });
    if (!issued) throw new InputError(`no account with id '${input.accountId}'`);
    return { account_id: input.accountId, user_id: userId, ...issued };
  }

  private async issueKey(db: ScopedDb, ownerId: string, description: string, now: string): Promise<{ api_key_id: string; token: string }> {
    const key = newKeyMaterial();
    await db.insert('api_keys', { id: key.id, owner_id: ownerId, description, metadata: '', secret_hash: key.secret_hash, created_at: now });
    return { api_key_id: key.id, token: key.token };
  }

  async listAccounts(): Promise<AccountsTable[]> {
    return listAccounts(this.store);
  }

  /** How many accounts the store holds, and the oldest. */
  async summary(): Promise<{ count: number; oldest?: AccountsTable }> {
    return accountSummary(this.store);
  }
}
