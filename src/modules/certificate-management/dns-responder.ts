// The built-in authoritative DNS server (EDGEPLANE_DNS_LISTEN) for the zones delegated to the
// service: the ACME challenge zone (wildcard domains CNAME their `_acme-challenge` name into it),
// the service-owned base domains, and every agent ingress domain (delegated by NS records), on
// behalf of the account of the ingress: no other account's names inside it are answered. It
// serves the DNS-01 answers certificate jobs publish in the store, so any instance answers for a
// job run on another, and the NS records of each zone's apex. The wire protocol is
// src/lib/dns/server.ts; what is in the zones is decided here.
import type { Logger } from 'pino';
import type { DomainSettings } from '../../config.js';
import { challengeValues, delegatedZone } from '../../db/acme.js';
import type { Store } from '../../db/store.js';
import { longestZone, startDnsServer, type DnsRecord, type RunningDnsServer } from '../../lib/dns/server.js';

/** TXT answers change within seconds of a challenge; resolvers must not keep them long. */
const CHALLENGE_TTL_S = 10;

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
