// The rules reserved domains and agent ingresses share: a name as typed becomes its stored form
// or a 400 naming the problem; names owned by the service are told apart from the users'; and
// random CNAME targets are made in the configured zones. Names are unique across accounts: the
// checks read the other accounts' names (through the CrossAccountReader the two kinds are handed)
// in the writing transaction, and reveal nothing of them but that they exist.
import { randomInt } from 'node:crypto';
import type { DomainSettings } from '../../config.js';
import type { ApiError } from '../../core/errors.js';
import { readAcrossAccountsIn, type CrossAccountReader } from '../../db/cross-account.js';
import type { ScopedDb } from '../../db/scoped.js';
import { isUnder, parseDomainName, type NameProblem } from '../../lib/dns/names.js';
import { reservedDomainErrors } from './reserved-domain.errors.js';

function nameError(value: string, p: NameProblem): ApiError {
  switch (p.problem) {
    case 'empty':
      return reservedDomainErrors.domainEmpty({ field: 'domain' });
    case 'character':
      return reservedDomainErrors.domainCharacter({ value, character: p.character });
    case 'empty-label':
      return reservedDomainErrors.domainEmptyLabel({ value });
    case 'label-start':
      return reservedDomainErrors.domainLabelStart({ value, label: p.label });
    case 'label-end':
      return reservedDomainErrors.domainLabelEnd({ value, label: p.label });
    case 'double-hyphen':
      return reservedDomainErrors.domainDoubleHyphen({ value, label: p.label });
    case 'punycode':
      return reservedDomainErrors.domainPunycode({ value, label: p.label });
    case 'label-length':
      return reservedDomainErrors.domainLabelLength({ value, label: p.label, length: p.length });
    case 'name-length':
      return reservedDomainErrors.domainNameLength({ length: p.length });
    case 'single-label':
      return reservedDomainErrors.domainSingleLabel({ value });
    case 'numeric-tld':
      return reservedDomainErrors.domainNumericTld({ value, tld: p.tld });
    case 'wildcard-not-allowed':
      return reservedDomainErrors.wildcardNotAllowed({ value });
    case 'wildcard-position':
      return reservedDomainErrors.wildcardPosition({ value });
    case 'wildcard-label':
      return reservedDomainErrors.wildcardLabel({ value, label: p.label });
    case 'wildcard-suffix':
      return reservedDomainErrors.wildcardSuffix({ value });
  }
}

/** The stored form of a domain a request names (lower case, A-labels), or its 400. */
export function readDomain(value: string, options: { wildcard: boolean }): { name: string; wildcard: boolean } {
  const parsed = parseDomainName(value, options);
  if (!parsed.ok) throw nameError(value, parsed);
  return parsed;
}

/** The names under which nothing may be reserved: the generated-target zones. */
const zonesOf = (settings: DomainSettings) => [settings.cnameZone, settings.acmeChallengeZone];

/**
 * The service-owned base that `name` is strictly under (its certificate serves it), or
 * undefined for a name of the user's own. A service base itself, a wildcard over one, and names
 * in the target zones are refused.
 */
export function serviceBaseOf(settings: DomainSettings, name: string): string | undefined {
  const bare = name.startsWith('*.') ? name.slice(2) : name;
  for (const zone of zonesOf(settings)) if (isUnder(bare, zone)) throw reservedDomainErrors.domainReserved({ value: name });
  for (const base of settings.serviceDomains) {
    if (bare === base) throw reservedDomainErrors.domainReserved({ value: name });
    if (isUnder(bare, base)) return base;
  }
  return undefined;
}

/** The service-owned base domain or zone `name` is or is under, if any. */
export function serviceOwner(settings: DomainSettings, name: string): string | undefined {
  return [...settings.serviceDomains, ...zonesOf(settings)].find((base) => isUnder(name, base));
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const randomLabel = (length: number) => Array.from({ length }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');

/** `<17 random>.<17 random>.<zone>`: a CNAME target no one can guess or claim. */
export function randomTarget(zone: string): string {
  return `${randomLabel(17)}.${randomLabel(17)}.${zone}`;
}

/** The labels in reverse order: `app.example.com` → `com.example.app`, so names under a base sort together. */
export function reversedName(name: string): string {
  return name.split('.').reverse().join('.');
}

/** The names `name` is strictly under, but its top-level domain: `a.b.example.com` → `b.example.com`, `example.com`. */
export function parentsOf(name: string): string[] {
  const labels = name.split('.');
  return labels.slice(1, -1).map((_, i) => labels.slice(i + 1).join('.'));
}

/** The `domain_reversed` range of exactly the names strictly under `name` ('/' is the character after '.'). */
export function reversedRangeUnder(name: string): { from: string; to: string } {
  const reversed = reversedName(name);
  return { from: `${reversed}.`, to: `${reversed}/` };
}

/**
 * For names unique across all accounts: the first value of `column` that another account holds,
 * equal to one of `equal` or within `[from, to)`; undefined when none does. Nothing else of another
 * account's row leaves this function. Runs in `db`'s transaction, under its lock across accounts.
 */
export async function heldByOthers(
  across: CrossAccountReader,
  db: ScopedDb,
  table: 'reserved_domains' | 'agent_ingresses',
  column: 'domain' | 'domain_reversed',
  match: { equal: readonly string[] } | { from: string; to: string },
): Promise<string | undefined> {
  if ('equal' in match && match.equal.length === 0) return undefined;
  const row = await readAcrossAccountsIn(across, db, (executor) => {
    let query = executor.selectFrom(table).select(`${column} as value`).where('account_id', '<>', db.scope.accountId);
    query = 'equal' in match ? query.where(column, 'in', match.equal) : query.where(column, '>=', match.from).where(column, '<', match.to);
    return query.orderBy(column).limit(1).executeTakeFirst();
  });
  return row?.value;
}

/**
 * Makes this transaction the only one, across accounts, reserving a domain or creating an agent
 * ingress, until it ends: the checks between the two kinds read both tables. Both locks, always in
 * this order, so that two writers never wait for each other in a circle, and an instance of an
 * earlier version (which takes only its own table's) still waits for this one.
 */
async function serializeNames(db: ScopedDb): Promise<void> {
  await db.serializeAcrossAccounts('reserved_domains');
  await db.serializeAcrossAccounts('agent_ingresses');
}

/**
 * A name unique across all accounts is free: under the lock across accounts for domain names (held
 * to the end of the transaction, so that the checks that follow hold too), not this account's
 * (`mine`, naming the holder) and no other account's (`other`, naming nothing of it).
 */
export async function checkNameFree(
  across: CrossAccountReader,
  db: ScopedDb,
  table: 'reserved_domains' | 'agent_ingresses',
  name: string,
  taken: { mine(id: string): ApiError; other(): ApiError },
): Promise<void> {
  await serializeNames(db);
  const [mine] = await db.select(table, { domain: name });
  if (mine) throw taken.mine(mine.id);
  if (await heldByOthers(across, db, table, 'domain', { equal: [name] })) throw taken.other();
}

// An agent ingress domain, and every name under it, belongs to the ingress's account (the service
// answers DNS for all of it on that account's behalf): no other account reserves or makes an
// ingress of a name there, and no ingress goes over names another account holds. An account's own
// names may nest. Both checks run after checkNameFree, under its lock.

/** A reserved domain (for a wildcard, its base) is not at or under another account's agent ingress domain, nor (a wildcard) over one. */
export async function checkOutsideOthersIngresses(across: CrossAccountReader, db: ScopedDb, name: string): Promise<void> {
  const wildcard = name.startsWith('*.');
  const base = wildcard ? name.slice(2) : name;
  const overlaps =
    (await heldByOthers(across, db, 'agent_ingresses', 'domain', { equal: [base, ...parentsOf(base)] })) ??
    (wildcard ? await heldByOthers(across, db, 'agent_ingresses', 'domain_reversed', reversedRangeUnder(base)) : undefined);
  if (overlaps !== undefined) throw reservedDomainErrors.domainInOthersIngress({ value: name });
}

/** An agent ingress domain is under no other account's ingress or wildcard, and has no other account's names at or under it. */
export async function checkIngressOwnsItsNames(across: CrossAccountReader, db: ScopedDb, domain: string): Promise<void> {
  const parents = parentsOf(domain);
  const over =
    (await heldByOthers(across, db, 'agent_ingresses', 'domain', { equal: parents })) ??
    (await heldByOthers(across, db, 'reserved_domains', 'domain', { equal: parents.map((parent) => `*.${parent}`) }));
  if (over !== undefined) throw reservedDomainErrors.ingressUnderOthers({ value: domain });
  const under =
    (await heldByOthers(across, db, 'reserved_domains', 'domain', { equal: [domain] })) ??
    (await heldByOthers(across, db, 'reserved_domains', 'domain_reversed', reversedRangeUnder(domain))) ??
    (await heldByOthers(across, db, 'agent_ingresses', 'domain_reversed', reversedRangeUnder(domain)));
  if (under !== undefined) throw reservedDomainErrors.ingressOverOthers({ value: domain });
}
