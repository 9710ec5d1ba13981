// The service's own ACME state, across accounts: the ACME account of each directory, and the
// challenge answers being served. Challenge answers live in the store, not in one process, so that
// whichever instance runs the HTTP-01 responder or the DNS server answers the CA, and a job on
// another instance can publish them.
import { newId } from '../core/ids.js';
import type { AcmeAccountsTable, AcmeChallengesTable } from './schema.js';
import { withTx, type Store } from './store.js';

export type AcmeAccount = AcmeAccountsTable;
export type ChallengeType = AcmeChallengesTable['type'];

/** The directory's account, if one was made. */
export async function findAcmeAccount(store: Store, directoryUrl: string): Promise<AcmeAccount | undefined> {
  return store.reader.selectFrom('acme_accounts').selectAll().where('directory_url', '=', directoryUrl).executeTakeFirst();
}

/**
 * Keeps `candidate` as the directory's account unless another runner stored one first; returns
 * the one kept. Every runner then uses the same key: one account per directory.
 */
export async function keepAcmeAccount(store: Store, candidate: AcmeAccount): Promise<AcmeAccount> {
  await withTx(store, (trx) =>
    trx
      .insertInto('acme_accounts')
      .values(candidate)
      .onConflict((oc) => oc.column('directory_url').doNothing())
      .execute(),
  );
  return (await findAcmeAccount(store, candidate.directory_url))!;
}

/** Records the account's URL at the CA once it is registered. */
export async function setAcmeAccountUrl(store: Store, directoryUrl: string, accountUrl: string): Promise<void> {
  await withTx(store, (trx) => trx.updateTable('acme_accounts').set({ account_url: accountUrl }).where('directory_url', '=', directoryUrl).execute());
}

/** Serves `value` for a challenge until `expiresAt` (or until withdrawn); returns its id. */
export async function publishChallenge(
  store: Store,
  challenge: { type: ChallengeType; name: string; value: string; subjectId: string; expiresAt: Date },
): Promise<string> {
  const id = newId('chal');
  await withTx(store, (trx) =>
    trx
      .insertInto('acme_challenges')
      .values({
        id,
        type: challenge.type,
        name: challenge.name,
        value: challenge.value,
        subject_id: challenge.subjectId,
        expires_at: challenge.expiresAt.toISOString(),
      })
      .execute(),
  );
  return id;
}

/** Stops serving the challenges with these ids, and any that expired meanwhile. */
export async function withdrawChallenges(store: Store, ids: readonly string[], now: Date): Promise<void> {
  await withTx(store, (trx) =>
    trx
      .deleteFrom('acme_challenges')
      .where((eb) => eb.or([...(ids.length > 0 ? [eb('id', 'in', ids)] : []), eb('expires_at', '<=', now.toISOString())]))
      .execute(),
  );
}

/**
 * The values served for a challenge name now (several TXT records may share one DNS name); with
 * `accountId`, only those published for a reserved domain or agent ingress of that account.
 */
export async function challengeValues(store: Store, type: ChallengeType, name: string, now: Date, accountId?: string): Promise<string[]> {
  let query = store.reader
    .selectFrom('acme_challenges')
    .select('value')
    .where('type', '=', type)
    .where('name', '=', name)
    .where('expires_at', '>', now.toISOString());
  if (accountId !== undefined) {
    query = query.where((eb) =>
      eb.or([
        eb('subject_id', 'in', eb.selectFrom('agent_ingresses').select('id').where('account_id', '=', accountId)),
        eb('subject_id', 'in', eb.selectFrom('reserved_domains').select('id').where('account_id', '=', accountId)),
      ]),
    );
  }
  const rows = await query.orderBy('id').execute();
  return rows.map((r) => r.value);
}
