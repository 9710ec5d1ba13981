// Bearer authentication. A token is `<key id without "ak_">_<secret>`; only SHA-256 of the
// secret is stored, compared in constant time. Verified keys are cached for at most 2 seconds,
// so that a key deleted on another instance stops working within 2 s; the instance that
// deletes a key drops it from its cache at once.
import { createHash, timingSafeEqual } from 'node:crypto';
import { errors } from '../core/errors.js';
import type { Principal } from '../core/context.js';
import { toBool, type Role } from '../db/schema.js';
import { read, type Scope, type Store } from '../db/store.js';

const TOKEN = /^([0-9A-Za-z]{27})_([0-9A-Za-z]{32,128})$/;
const KEY_ID = /^ak_[0-9A-Za-z]{27}$/;
const CACHE_TTL_MS = 2000;
const CACHE_MAX_ENTRIES = 10_000;

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export interface Authenticated {
  scope: Scope;
  principal: Principal;
  keyId: string;
}

function parseAuthorization(header: string | undefined): { keyId: string; secret: string } {
  if (header === undefined || header.trim() === '') throw errors.missingAuthorization();
  const space = header.indexOf(' ');
  const scheme = space === -1 ? header : header.slice(0, space);
  if (scheme.toLowerCase() !== 'bearer') throw errors.unsupportedAuthScheme({ scheme: scheme.slice(0, 20) });
  const token = header.slice(space + 1).trim();
  const match = TOKEN.exec(token);
  if (!match) throw KEY_ID.test(token) ? errors.tokenIsKeyId() : errors.malformedToken();
  return { keyId: `ak_${match[1]}`, secret: match[2]! };
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

interface KeyEntry {
  keyId: string;
  accountId: string;
  ownerId: string;
  secretHash: Buffer;
  role: Role | null;
  botActive: boolean | null;
  expiresAt: number;
}

export class Authenticator {
  private readonly cache = new Map<string, KeyEntry>();

  constructor(private readonly store: Store, private readonly now: () => number = Date.now) {}

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
    const row = await read(() =>
      this.store.db
        .selectFrom('api_keys as k')
        .leftJoin('users as u', 'u.id', 'k.owner_id')
        .leftJoin('bot_users as b', 'b.id', 'k.owner_id')
        .select(['k.id', 'k.account_id', 'k.owner_id', 'k.secret_hash', 'u.role', 'b.active'])
        .where('k.id', '=', keyId)
        .executeTakeFirst(),
    );
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
      botActive: row.active === null || row.active === undefined ? null : toBool(row.active),
      expiresAt: now + CACHE_TTL_MS,
    };
    if (this.cache.size >= CACHE_MAX_ENTRIES) this.cache.clear();
    this.cache.set(keyId, entry);
    return entry;
  }
}
