// What the SSH listener asks of SSH certificate authorities when a client signs in with a user
// certificate: which account's CA signed it (found by the CA's public key, across accounts, before
// the account is known), and whether the CAs of live sessions still exist.
import { readAcrossAccounts, type CrossAccountReader } from '../../db/cross-account.js';
import { blobAlgorithm } from '../../lib/ssh/keys.js';

/** The CA whose public key is this wire blob, or undefined. Its line is stored as `<type> <base64>`, maybe with a comment. */
export async function sshCertificateAuthorityForKey(across: CrossAccountReader, blob: Buffer): Promise<{ id: string; accountId: string } | undefined> {
  const algorithm = blobAlgorithm(blob);
  if (algorithm === undefined) return undefined;
  const line = `${algorithm} ${blob.toString('base64')}`;
  const row = await readAcrossAccounts(across, (reader) =>
    reader
      .selectFrom('ssh_certificate_authorities')
      .select(['id', 'account_id'])
      .where((eb) => eb.or([eb('public_key', '=', line), eb('public_key', 'like', `${line} %`)]))
      .orderBy('id')
      .executeTakeFirst(),
  );
  return row && { id: row.id, accountId: row.account_id };
}

/** Of `ids` (sshca_…), the CAs that still exist: a deleted CA ends the sessions its certificates opened. */
export async function existingSshCertificateAuthorityIds(across: CrossAccountReader, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await readAcrossAccounts(across, (reader) => reader.selectFrom('ssh_certificate_authorities').select('id').where('id', 'in', ids).execute());
  return new Set(rows.map((r) => r.id));
}
