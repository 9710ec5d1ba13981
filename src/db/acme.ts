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

/**
 * The delegated zone of the agent ingress domains among `candidates` (the names a queried name is
 * at or under), and the account it is answered for. The outermost ingress decides the account, as
 * its domain and every name under it are that account's; the zone is that account's innermost
 * ingress (an account may nest its own). Another account's ingress inside it, which a store
 * written before that rule may hold, is no zone: its names are answered from the outer one.
 */
export async function delegatedZone(store: Store, candidates: readonly string[]): Promise<{ domain: string; accountId: string } | undefined> {
  if (candidates.length === 0) return undefined;
  const rows = await store.reader.selectFrom('agent_ingresses').select(['domain', 'account_id']).where('domain', 'in', candidates).execute();
  if (rows.length === 0) return undefined;
  rows.sort((a, b) => a.domain.length - b.domain.length);
  const accountId = rows[0]!.account_id;
  const own = rows.filter((row) => row.account_id === accountId);
  return { domain: own[own.length - 1]!.domain, accountId };
}

/** A resource under automatic certificate management, with its certificate's expiry: for operators' reports. */
export interface ManagedCertificateRow {
  account_id: string;
  id: string;
  domain: string;
  certificate_id: string | null;
  not_after: string | null;
  cert_renews_at: string | null;
  cert_job_started_at: string | null;
  cert_job_error_code: string | null;
  cert_job_msg: string | null;
  cert_job_retries_at: string | null;
}

/** Every managed reserved domain and agent ingress (of one account, when given), by domain. */
export async function managedCertificateRows(store: Store, accountId?: string): Promise<ManagedCertificateRow[]> {
  const rows: ManagedCertificateRow[] = [];
  for (const table of ['reserved_domains', 'agent_ingresses'] as const) {
    let query = store.reader
      .selectFrom(table)
      .leftJoin('tls_certificates', 'tls_certificates.id', `${table}.certificate_id`)
      .select([
        `${table}.account_id`,
        `${table}.id`,
        `${table}.domain`,
        `${table}.certificate_id`,
        'tls_certificates.not_after',
        `${table}.cert_renews_at`,
        `${table}.cert_job_started_at`,
        `${table}.cert_job_error_code`,
        `${table}.cert_job_msg`,
        `${table}.cert_job_retries_at`,
      ])
      .where(`${table}.cert_authority`, 'is not', null);
    if (accountId !== undefined) query = query.where(`${table}.account_id`, '=', accountId);
    rows.push(...((await query.execute()) as ManagedCertificateRow[]));
  }
  return rows.sort((a, b) => (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0));
}
