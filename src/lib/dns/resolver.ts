// DNS lookups through a configurable resolver: the system's, or one given as an IP address (and
// port), so that tests and odd deployments can point edgeplane at their own. It is for checking
// what a domain's owner has set up (a CNAME to edgeplane, a delegation by NS, a challenge's TXT),
// so "no such record" is an empty answer, and only a failure to get an answer is an error.
//
// node:dns's Resolver (c-ares) does the work. Found by probing (c-ares 1.34, Node 20): it queries
// a literal wildcard name such as `*.example.com` as it is, so the CNAME set on a wildcard owner
// can be looked up directly; and it caches no answers across lookups (a changed record is seen at
// the next lookup).
import { isIP } from 'node:net';
import { promises as dns } from 'node:dns';

/** A lookup that got no answer: `code` is c-ares's (ETIMEOUT, ESERVFAIL, EREFUSED, ECONNREFUSED, ...). */
export class DnsLookupError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'DnsLookupError';
  }
}

export interface DnsResolverOptions {
  /** 'host:port', 'host' (port 53) or '[ipv6]:port', the host an IP address; undefined: the system's resolvers. */
  server?: string;
  /** Per try; default 5000. */
  timeoutMs?: number;
  /** Default 2. */
  tries?: number;
}

/** Lookups of one record type; names come back lower case, without the trailing dot. */
export interface DnsLookups {
  /** The CNAME targets of `name`; [] when it has none (NODATA or NXDOMAIN). */
  cname(name: string): Promise<string[]>;
  /** The nameservers of `name`; [] when it has none. */
  ns(name: string): Promise<string[]>;
  /** The TXT records of `name`, each one's strings joined; [] when it has none. */
  txt(name: string): Promise<string[]>;
}

const DEFAULT_PORT = 53;
const DEFAULT_TIMEOUT_MS = 5000;
const DEFAULT_TRIES = 2;
// c-ares's codes for an answer that says the record is not there.
const NO_RECORD_CODES = new Set(['ENODATA', 'ENOTFOUND']);
const FAILURE_PHRASES: Record<string, string> = {
  ETIMEOUT: 'timed out',
  ECONNREFUSED: 'could not connect',
  ESERVFAIL: 'got SERVFAIL',
  EREFUSED: 'got REFUSED',
};

/**
 * `value` ('192.0.2.1', '192.0.2.1:5353', '::1', '[::1]:5353') as a resolver's address; undefined
 * when it is none, a host name included (Node's resolver takes IP addresses only).
 */
export function parseResolverAddress(value: string): { host: string; port: number } | undefined {
  // A zone index (fe80::1%eth0) is refused rather than silently dropped, as setServers does.
  if (value.includes('%')) return undefined;
  if (isIP(value) === 6) return { host: value, port: DEFAULT_PORT };
  const match = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(value) ?? /^([^:[\]]+)(?::(\d{1,5}))?$/.exec(value);
  if (!match) return undefined;
  const [, host, portText] = match;
  const port = portText === undefined ? DEFAULT_PORT : Number(portText);
  const family = value.startsWith('[') ? 6 : 4;
  if (isIP(host) !== family || port < 1 || port > 65535) return undefined;
  return { host, port };
}

/** Lookups through `options.server` (or the system's resolvers); throws when the server is no valid address. */
export function createResolver(options: DnsResolverOptions): DnsLookups {
  const resolver = new dns.Resolver({ timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS, tries: options.tries ?? DEFAULT_TRIES });
  if (options.server !== undefined) {
    const address = parseResolverAddress(options.server);
    if (!address) throw new Error(`Not a resolver address (an IP address, optionally with a port): ${options.server}`);
    resolver.setServers([isIP(address.host) === 6 ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`]);
  }
  const serverName = (): string => options.server ?? resolver.getServers().join(', ');
  const lookup = async <T>(type: string, name: string, query: () => Promise<T[]>): Promise<T[]> => {
    try {
      return await query();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'EUNKNOWN';
      if (NO_RECORD_CODES.has(code)) return [];
      throw new DnsLookupError(code, `DNS lookup of ${type} ${name} ${FAILURE_PHRASES[code] ?? `failed (${code})`} at ${serverName()}`);
    }
  };
  return {
    cname: async (name) => (await lookup('CNAME', name, () => resolver.resolveCname(name))).map(normalizeName),
    ns: async (name) => (await lookup('NS', name, () => resolver.resolveNs(name))).map(normalizeName),
    txt: async (name) => (await lookup('TXT', name, () => resolver.resolveTxt(name))).map((strings) => strings.join('')),
  };
}

function normalizeName(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}
