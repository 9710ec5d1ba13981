// The authtoken of a credential: `<credential id without "cr_">_<secret>`, as an API key's token is
// made. Only SHA-256 of the secret is stored; an agent's token is checked against it in constant time.
// A token is looked up by its id before its account is known: a read across accounts, through the
// CrossAccountReader its caller (the agent listener) hands it.
import { CompiledQuery, type Kysely, type SqlBool } from 'kysely';
import { newId, randomBase62 } from '../../core/ids.js';
import { readAcrossAccounts, type CrossAccountReader } from '../../db/cross-account.js';
import { toBool, type Database } from '../../db/schema.js';
import { hashSecret, sameDigest } from '../api-keys/api-key.token.js';

const SECRET_LENGTH = 40;
const TOKEN = /^([0-9A-Za-z]{27})_([0-9A-Za-z]{32,128})$/;
/** Compared with when no credential has the token's id, so that a miss takes as long as a wrong secret. */
const NO_DIGEST = '0'.repeat(64);

/** A new credential id, its token (shown once) and the hash that is stored instead. */
export function newCredentialMaterial(): { id: string; token: string; secret_hash: string } {
  const id = newId('cr');
  const secret = randomBase62(SECRET_LENGTH);
  return { id, token: `${id.slice('cr_'.length)}_${secret}`, secret_hash: hashSecret(secret) };
}

/** What an agent's valid token establishes: whose it is, and the rules for what it may bind. */
export interface AgentCredential {
  id: string;
  accountId: string;
  ownerId: string;
  /** The ACL in its stored form; empty (or `*`) allows every bind. */
  acl: string[];
}

interface CredentialRow {
  account_id: string;
  owner_id: string;
  acl: string;
  secret_hash: string;
  role: string | null;
  active: number | boolean | null;
}

/** The credential, its owner's role and its bot's state: compiled once per store's reader, bound per lookup. */
const lookupSql = new WeakMap<Kysely<Database>, string>();

function lookupOf(reader: Kysely<Database>): string {
  let compiled = lookupSql.get(reader);
  if (compiled === undefined) {
    compiled = reader
      .selectFrom('credentials as c')
      .leftJoin('users as u', 'u.id', 'c.owner_id')
      .leftJoin('bot_users as b', 'b.id', 'c.owner_id')
      .select(['c.account_id', 'c.owner_id', 'c.acl', 'c.secret_hash', 'u.role', 'b.active'])
      .where('c.id', '=', '')
      .compile().sql;
    lookupSql.set(reader, compiled);
  }
  return compiled;
}

/**
 * The credential an agent's authtoken belongs to, or undefined for a token that is malformed,
 * unknown, deleted, or whose owner is gone or is an inactive bot (as an API key of that bot is
 * refused). The secret is compared with the stored hash in constant time.
 */
/** Whether `token` has a credential token's form at all (`<27 base62>_<secret>`): ngrok tells the two failures apart. */
export function looksLikeAgentToken(token: string): boolean {
  return TOKEN.test(token.trim());
}

/** What ownerUsable reads of a credential's owner: its role when a user, its `active` when a bot (left joins, so null when not). */
export interface CredentialOwnerState {
  role: string | null;
  active: number | boolean | null;
}

/** A credential's owner lets its agents in: a user (any role), or a bot that is active (SSH credentials too). */
export function ownerUsable(owner: CredentialOwnerState): boolean {
  return owner.role !== null || (owner.active !== null && toBool(owner.active as SqlBool));
}

export async function authenticateAgentToken(across: CrossAccountReader, token: string): Promise<AgentCredential | undefined> {
  const match = TOKEN.exec(token.trim());
  if (!match) return undefined;
  const id = `cr_${match[1]}`;
  const { rows } = await readAcrossAccounts(across, (reader) => reader.executeQuery<CredentialRow>(CompiledQuery.raw(lookupOf(reader), [id])));
  const row = rows[0];
  const secretMatches = sameDigest(hashSecret(match[2]!), row ? row.secret_hash.toLowerCase() : NO_DIGEST);
  if (!row || !secretMatches) return undefined;
  if (!ownerUsable(row)) return undefined;
  return { id, accountId: row.account_id, ownerId: row.owner_id, acl: JSON.parse(row.acl) as string[] };
}

/**
 * Of `ids`, the credentials (or, with `table`, the SSH credentials) that still let an agent in: they exist and their owner is a user or an
 * active bot. Live sessions are checked against it, so that a credential gone any way (deleted,
 * with its owner, on another instance) or a bot made inactive ends its sessions.
 */
export async function usableCredentialIds(
  across: CrossAccountReader,
  ids: readonly string[],
  table: 'credentials' | 'ssh_credentials' = 'credentials',
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await readAcrossAccounts(across, (reader) =>
    reader
      .selectFrom(`${table} as c` as 'credentials as c')
      .leftJoin('users as u', 'u.id', 'c.owner_id')
      .leftJoin('bot_users as b', 'b.id', 'c.owner_id')
      .select(['c.id', 'u.role', 'b.active'])
      .where('c.id', 'in', ids)
      .execute(),
  );
  return new Set(rows.filter(ownerUsable).map((r) => r.id));
}
