// The built-in authoritative DNS server (EDGEPLANE_DNS_LISTEN) for the zones delegated to the
// service: the ACME challenge zone (wildcard domains CNAME their `_acme-challenge` name into it),
// the service-owned base domains, and every agent ingress domain (delegated by NS records), on
// behalf of the account of the ingress: no other account's names inside it are answered. It
// serves the DNS-01 answers certificate jobs publish in the store, so any instance answers for a
// job run on another, and the NS records of each zone's apex. The wire protocol is
// src/lib/dns/server.ts; what is in the zones is decided here. Which ingress a name is under is a
// read across accounts: the caller hands the store as the CrossAccountReader.
import type { Logger } from 'pino';
import type { DomainSettings } from '../config.js';
import { challengeValues } from '../db/acme.js';
import { readAcrossAccounts, type CrossAccountReader } from '../db/cross-account.js';
import type { Store } from '../db/store.js';
import { longestZone, startDnsServer, type DnsRecord, type RunningDnsServer } from '../lib/dns/server.js';

/** TXT answers change within seconds of a challenge; resolvers must not keep them long. */
const CHALLENGE_TTL_S = 10;

/**
 * The delegated zone of the agent ingress domains among `candidates` (the names a queried name is
 * at or under), and the account it is answered for. The outermost ingress decides the account, as
 * its domain and every name under it are that account's; the zone is that account's innermost
 * ingress (an account may nest its own). Another account's ingress inside it, which a store
 * written before that rule may hold, is no zone: its names are answered from the outer one.
 */
async function delegatedZone(across: CrossAccountReader, candidates: readonly string[]): Promise<{ domain: string; accountId: string } | undefined> {
  if (candidates.length === 0) return undefined;
  const rows = await readAcrossAccounts(across, (reader) =>
    reader.selectFrom('agent_ingresses').select(['domain', 'account_id']).where('domain', 'in', candidates).execute(),
  );
  if (rows.length === 0) return undefined;
  rows.sort((a, b) => a.domain.length - b.domain.length);
  const accountId = rows[0]!.account_id;
  const own = rows.filter((row) => row.account_id === accountId);
  return { domain: own[own.length - 1]!.domain, accountId };
}

export async function startAuthoritativeDns(options: {
  store: Store;
  host: string;
  port: number;
  domains: DomainSettings;
  log: Logger;
}): Promise<RunningDnsServer> {
  const { store, domains, log } = options;
  const nameservers = domains.nameservers.map((n) => n.replace(/\.$/, ''));
  const ownZones = [domains.acmeChallengeZone, ...domains.serviceDomains];

  /** The zone a name is in (the longest of the service's own, or an agent ingress domain), and for the latter the account it answers for. */
  async function placeOf(name: string): Promise<{ zone: string; accountId?: string } | undefined> {
    const own = longestZone(name, ownZones);
    if (own) return { zone: own };
    const labels = name.split('.');
    const candidates = labels.slice(0, -1).map((_, i) => labels.slice(i).join('.'));
    const delegated = await delegatedZone(store, candidates);
    return delegated && { zone: delegated.domain, accountId: delegated.accountId };
  }

  const zoneOf = async (name: string) => (await placeOf(name))?.zone;

  async function lookup(name: string, type: DnsRecord['type']): Promise<DnsRecord[]> {
    if (type === 'TXT') {
      // In an agent ingress domain, only the challenges of its account's own certificates: another
      // account's nested ingress must not prove names there.
      const place = await placeOf(name);
      if (!place) return [];
      return (await challengeValues(store, 'dns-01', name, new Date(), place.accountId)).map((data) => ({ type, data, ttl: CHALLENGE_TTL_S }));
    }
    if (type === 'NS' && (await zoneOf(name)) === name) return nameservers.map((data) => ({ type, data }));
    return [];
  }

  return startDnsServer({ host: options.host, port: options.port, zoneOf, lookup, primaryNameserver: nameservers[0] ?? 'localhost', log });
}
