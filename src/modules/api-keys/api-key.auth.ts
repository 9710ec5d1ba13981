// Bearer authentication against the API keys of the store. Verified keys are cached for at most
// 2 seconds, so that a key deleted on another instance stops working within 2 s; the instance
// that changes a key, a user or a bot drops it from its cache at once. The secret is compared
// with the stored hash in constant time on every request, cached or not.
import { timingSafeEqual } from 'node:crypto';
import { CompiledQuery, type SqlBool } from 'kysely';
import type { Authenticated, Authenticator, Principal, Role } from '../../core/context.js';
import { errors } from '../../core/errors.js';
import { toBool } from '../../db/schema.js';
import { read, type Store } from '../../db/store.js';
import { hashSecret, parseAuthorization } from './api-key.token.js';

const CACHE_TTL_MS = 2000;
const CACHE_MAX_ENTRIES = 10_000;

interface KeyEntry {
  keyId: string;
  accountId: string;
  ownerId: string;
  secretHash: Buffer;
  role: Role | null;
  botActive: boolean | null;
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
  const presented = Buffer.from(hashSecret(secret), 'hex');
  if (!entry || !timingSafeEqual(presented, entry.secretHash)) throw errors.invalidToken();
  let principal: Principal;
  if (entry.role !== null) principal = { id: entry.ownerId, kind: 'user', role: entry.role };
  else if (entry.botActive !== null) {
    if (!entry.botActive) throw errors.inactiveBot({ botId: entry.ownerId });
    principal = { id: entry.ownerId, kind: 'bot', role: 'developer' };
  } else throw errors.invalidToken(); // the owner no longer exists
  return { scope: { accountId: entry.accountId }, principal, keyId: entry.keyId };
}

export class KeyAuthenticator implements Authenticator {
  private readonly cache = new Map<string, KeyEntry>();
  /** The key with its owner's role or bot state: compiled once, bound per lookup. */
  private readonly lookupSql: string;

  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {
    this.lookupSql = store.reader
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
    const { rows } = await read(() => this.store.reader.executeQuery<KeyRow>(CompiledQuery.raw(this.lookupSql, [keyId])));
    const row = rows[0];
    if (!row) {
      this.cache.delete(keyId);
      return undefined;
    }
    const entry: KeyEntry = {
      keyId,
      accountId: row.account_id,
      ownerId: row.owner_id,
      secretHash: Buffer.from(row.secret_hash, 'hex'),
      role: row.role ?? null,
      botActive: row.active === null || row.active === undefined ? null : toBool(row.active as SqlBool),
      expiresAt: now + CACHE_TTL_MS,
    };
    if (this.cache.size >= CACHE_MAX_ENTRIES) this.cache.clear();
    this.cache.set(keyId, entry);
    return entry;
  }
}
