// Endpoints: the account's cloud endpoints (made, changed and deleted here; served by the public
// listeners through their traffic policy) and, beside them in get and list, the endpoints its live
// agents bound (type `ephemeral`, read-only: they live and die with their tunnels). Reads go to the
// view `endpoints` (migration 0022), writes to the table `cloud_endpoints`.
//
// A cloud endpoint's URL is https://name or http://name, where name is a reserved domain of the
// account or a name under one of its wildcard domains, or tcp://host:port, a reserved address of
// the account that no TCP edge serves (and no endpoint configuration has); one cloud endpoint per
// URL; its traffic policy is checked as an HTTP (or TCP) edge's traffic_policy document is, plus
// forward-internal; the IP policies its restrict-ips actions name are kept in module_refs, so
// deleting one is refused, as is deleting the reserved domain or address it serves.
import { describedChanges, describedColumns } from '../../core/schema.js';
import type { RequestContext } from '../../core/context.js';
import { rfc3339 } from '../../core/time.js';
import { defineResource } from '../../crud/definition.js';
import type { ScopedDb } from '../../db/scoped.js';
import { policyNotFound } from '../../edge-config/values/named-resources.js';
import { checkTrafficPolicyDocument, documentPolicyIds } from '../../edge-config/traffic-policy/traffic-policy.js';
import { parseDomainName } from '../../lib/dns/names.js';
import { endpointCatalogue, endpointErrors } from './endpoint.errors.js';
import { Endpoint, EndpointCreate, EndpointUpdate } from './endpoint.schema.js';
import type { CloudEndpointsTable, EndpointsView } from './cloud-endpoint.table.js';

/** The module_refs name under which a cloud endpoint's traffic policy names its IP policies. */
const POLICY_REFS = 'traffic_policy';

/** Each scheme's port: a URL may name it, or none. */
const DEFAULT_PORTS: Record<string, number> = { https: 443, http: 80 };

interface CloudUrl {
  url: string;
  proto: string;
  host: string;
  hostport: string;
}

/** The policy protocol a cloud endpoint's traffic policy is checked for. */
const policyProtocol = (proto: string) => (proto === 'tcp' ? 'tcp' : 'http');

/** A TCP cloud endpoint's URL read: `tcp://host:port`, its port required (it is the reserved address's). */
function readTcpUrl(value: string, host: string, port: string | undefined): CloudUrl {
  if (port === undefined || Number(port) < 1 || Number(port) > 65535)
    throw endpointErrors.endpointUrlInvalid({ value, problem: 'a tcp cloud endpoint URL is tcp://host:port, the addr of a reserved address' });
  if (!/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i.test(host)) throw endpointErrors.endpointUrlInvalid({ value, problem: `'${host.slice(0, 80)}' is not a host name` });
  const name = host.toLowerCase();
  if (name === 'internal' || name.endsWith('.internal')) throw endpointErrors.endpointInternalUrl({ value });
  const hostport = `${name}:${Number(port)}`;
  return { url: `tcp://${hostport}`, proto: 'tcp', host: name, hostport };
}

/** A cloud endpoint's URL read: `https://name` or `http://name` (its default port allowed), or `tcp://host:port`; or the 400 that says why not. */
export function readCloudUrl(value: string): CloudUrl {
  const match = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#:]*)(?::(\d{1,5}))?\/?$/.exec(value.trim());
  if (!match) throw endpointErrors.endpointUrlInvalid({ value, problem: 'it must be a scheme, :// and a host name, with no path, query or credentials' });
  const scheme = match[1]!.toLowerCase();
  if (scheme === 'tls') throw endpointErrors.endpointProtocolNotServed({ value, scheme });
  if (scheme === 'tcp') return readTcpUrl(value, match[2]!, match[3]);
  const port = DEFAULT_PORTS[scheme];
  if (port === undefined) throw endpointErrors.endpointUrlInvalid({ value, problem: `its scheme '${scheme}' is not https or http` });
  if (match[3] !== undefined && Number(match[3]) !== port)
    throw endpointErrors.endpointUrlInvalid({
      value,
      problem: `a ${scheme} cloud endpoint is served on the ${scheme} listener; its URL names no port but ${port}`,
    });
  const parsed = parseDomainName(match[2]!, { wildcard: true });
  if (!parsed.ok) throw endpointErrors.endpointUrlInvalid({ value, problem: `'${match[2]}' is not a domain name` });
  const host = parsed.name;
  if (host === 'internal' || host.endsWith('.internal')) throw endpointErrors.endpointInternalUrl({ value });
  return { url: `${scheme}://${host}`, proto: scheme, host, hostport: `${host}:${port}` };
}

/** The wildcard names that cover `name`, nearest first: `a.b.example.com` → `*.b.example.com`, `*.example.com`. */
function coveringWildcards(name: string): string[] {
  const labels = name.replace(/^\*\./, '').split('.');
  const out: string[] = [];
  for (let i = name.startsWith('*.') ? 0 : 1; i < labels.length - 1; i++) out.push(`*.${labels.slice(i).join('.')}`);
  return out.filter((w) => w !== name);
}

/** The account's reserved domain that serves `host` (itself, else the nearest wildcard over it), locked against deletion; or the 400. */
async function domainFor(db: ScopedDb, value: string, host: string): Promise<string> {
  const candidates = [host, ...coveringWildcards(host)];
  const found = await db.select('reserved_domains', { domain: candidates }, { lock: 'key share' });
  for (const name of candidates) {
    const row = found.find((d) => d.domain === name);
    if (row) return row.id;
  }
  throw endpointErrors.endpointDomainNotReserved({ value, host });
}

/**
 * The account's reserved address a TCP cloud endpoint serves, locked (as a TCP edge locks the
 * addresses it claims, so that an edge and an endpoint claiming one address are serialized), or
 * the refusal: not reserved (400), with an endpoint configuration (400), served by a TCP edge (409).
 */
async function addrFor(db: ScopedDb, value: string, hostport: string): Promise<string> {
  const [addr] = await db.select('reserved_addrs', { addr: hostport }, { lock: 'update' });
  if (!addr) throw endpointErrors.endpointAddrNotReserved({ value, addr: hostport });
  if (addr.endpoint_configuration_id !== null) throw endpointErrors.endpointAddrHasConfiguration({ value, id: addr.id });
  const [served] = await db.select('tcp_edge_hostports', { reserved_addr_id: addr.id });
  if (served) throw endpointErrors.endpointAddrServedByEdge({ value, edge: served.tcp_edge_id });
  return addr.id;
}

/** What a URL is served under: its reserved domain, or (tcp) its reserved address. */
async function servedUnder(db: ScopedDb, value: string): Promise<Pick<CloudEndpointsTable, 'domain_id' | 'tcp_addr_id'>> {
  const url = readCloudUrl(value);
  if (url.proto === 'tcp') return { domain_id: null, tcp_addr_id: await addrFor(db, value, url.hostport) };
  return { domain_id: await domainFor(db, value, url.host), tcp_addr_id: null };
}

/** No other cloud endpoint of the account serves `url` (another account's is the unique index's 409). */
async function checkUrlFree(db: ScopedDb, url: string, id: string): Promise<void> {
  const other = (await db.select('cloud_endpoints', { url })).find((e) => e.id !== id);
  if (other) throw endpointErrors.endpointUrlTaken({ url, id: other.id });
}

/** The bindings a cloud endpoint takes: `["public"]`. */
function checkBindings(bindings: readonly string[] | null | undefined): string {
  if (bindings == null || bindings.length === 0) return JSON.stringify(['public']);
  if (bindings.length !== 1 || bindings[0] !== 'public') throw endpointErrors.endpointBindingsInvalid({ value: JSON.stringify(bindings).slice(0, 200) });
  return JSON.stringify(bindings);
}

/** The IP policies the document's restrict-ips actions name exist in the account (locked), and module_refs says so. */
async function writePolicyRefs(db: ScopedDb, endpointId: string, document: string): Promise<void> {
  const ids = documentPolicyIds(document);
  const notFound = policyNotFound('traffic_policy restrict-ips ip_policies');
  if (ids.length > 0) {
    const found = new Set((await db.select('ip_policies', { id: ids }, { lock: 'key share' })).map((p) => p.id));
    const missing = ids.find((id) => !found.has(id));
    if (missing !== undefined) throw notFound(missing);
  }
  await db.delete('module_refs', { owner_id: endpointId, name: POLICY_REFS });
  if (ids.length > 0)
    await db.insert(
      'module_refs',
      ids.map((target_id, position) => ({ owner_id: endpointId, name: POLICY_REFS, target_id, position })),
    );
}

const isInternalUrl = (url: string) => /^[a-z]+:\/\/[^/:]+\.internal(:\d+)?$/.test(url);

type Shown = CloudEndpointsTable & Partial<Omit<EndpointsView, keyof CloudEndpointsTable>> & { bindings: string | null; domain_id: string | null };

export const endpointDefinition = defineResource({
  kind: 'endpoint',
  title: 'endpoint',
  errors: endpointCatalogue,
  prefix: 'ep',
  path: '/endpoints',
  listKey: 'endpoints',
  table: 'cloud_endpoints',
  reads: { view: 'endpoints', notWritable: (id) => endpointErrors.endpointNotCloud({ id }) },
  schemas: { resource: Endpoint, create: EndpointCreate, update: EndpointUpdate },
  references: [
    // Deleting the reserved domain it serves is refused while it serves it (the domain's 446).
    {
      in: 'column',
      column: 'domain_id',
      kinds: ['reserved_domain'],
      notFound: (id) => endpointErrors.endpointDomainNotReserved({ value: id, host: id }),
      onDelete: 'restrict',
    },
    // A TCP endpoint's reserved address, likewise (the address's 520).
    {
      in: 'column',
      column: 'tcp_addr_id',
      kinds: ['reserved_addr'],
      notFound: (id) => endpointErrors.endpointAddrNotReserved({ value: id, addr: id }),
      onDelete: 'restrict',
    },
    { in: 'rows', kinds: ['ip_policy'], table: 'module_refs', column: 'target_id', referrer: 'owner_id' },
  ],

  prepare(ctx: RequestContext, body) {
    const url = readCloudUrl(body.url);
    // Checked before the transaction: a document that does not compile is refused without one.
    checkTrafficPolicyDocument(body.traffic_policy, policyProtocol(url.proto));
    const now = rfc3339(ctx.now);
    return {
      row: {
        ...describedColumns(body),
        updated_at: now,
        url: url.url,
        proto: url.proto,
        hostport: url.hostport,
        // Chosen in the transaction (allocate), where the domain or address is locked against deletion.
        domain_id: null,
        tcp_addr_id: null,
        traffic_policy: body.traffic_policy,
        bindings: checkBindings(body.bindings),
        pooling_enabled: body.pooling_enabled ? 1 : 0,
      },
    };
  },

  patch(ctx, body) {
    const changes: Partial<CloudEndpointsTable> = { ...describedChanges(body), updated_at: rfc3339(ctx.now) };
    if (body.url != null) {
      const url = readCloudUrl(body.url);
      Object.assign(changes, { url: url.url, proto: url.proto, hostport: url.hostport });
    }
    // The document is checked in beforeUpdate, for the protocol of the URL the endpoint will have.
    if (body.traffic_policy != null) changes.traffic_policy = body.traffic_policy;
    if (body.bindings != null) changes.bindings = checkBindings(body.bindings);
    if (body.pooling_enabled != null) changes.pooling_enabled = body.pooling_enabled ? 1 : 0;
    return changes;
  },

  toApi: (stored: CloudEndpointsTable, view) => {
    const row = stored as Shown;
    const type = row.type ?? 'cloud';
    return {
      id: row.id,
      region: row.region ?? 'global',
      created_at: row.created_at,
      updated_at: row.updated_at,
      url: row.url,
      public_url: row.url,
      proto: row.proto,
      hostport: row.hostport,
      type,
      description: row.description,
      metadata: row.metadata,
      traffic_policy: row.traffic_policy,
      bindings: row.bindings ? (JSON.parse(row.bindings) as string[]) : [isInternalUrl(row.url) ? 'internal' : 'public'],
      pooling_enabled: Boolean(row.pooling_enabled),
      domain: row.domain_id ? view.ref(row.domain_id) : null,
      tcp_addr: row.tcp_addr_id ? view.ref(row.tcp_addr_id) : null,
      tunnel: row.tunnel_id ? view.ref(row.tunnel_id) : null,
    };
  },

  hooks: {
    async allocate(db, _ctx, row) {
      return servedUnder(db, row.url);
    },
    async beforeCreate(db, _ctx, row) {
      await checkUrlFree(db, row.url, row.id);
    },
    async beforeUpdate(db, _ctx, current, changes) {
      // A new document, or a new URL of another protocol, is checked for the endpoint's protocol from now on.
      const proto = changes.proto ?? current.proto;
      if (changes.traffic_policy !== undefined || proto !== current.proto)
        checkTrafficPolicyDocument(changes.traffic_policy ?? current.traffic_policy, policyProtocol(proto));
      if (changes.url !== undefined && changes.url !== current.url) {
        // The changes are written as they are left here: the new URL's domain or address with them.
        Object.assign(changes, await servedUnder(db, changes.url));
        await checkUrlFree(db, changes.url, current.id);
      }
    },
    async afterWrite(db, _ctx, row, operation, body) {
      if (operation === 'create' || (operation === 'update' && typeof body?.traffic_policy === 'string')) {
        await writePolicyRefs(db, row.id, (body?.traffic_policy as string | undefined) ?? row.traffic_policy);
      }
    },
    // A row just written (from the table, not the view) is read back: a PATCH of the URL changed its domain in beforeUpdate.
    async expand(db, rows) {
      return Promise.all(rows.map(async (row) => ((row as Shown).type === undefined ? ((await db.find('cloud_endpoints', row.id)) ?? row) : row)));
    },
    onUniqueViolation(target, row) {
      return target.includes('cloud_endpoints_url_key') ? endpointErrors.endpointUrlTaken({ url: String(row.url ?? '') }) : undefined;
    },
  },
});
