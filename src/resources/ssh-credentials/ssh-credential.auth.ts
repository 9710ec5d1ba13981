// What the SSH listener asks of SSH credentials: which credentials a key presented in a login
// belongs to, whether those of live sessions may still be used, and their ACL. A key is looked up
// before its account is known (by its fingerprint, across accounts, since two accounts may register
// the same key), through the CrossAccountReader its caller hands it, as credential.token.ts finds an
// agent's token. The owner rule is the credentials' (ownerUsable): a user, or an active bot.
import { createHash } from 'node:crypto';
import { readAcrossAccounts, type CrossAccountReader } from '../../db/cross-account.js';
import { ownerUsable, usableCredentialIds, type AgentCredential } from '../credentials/credential.token.js';
import { canonicalSshKeyBlob } from './ssh-credential-key.js';

/** OpenSSH's fingerprint of a key's wire blob: `SHA256:` and the unpadded base64 of its SHA-256. */
export function sshKeyFingerprint(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/**
 * Every SSH credential, of any account, registered for the key whose wire blob a login presented,
 * whose owner may still use it (a user, or an active bot: the rule of authenticateAgentToken);
 * oldest first. The blob is brought to the form credentials store (an RSA key's integers without
 * leading zeros) before its fingerprint is taken; a blob that is no key a credential could hold
 * has none.
 */
export async function sshCredentialsForKey(across: CrossAccountReader, blob: Buffer): Promise<AgentCredential[]> {
  const canonical = canonicalSshKeyBlob(blob);
  if (canonical === undefined) return [];
  const rows = await readAcrossAccounts(across, (reader) =>
    reader
      .selectFrom('ssh_credentials as c')
      .leftJoin('users as u', 'u.id', 'c.owner_id')
      .leftJoin('bot_users as b', 'b.id', 'c.owner_id')
      .select(['c.id', 'c.account_id', 'c.owner_id', 'c.acl', 'u.role', 'b.active'])
      .where('c.key_fingerprint', '=', sshKeyFingerprint(canonical))
      .orderBy('c.id')
      .execute(),
  );
  return rows.filter(ownerUsable).map((r) => ({ id: r.id, accountId: r.account_id, ownerId: r.owner_id, acl: JSON.parse(r.acl) as string[] }));
}

/**
 * Of `ids` (sshcr_…), the SSH credentials that still let a session in: they exist and their owner
 * is a user or an active bot. Live SSH sessions are checked against it, as agents' are against
 * usableCredentialIds, so that a credential gone any way (deleted, with its owner, on another
 * instance) or a bot made inactive ends its sessions.
 */
export function usableSshCredentialIds(across: CrossAccountReader, ids: readonly string[]): Promise<Set<string>> {
  return usableCredentialIds(across, ids, 'ssh_credentials');
}

/** The ACL (stored form, parsed) of an SSH credential, or undefined when it is gone: read at each bind, as a credential's is. */
export async function sshCredentialAcl(across: CrossAccountReader, id: string): Promise<string[] | undefined> {
  const row = await readAcrossAccounts(across, (reader) => reader.selectFrom('ssh_credentials').select('acl').where('id', '=', id).executeTakeFirst());
  return row === undefined ? undefined : (JSON.parse(row.acl) as string[]);
}
