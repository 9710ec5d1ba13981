// Bearer authentication against the API keys of the store. Verified keys are cached for at most
// 2 seconds, so that a key deleted on another instance stops working within 2 s; the instance
// that changes a key, a user or a bot drops it from its cache at once. The secret is compared
// with the stored hash in constant time on every request, cached or not. A key is found by its id
// before its account is known: a read across accounts, through the CrossAccountReader it is handed.
import { CompiledQuery, type SqlBool } from 'kysely';
import type { Authenticated, Authenticator, Principal, Role } from '../../core/context.js';
import { errors } from '../../core/errors.js';
import { readAcrossAccounts, type CrossAccountReader } from '../../db/cross-account.js';
import { toBool } from '../../db/schema.js';
import { hashSecret, parseAuthorization, sameDigest } from './api-key.token.js';

const CACHE_TTL_MS = 2000;
const CACHE_MAX_ENTRIES = 10_000;

/** A key as read from the store: its secret's hash, and what presenting it establishes (or why it cannot). */
interface KeyEntry {
  secretHash: string;
  outcome: Authenticated | { refused: 'inactive-bot'; botId: string } | { refused: 'no-owner' };
  expiresAt: number;
}

interface KeyRow {
  account_id: string;
  owner_id: string;
  secret_hash: string;
  role: Role | null;
  active: number | boolean | null;
}

function verify(entry: KeyEntry | undefined, secret: string): Authenticated {
  const presented = hashSecret(secret);
  if (!entry || !sameDigest(presented, entry.secretHash)) throw errors.invalidToken();
  const { outcome } = entry;
  if ('refused' in outcome) throw outcome.refused === 'inactive-bot' ? errors.inactiveBot({ botId: outcome.botId }) : errors.invalidToken();
  return outcome;
}

function outcomeOf(keyId: string, row: KeyRow): KeyEntry['outcome'] {
  let principal: Principal;
  if (row.role !== null && row.role !== undefined) principal = { id: row.owner_id, kind: 'user', role: row.role };
  else if (row.active !== null && row.active !== undefined) {
    if (!toBool(row.active as SqlBool)) return { refused: 'inactive-bot', botId: row.owner_id };
    principal = { id: row.owner_id, kind: 'bot', role: 'developer' };
  } else return { refused: 'no-owner' }; // the owner no longer exists
  return { scope: { accountId: row.account_id }, principal, keyId };
}

export class KeyAuthenticator implements Authenticator {
  private readonly cache = new Map<string, KeyEntry>();
  /** The key with its owner's role or bot state: compiled once, bound per lookup. */
  private readonly lookupSql: string;

  constructor(
    private readonly across: CrossAccountReader,
    private readonly now: () => number = Date.now,
  ) {
    this.lookupSql = across.reader
      .selectFrom('api_keys as k')
      .leftJoin('users as u', 'u.id', 'k.owner_id')
      .leftJoin('bot_users as b', 'b.id', 'k.owner_id')
      .select(['k.account_id', 'k.owner_id', 'k.secret_hash', 'u.role', 'b.active'])
      .where('k.id', '=', '')
      .compile().sql;
  }

  /** Drops cached keys: one key, or all of them (after a change to users or bots). */
  invalidate(keyId?: string): void {
    if (keyId) this.cache.delete(keyId);
    else this.cache.clear();
  }

  /**
   * The caller of a request. Synchronous when the key is cached (the common case: no promise,
   * no database round trip), a promise when the key must be read from the store.
   */
  authenticate(header: string | undefined): Authenticated | Promise<Authenticated> {
    const { keyId, secret } = parseAuthorization(header);
    const cached = this.cache.get(keyId);
    if (cached && cached.expiresAt > this.now()) return verify(cached, secret);
    return this.lookup(keyId).then((entry) => verify(entry, secret));
  }

  private async lookup(keyId: string): Promise<KeyEntry | undefined> {
    const now = this.now();
    const { rows } = await readAcrossAccounts(this.across, (reader) => reader.executeQuery<KeyRow>(CompiledQuery.raw(this.lookupSql, [keyId])));
    const row = rows[0];
    if (!row) {
      this.cache.delete(keyId);
      return undefined;
    }
    const entry: KeyEntry = { secretHash: row.secret_hash.toLowerCase(), outcome: outcomeOf(keyId, row), expiresAt: now + CACHE_TTL_MS };
    if (this.cache.size >= CACHE_MAX_ENTRIES) this.cache.clear();
    this.cache.set(keyId, entry);
    return entry;
  }
}
