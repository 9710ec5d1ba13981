// What an agent may bind, and on which name or address: the answer to a Bind or a
// StartTunnelWithLabel, before the registry records the tunnel. Names must be the account's
// (a reserved domain, or a wildcard reserved domain covering them), or a fresh random name
// under the first service domain when none is asked for; addresses must be the account's
// reserved addresses, or a free one of the pool. The credential's ACL is read again at each bind,
// so a changed ACL applies to the next bind. The options (auth, IP restrictions, headers, policy…)
// become the modules the edge pipeline enforces (agent-options.ts); what it cannot do is refused by name.
import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import type { DomainSettings } from '../config.js';
import { derivedId, idTime } from '../core/ids.js';
import { readAcrossAccounts, type CrossAccountReader } from '../db/cross-account.js';
import type { Bind, StartTunnelWithLabel } from '../lib/agent-proto/messages.js';
import { parseDomainName } from '../lib/dns/names.js';
import { aclAllowsAddress, aclAllowsLabels, aclAllowsName } from '../resources/credentials/credential-acl.js';
import { existingSshCertificateAuthorityIds } from '../resources/ssh-certificate-authorities/ssh-certificate-authority.auth.js';
import { sshCredentialAcl } from '../resources/ssh-credentials/ssh-credential.auth.js';
import { agentEndpointModules, BindOptionRefused, type AgentEndpointModules } from '../edges/agent-options.js';
import type { Sealer } from '../lib/crypto/sealer.js';
import type { EndpointProto, LiveTunnel } from '../core/live-agents.js';
import { internalRouteKey, routeKey } from './registry.js';

/** The codes a refused bind carries (ngrok's where it has one; docs/agent-protocol.md lists them). */
export const BIND_ERRORS = {
  /** The URL is already online in another session (and not both asked for pooling). */
  alreadyOnline: 'ERR_NGROK_334',
  /** The domain is another account's. */
  domainOfAnotherAccount: 'ERR_NGROK_320',
  /** The address is not reserved by anyone. */
  addressNotReserved: 'ERR_NGROK_307',
  /** The address is another account's. */
  addressOfAnotherAccount: 'ERR_NGROK_309',
  /** The domain is not one of the account's reserved domains. */
  domainNotReserved: 'ERR_EP_AGENT_612',
  /** The credential's ACL does not allow it. */
  notAllowedByAcl: 'ERR_EP_AGENT_610',
  /** An endpoint option edgeplane does not serve (named in the message). */
  optionNotServed: 'ERR_EP_AGENT_611',
  /** A bad name, address or label in the request. */
  badRequest: 'ERR_EP_AGENT_613',
  /** Too many tunnels in the session or the account. */
  tooManyTunnels: 'ERR_EP_AGENT_614',
  /** No public listener for this protocol, no free address, or the port could not be listened on. */
  unavailable: 'ERR_EP_AGENT_615',
  /** More requests in flight at once than a session may have. */
  tooManyRequests: 'ERR_EP_AGENT_616',
} as const;

export class BindRefused extends Error {
  constructor(
    message: string,
    readonly errorCode: string,
  ) {
    super(message);
    this.name = 'BindRefused';
  }
}

export interface BindSettings {
  domains: DomainSettings;
  /** The public ports of the ingress listeners; undefined when that listener is off. */
  httpsPort?: number;
  httpPort?: number;
  /** Signs the tunnel tokens agents present when they bind again after a reconnect. */
  bindKey: Buffer;
  maxTunnelsPerSession: number;
  maxTunnelsPerAccount: number;
  /** Seals the client secrets of an agent's OAuth and OIDC options (as the API seals a route's); without it they are refused. */
  sealer?: Sealer;
  /** OAuth providers (lower case) the operator has the server's own application for: an agent's OAuth option may name no client for them. */
  managedOAuthProviders?: readonly string[];
}

export interface BindingSession {
  id: string;
  accountId: string;
  credentialId: string;
}

/** Where a bind was placed: its record (the registry takes it) and its route. */
export interface Placement {
  live: LiveTunnel;
  route?: string;
  pooling: boolean;
  /** A TCP bind: the port to listen on. */
  tcpPort?: number;
  /** The BindResp's `Extra.Token`. */
  token: string;
  /** The modules the Bind's options ask the edge to enforce; none: served as it is. */
  modules?: AgentEndpointModules;
}

/** The modules a Bind's options ask for (agent-options.ts), or its refusal: 611 for what is not served, 613 for a bad value. */
function modulesOf(bind: Bind, settings: BindSettings): AgentEndpointModules | undefined {
  const identity = settings.sealer && {
    sealer: settings.sealer,
    ...(settings.managedOAuthProviders && { managedOAuthProviders: settings.managedOAuthProviders }),
  };
  try {
    return agentEndpointModules(bind, identity);
  } catch (err) {
    if (!(err instanceof BindOptionRefused)) throw err;
    throw new BindRefused(err.message, err.kind === 'unserved' ? BIND_ERRORS.optionNotServed : BIND_ERRORS.badRequest);
  }
}

/** What another instance needs to enforce an endpoint's modules: its Bind, sealed with the master key and bound to the tunnel. */
export function sealBindOptions(bind: Bind, tunnelId: string, settings: BindSettings): string | undefined {
  return settings.sealer?.seal(JSON.stringify(bind), `agent-bind:${tunnelId}`);
}

/** The modules of another instance's endpoint, from its sealed Bind (sealBindOptions); throws when it does not open or is refused here. */
export function modulesOfSealed(sealed: string, tunnelId: string, settings: BindSettings): AgentEndpointModules | undefined {
  if (!settings.sealer) throw new Error('no sealer to open the options with');
  return modulesOf(JSON.parse(settings.sealer.open(sealed, `agent-bind:${tunnelId}`)) as Bind, settings);
}

const RANDOM_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

function randomName(base: string): string {
  let label = '';
  for (let i = 0; i < 16; i++) label += RANDOM_ALPHABET[randomInt(RANDOM_ALPHABET.length)];
  return `${label}.${base}`;
}

/** The URL's port part: none for the scheme's default. */
const portPart = (port: number, defaultPort: number) => (port === defaultPort ? '' : `:${port}`);

// ---- Tunnel tokens: the URL a tunnel had, signed for its session, so a rebind takes it back. ----

function mac(key: Buffer, sessionId: string, proto: string, url: string): Buffer {
  return createHmac('sha256', key).update(`edgeplane tunnel token\n${sessionId}\n${proto}\n${url}`).digest();
}

export function tunnelToken(key: Buffer, sessionId: string, proto: string, url: string): string {
  return `${Buffer.from(url).toString('base64url')}.${mac(key, sessionId, proto, url).toString('base64url')}`;
}

/** The URL a token names when it was made for this session and protocol; undefined otherwise. */
export function urlOfToken(key: Buffer, sessionId: string, proto: string, token: string): string | undefined {
  const dot = token.indexOf('.');
  if (dot <= 0 || token.length > 2048) return undefined;
  const url = Buffer.from(token.slice(0, dot), 'base64url').toString('utf8');
  const given = Buffer.from(token.slice(dot + 1), 'base64url');
  const expected = mac(key, sessionId, proto, url);
  return given.length === expected.length && timingSafeEqual(given, expected) ? url : undefined;
}

async function currentAcl(store: CrossAccountReader, credentialId: string): Promise<string[] | undefined> {
  // An `ssh -R` agent's session is of an SSH credential (ssh-listener.ts).
  if (credentialId.startsWith('sshcr_')) return sshCredentialAcl(store, credentialId);
  // …or of a user certificate of the account's SSH CA: it binds what the account may, while the CA exists.
  if (credentialId.startsWith('sshca_')) return (await existingSshCertificateAuthorityIds(store, [credentialId])).has(credentialId) ? [] : undefined;
  const row = await readAcrossAccounts(store, (reader) => reader.selectFrom('credentials').select('acl').where('id', '=', credentialId).executeTakeFirst());
  return row ? (JSON.parse(row.acl) as string[]) : undefined;
}

/** The wildcard names that would cover `name`: `a.b.example.com` → `*.b.example.com`, `*.example.com`. */
function coveringWildcards(name: string): string[] {
  const labels = name.replace(/^\*\./, '').split('.');
  const out: string[] = [];
  for (let i = name.startsWith('*.') ? 0 : 1; i < labels.length - 1; i++) out.push(`*.${labels.slice(i).join('.')}`);
  return out.filter((w) => w !== name);
}

/** The reserved domain of the account that `name` is served under, or the refusal. */
async function ownedDomain(store: CrossAccountReader, accountId: string, name: string): Promise<{ id: string }> {
  const candidates = [name, ...coveringWildcards(name)];
  const rows = await readAcrossAccounts(store, (reader) =>
    reader.selectFrom('reserved_domains').select(['id', 'account_id', 'domain']).where('domain', 'in', candidates).execute(),
  );
  // The nearest: the name itself, then the closest wildcard.
  const byName = new Map(rows.map((r) => [r.domain, r]));
  for (const candidate of candidates) {
    const row = byName.get(candidate);
    if (!row) continue;
    if (row.account_id === accountId) return { id: row.id };
    throw new BindRefused(`The domain '${name}' is reserved for another account.`, BIND_ERRORS.domainOfAnotherAccount);
  }
  throw new BindRefused(
    `The domain '${name}' is not reserved by this account: reserve it (POST /reserved_domains) before binding it.`,
    BIND_ERRORS.domainNotReserved,
  );
}

function refusedByAcl(what: string): BindRefused {
  return new BindRefused(`The credential's ACL does not allow binding ${what}.`, BIND_ERRORS.notAllowedByAcl);
}

export interface PlaceOptions {
  /** Names, addresses and the credential are looked up across accounts (each is unique across them). */
  store: CrossAccountReader;
  settings: BindSettings;
  session: BindingSession;
  /** Whether a TCP port is free to listen on here (bound by no tunnel and no other program). */
  tcpPortFree: (port: number) => boolean;
  /** Whether a port of the pool can be listened on now (no other program holds it); a pool pick skips one that cannot. */
  tcpPortBindable?: (port: number) => Promise<boolean>;
  /** The tunnels this session and account hold now. */
  counts: { session: number; account: number };
}

function checkCounts(options: PlaceOptions): void {
  const { counts, settings } = options;
  if (counts.session >= settings.maxTunnelsPerSession)
    throw new BindRefused(`A session may hold ${settings.maxTunnelsPerSession} tunnels at most.`, BIND_ERRORS.tooManyTunnels);
  if (counts.account >= settings.maxTunnelsPerAccount)
    throw new BindRefused(`An account may hold ${settings.maxTunnelsPerAccount} tunnels at most.`, BIND_ERRORS.tooManyTunnels);
}

/** Places a Bind: its name or address, URL, ids and route; throws BindRefused with the reason. */
export async function placeBind(bind: Bind, options: PlaceOptions): Promise<Placement> {
  const { store, settings, session } = options;
  checkCounts(options);
  const modules = modulesOf(bind, settings);
  const acl = await currentAcl(store, session.credentialId);
  if (!acl) throw new BindRefused('The credential was deleted.', BIND_ERRORS.notAllowedByAcl);
  const previousUrl = bind.extra.token === '' ? undefined : urlOfToken(settings.bindKey, session.id, bind.proto, bind.extra.token);
  const at = idTime(session.id);
  const pooling = bind.extra.poolingEnabled;

  if (bind.proto === 'tcp') {
    const internal = internalBind(bind, bind.opts.addr.replace(/:\d*$/, ''));
    if (internal !== undefined) return placeInternalTcp(bind, acl, options);
    if (!aclAllowsAddress(acl)) throw refusedByAcl('a TCP address (no ACL rule names one; only * allows it)');
    const { host, port, addrId } = await placeAddress(bind.opts.addr, previousUrl, options);
    const url = `tcp://${host}:${port}`;
    const live = tunnelRecord(session, bind, at, url, { proto: 'tcp', hostport: `${host}:${port}`, ...(addrId && { tcpAddrId: addrId }) });
    return {
      live,
      route: routeKey('tcp', port),
      pooling,
      tcpPort: port,
      token: tunnelToken(settings.bindKey, session.id, bind.proto, url),
      ...(modules && { modules }),
    };
  }

  const proto = bind.proto;
  const internal = internalBind(bind, requestedName(bind, settings.domains));
  if (internal !== undefined) return placeInternal(bind, internal, acl, options);
  const port = proto === 'http' ? settings.httpPort : settings.httpsPort;
  if (port === undefined)
    throw new BindRefused(
      `This server has no public ${proto === 'http' ? 'HTTP' : 'HTTPS'} listener: ${proto} endpoints cannot be bound.`,
      BIND_ERRORS.unavailable,
    );
  const asked = requestedName(bind, settings.domains);
  let name: string;
  let domainId: string | undefined;
  const previousHost = previousUrl ? hostOfUrl(previousUrl) : undefined;
  if (asked === undefined && previousHost !== undefined) name = previousHost;
  else if (asked === undefined) name = randomName(settings.domains.serviceDomains[0]!);
  else {
    const parsed = parseDomainName(asked, { wildcard: true });
    if (!parsed.ok) throw new BindRefused(`'${asked}' is not a domain name (${parsed.problem}).`, BIND_ERRORS.badRequest);
    name = parsed.name;
  }
  if (!aclAllowsName(acl, name)) throw refusedByAcl(`'${name}'`);
  // A random name given to this session (its first bind, or a rebind with its token) is no reserved domain.
  const random = asked === undefined && (previousHost === undefined || isRandomServiceName(name, settings.domains));
  if (!random) domainId = (await ownedDomain(store, session.accountId, name)).id;
  const scheme = proto === 'tls' ? 'tls' : proto;
  const url = `${scheme}://${name}${portPart(port, proto === 'http' ? 80 : 443)}`;
  const live = tunnelRecord(session, bind, at, url, { proto, hostport: `${name}:${port}`, ...(domainId && { domainId }) });
  return { live, route: routeKey(proto, name), pooling, token: tunnelToken(settings.bindKey, session.id, bind.proto, url), ...(modules && { modules }) };
}

/** Whether `name` is an internal one: the name `internal` or one under it. */
const isInternalName = (name: string) => /(^|\.)internal\.?$/i.test(name);

/**
 * The name of an internal endpoint the Bind asks for (`svc.internal`, with or without the binding
 * `internal`), or undefined for a public one. The binding `internal` on another name is refused:
 * internal endpoints are named under `.internal`, which no public listener serves.
 */
function internalBind(bind: Bind, asked: string | undefined): string | undefined {
  const internalName = asked !== undefined && isInternalName(asked);
  const unknown = bind.extra.bindings.find((b) => b !== 'public' && b !== 'internal');
  if (unknown !== undefined) throw new BindRefused(`'${unknown.slice(0, 40)}' is not a binding; the bindings are public and internal.`, BIND_ERRORS.badRequest);
  if (bind.extra.bindings.includes('internal') && !internalName)
    throw new BindRefused("An internal endpoint is named under .internal: bind a name such as 'service.internal'.", BIND_ERRORS.badRequest);
  return internalName ? asked : undefined;
}

/**
 * An internal endpoint (`https://svc.internal`): no reserved domain, no listener; its route is the
 * binding account's own (internalRouteKey), which only forward-internal of that account's cloud
 * endpoints and edges reaches.
 */
function placeInternal(bind: Bind, asked: string, acl: string[], options: PlaceOptions): Placement {
  const { settings, session } = options;
  if (bind.proto !== 'http' && bind.proto !== 'https')
    throw new BindRefused(`Internal ${bind.proto} endpoints are not served: bind an http, https or tcp internal endpoint.`, BIND_ERRORS.optionNotServed);
  const parsed = parseDomainName(asked, { wildcard: false });
  if (!parsed.ok || parsed.name === 'internal')
    throw new BindRefused(`'${asked}' is not an internal endpoint name such as 'service.internal'.`, BIND_ERRORS.badRequest);
  const name = parsed.name;
  if (!aclAllowsName(acl, name)) throw refusedByAcl(`'${name}'`);
  const url = `${bind.proto}://${name}`;
  const live = tunnelRecord(session, bind, idTime(session.id), url, { proto: bind.proto, hostport: `${name}:${bind.proto === 'http' ? 80 : 443}` });
  return {
    live,
    route: internalRouteKey(session.accountId, url),
    pooling: bind.extra.poolingEnabled,
    token: tunnelToken(settings.bindKey, session.id, bind.proto, url),
  };
}

/**
 * An internal TCP endpoint (`tcp://svc.internal:5432`, its remote address `svc.internal:5432`): no
 * reserved address, no port listened on; its route is the binding account's own, which only
 * forward-internal of that account's TCP cloud endpoints and edges reaches. Its port is part of
 * its name, so it is required.
 */
function placeInternalTcp(bind: Extract<Bind, { proto: 'tcp' }>, acl: string[], options: PlaceOptions): Placement {
  const { settings, session } = options;
  const asked = bind.opts.addr;
  const match = /^([^:]+):(\d{1,5})$/.exec(asked);
  const port = Number(match?.[2]);
  const parsed = match ? parseDomainName(match[1]!, { wildcard: false }) : undefined;
  if (!parsed?.ok || parsed.name === 'internal' || port < 1 || port > 65535)
    throw new BindRefused(`'${asked.slice(0, 80)}' is not an internal TCP address such as 'service.internal:5432'.`, BIND_ERRORS.badRequest);
  const name = parsed.name;
  if (!aclAllowsName(acl, name)) throw refusedByAcl(`'${name}'`);
  const url = `tcp://${name}:${port}`;
  const live = tunnelRecord(session, bind, idTime(session.id), url, { proto: 'tcp', hostport: `${name}:${port}` });
  return {
    live,
    route: internalRouteKey(session.accountId, url),
    pooling: bind.extra.poolingEnabled,
    token: tunnelToken(settings.bindKey, session.id, bind.proto, url),
  };
}

function isRandomServiceName(name: string, domains: DomainSettings): boolean {
  const base = domains.serviceDomains[0]!;
  return name.endsWith(`.${base}`) && /^[a-z0-9]{16}$/.test(name.slice(0, -base.length - 1));
}

function hostOfUrl(url: string): string | undefined {
  const match = /^[a-z]+:\/\/([^/:]+)/.exec(url);
  return match?.[1];
}

/** The name a Bind asks for: `domain`, else the older `hostname`, else `subdomain` under the first service domain. */
function requestedName(bind: Bind, domains: DomainSettings): string | undefined {
  if (bind.proto === 'tcp') return undefined;
  const o = bind.opts;
  if (o.domain !== '') return o.domain;
  if (o.hostname !== '') return o.hostname;
  if (o.subdomain !== '') return `${o.subdomain}.${domains.serviceDomains[0]!}`;
  return undefined;
}

async function placeAddress(asked: string, previousUrl: string | undefined, options: PlaceOptions): Promise<{ host: string; port: number; addrId?: string }> {
  const { store, session, settings } = options;
  const wanted = asked !== '' ? asked : previousUrl?.replace(/^tcp:\/\//, '');
  if (wanted !== undefined && wanted !== '') {
    const match = /^([^:]+):(\d{1,5})$/.exec(wanted);
    if (!match || Number(match[2]) > 65535) throw new BindRefused(`'${wanted}' is not an address (host:port).`, BIND_ERRORS.badRequest);
    const addr = `${match[1]!.toLowerCase()}:${Number(match[2])}`;
    const row = await readAcrossAccounts(store, (reader) =>
      reader.selectFrom('reserved_addrs').select(['id', 'account_id', 'host', 'port']).where('addr', '=', addr).executeTakeFirst(),
    );
    if (row && row.account_id !== session.accountId)
      throw new BindRefused(`The address '${addr}' is reserved for another account.`, BIND_ERRORS.addressOfAnotherAccount);
    if (row) {
      if (!options.tcpPortFree(row.port)) throw new BindRefused(`The address '${addr}' is already online.`, BIND_ERRORS.alreadyOnline);
      return { host: row.host, port: row.port, addrId: row.id };
    }
    // A random address this session had (its token) can be had again while it is free.
    if (asked === '' && previousUrl !== undefined && options.tcpPortFree(Number(match[2]))) return { host: match[1]!, port: Number(match[2]) };
    if (asked !== '')
      throw new BindRefused(`The address '${addr}' is not reserved: reserve it (POST /reserved_addrs) before binding it.`, BIND_ERRORS.addressNotReserved);
  }
  // A free address of the pool that no account has reserved.
  for (let attempt = 0; attempt < 64; attempt++) {
    const range = settings.domains.tcpAddresses[randomInt(settings.domains.tcpAddresses.length)]!;
    const port = range.from + randomInt(range.to - range.from + 1);
    if (!options.tcpPortFree(port)) continue;
    const taken = await readAcrossAccounts(store, (reader) => reader.selectFrom('reserved_addrs').select('id').where('port', '=', port).executeTakeFirst());
    if (!taken && (await (options.tcpPortBindable?.(port) ?? true))) return { host: range.host, port };
  }
  throw new BindRefused('No free TCP address is left in the pool.', BIND_ERRORS.unavailable);
}

function tunnelRecord(
  session: BindingSession,
  bind: Bind,
  at: Date,
  url: string,
  endpoint: { proto: EndpointProto; hostport: string; domainId?: string; tcpAddrId?: string },
): LiveTunnel {
  const seed = `${session.id}\n${bind.proto}\n${url}`;
  return {
    id: derivedId('tn', at, seed),
    accountId: session.accountId,
    sessionId: session.id,
    endpoint: { id: derivedId('ep', at, seed), publicUrl: url, ...endpoint },
    metadata: bind.extra.metadata,
    forwardsTo: bind.forwardsTo,
    startedAt: new Date(),
  };
}

const MAX_LABELS = 32;

/** Places a labeled tunnel: checked against the ACL; its id is the same each time its session starts it again. */
export async function placeLabeled(request: StartTunnelWithLabel, options: PlaceOptions): Promise<Placement> {
  const { store, session } = options;
  checkCounts(options);
  const labels = request.labels;
  const entries = Object.entries(labels);
  if (entries.length === 0) throw new BindRefused('A labeled tunnel needs at least one label.', BIND_ERRORS.badRequest);
  if (entries.length > MAX_LABELS) throw new BindRefused(`A labeled tunnel has ${MAX_LABELS} labels at most.`, BIND_ERRORS.badRequest);
  for (const [key, value] of entries)
    if (key === '' || value === '' || key.length > 128 || value.length > 256)
      throw new BindRefused('A label key is 1–128 and a value 1–256 characters long.', BIND_ERRORS.badRequest);
  const acl = await currentAcl(store, session.credentialId);
  if (!acl) throw new BindRefused('The credential was deleted.', BIND_ERRORS.notAllowedByAcl);
  const sorted = Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  if (!aclAllowsLabels(acl, sorted)) throw refusedByAcl(`the labels ${entries.map(([k, v]) => `${k}=${v}`).join(', ')}`);
  const seed = `${session.id}\nlabels\n${JSON.stringify(sorted)}\n${request.forwardsTo}`;
  const live: LiveTunnel = {
    id: derivedId('tn', idTime(session.id), seed),
    accountId: session.accountId,
    sessionId: session.id,
    labels: sorted,
    metadata: request.metadata,
    forwardsTo: request.forwardsTo,
    startedAt: new Date(),
  };
  return { live, pooling: true, token: '' };
}
