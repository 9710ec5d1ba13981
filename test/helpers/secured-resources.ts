// Every resource route the API serves, for the shared security suite. A new resource kind
// joins the suite with one line here; test/api/security.test.ts fails while a routed path
// is missing from this list.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { authorizedKeysLine, toSshPublicKey } from '../../src/lib/ssh/keys.js';
import { makeChain } from './certs.js';
import type { Api, Harness } from './harness.js';
import { seedLiveSession } from './live-agents.js';

export interface SecuredResource {
  /** The collection's path; for a kind under a parent, its template (`/edges/https/{edge_id}/routes`) as the OpenAPI document names it. */
  path: string;
  /**
   * A kind under a parent: makes a parent in the account of `api` and gives the concrete
   * collection path (`/edges/https/edghts_…/routes`). Absent: the collection is `path`.
   */
  parent?(api: Api): Promise<string>;
  /** Whether the collection can be listed (GET); default true. */
  list?: boolean;
  /** The number of items in the collection `path` (concrete), for a kind without a list; default: the length of the list. */
  count?(api: Api, path: string): Promise<number>;
  /** Where a list would show an item of the kind, for a kind without a list (the parent's collection). */
  listedIn?: string;
  /** A valid create body, made in the account of `api` (it may create what it references). */
  create(api: Api): Promise<Record<string, unknown>> | Record<string, unknown>;
  /** A valid update body. */
  update: Record<string, unknown>;
  /** Whether the resource has description and metadata. */
  describable: boolean;
  /** Parts a DELETE of `<item>/<part>` takes off the resource (`certificate`). */
  parts?: string[];
  /** Modules (PUT, GET and DELETE of `<item>/<module>`), each with a valid PUT body. */
  modules?: Record<string, Record<string, unknown>>;
}

const unique = () => randomBytes(4).toString('hex');

/** A valid PUT body for each module of a TCP edge; the suite's calls are refused before the ids a module names are looked up. */
const TCP_MODULE_BODIES = {
  backend: { backend_id: `bkdtg_${'0'.repeat(27)}` },
  ip_restriction: { ip_policy_ids: [`ipp_${'0'.repeat(27)}`] },
  policy: { inbound: [{ name: 'deny all', expressions: [], actions: [{ type: 'deny' }] }] },
  traffic_policy: { value: '{"on_tcp_connect":[]}' },
};

/** Modules of HTTPS edge routes and endpoint configurations alike, each with a valid PUT body. */
const HTTP_MODULE_BODIES = {
  circuit_breaker: { tripped_duration: 30, error_threshold_percentage: 0.25 },
  compression: { enabled: true },
  request_headers: { add: { 'x-request': 'yes' }, remove: ['x-remove-me'] },
  response_headers: { add: { 'x-response': 'yes' }, remove: ['server'] },
  oauth: { provider: { google: {} } },
  saml: {
    idp_metadata:
      '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.example.com">' +
      '<md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"/></md:EntityDescriptor>',
  },
  oidc: { issuer: 'https://idp.example.com', client_id: 'a', client_secret: 'b' },
};

/** A valid PUT body for each of the 14 modules of an HTTPS edge route. */
const ROUTE_MODULE_BODIES = {
  ...HTTP_MODULE_BODIES,
  backend: TCP_MODULE_BODIES.backend,
  ip_restriction: TCP_MODULE_BODIES.ip_restriction,
  webhook_verification: { provider: 'github', secret: 's' },
  websocket_tcp_converter: { enabled: true },
  user_agent_filter: { allow: ['^curl/'], deny: ['bot'] },
  policy: { inbound: [{ name: 'deny all', expressions: [], actions: [{ type: 'deny' }] }] },
  traffic_policy: { value: '{"on_http_request":[]}' },
};

/** A valid PUT body for each module of an HTTPS endpoint configuration (an HTTPS one allows them all). */
const ENDPOINT_CONFIGURATION_MODULE_BODIES = {
  ...HTTP_MODULE_BODIES,
  ip_policy: { ip_policy_ids: [`ipp_${'0'.repeat(27)}`] },
  mutual_tls: { certificate_authority_ids: [`ca_${'0'.repeat(27)}`] },
  tls_termination: { terminate_at: 'edge', min_version: '1.2' },
  webhook_validation: { provider: 'github', secret: 's' },
  logging: { event_stream_ids: [] },
};

export const securedResources: SecuredResource[] = [
  { path: '/api_keys', create: () => ({ description: 'security suite' }), update: { description: 'changed' }, describable: true },
  { path: '/bot_users', create: () => ({ name: `bot-${unique()}` }), update: { name: `renamed-${unique()}` }, describable: false },
  {
    path: '/credentials',
    create: () => ({ description: 'security suite', acl: ['bind:app.example.com'] }),
    update: { description: 'changed' },
    describable: true,
  },
  {
    path: '/ssh_credentials',
    create: () => ({ description: 'security suite', acl: ['bind:app.example.com'], public_key: newPublicKey() }),
    update: { description: 'changed' },
    describable: true,
  },
  { path: '/ip_policies', create: () => ({ description: 'security suite' }), update: { description: 'changed' }, describable: true },
  {
    path: '/ip_policy_rules',
    create: async (api) => ({ ip_policy_id: await newPolicy(api), cidr: randomCidr(), action: 'allow' }),
    update: { description: 'changed' },
    describable: true,
  },
  {
    path: '/ip_restrictions',
    create: async (api) => ({ type: 'dashboard', ip_policy_ids: [await newPolicy(api)] }),
    update: { description: 'changed' },
    describable: true,
  },
  { path: '/backends/tunnel_group', create: () => ({ labels: { env: 'prod' } }), update: { description: 'changed' }, describable: true },
  { path: '/backends/http_response', create: () => ({ body: 'hi', status_code: 200 }), update: { description: 'changed' }, describable: true },
  { path: '/backends/static', create: () => ({ address: 'app.internal:8080' }), update: { description: 'changed' }, describable: true },
  { path: '/backends/failover', create: () => ({ backends: [] }), update: { description: 'changed' }, describable: true },
  { path: '/backends/weighted', create: () => ({ backends: {} }), update: { description: 'changed' }, describable: true },
  { path: '/ssh_certificate_authorities', create: () => ({ private_key_type: 'ed25519' }), update: { description: 'changed' }, describable: true },
  {
    path: '/ssh_user_certificates',
    create: async (api) => ({ ssh_certificate_authority_id: await newSshCa(api), public_key: newPublicKey(), principals: ['root'] }),
    update: { description: 'changed' },
    describable: true,
  },
  {
    path: '/ssh_host_certificates',
    create: async (api) => ({ ssh_certificate_authority_id: await newSshCa(api), public_key: newPublicKey(), principals: ['host.example.com'] }),
    update: { description: 'changed' },
    describable: true,
  },
  {
    path: '/tls_certificates',
    create: async () => {
      const chain = await makeChain({ names: [`${unique()}.example.com`] });
      return { certificate_pem: chain.chainPem, private_key_pem: chain.leaf.keyPem };
    },
    update: { description: 'changed' },
    describable: true,
  },
  {
    path: '/endpoint_configurations',
    create: () => ({ type: 'https' }),
    update: { description: 'changed' },
    describable: true,
    modules: ENDPOINT_CONFIGURATION_MODULE_BODIES,
  },
  {
    path: '/endpoints',
    // A cloud endpoint on a domain reserved for it (the agents' endpoints beside them are read-only: test/api/cloud-endpoints.test.ts).
    create: async (api) => {
      const domain = `${unique()}.example.com`;
      const res = await api.post('/reserved_domains', { domain });
      if (res.status !== 201) throw new Error(`could not reserve a domain: ${res.text}`);
      return { type: 'cloud', url: `https://${domain}`, traffic_policy: '{"on_http_request":[]}' };
    },
    update: { description: 'changed' },
    describable: true,
  },
  {
    path: '/reserved_domains',
    create: () => ({ domain: `${unique()}.example.com` }),
    update: { description: 'changed' },
    describable: true,
    parts: ['certificate_management_policy', 'certificate', 'http_endpoint_configuration', 'https_endpoint_configuration'],
  },
  {
    path: '/agent_ingresses',
    create: () => ({ domain: `${unique()}.example.net` }),
    update: { description: 'changed' },
    describable: true,
    parts: ['certificate_management_policy'],
  },
  {
    path: '/certificate_authorities',
    create: async () => ({ ca_pem: (await makeChain()).root.certPem }),
    update: { description: 'changed' },
    describable: true,
  },
  {
    path: '/edges/tls',
    create: () => ({ description: 'security suite' }),
    update: { description: 'changed' },
    describable: true,
    modules: {
      ...TCP_MODULE_BODIES,
      mutual_tls: { certificate_authority_ids: [`ca_${'0'.repeat(27)}`] },
      tls_termination: { terminate_at: 'edge', min_version: '1.2' },
    },
  },
  { path: '/reserved_addrs', create: () => ({ region: 'eu' }), update: { description: 'changed' }, describable: true, parts: ['endpoint_configuration'] },
  {
    path: '/edges/tcp',
    create: () => ({ description: 'security suite' }),
    update: { description: 'changed' },
    describable: true,
    modules: TCP_MODULE_BODIES,
  },
  {
    path: '/edges/https',
    create: () => ({ description: 'security suite' }),
    update: { description: 'changed' },
    describable: true,
    modules: {
      mutual_tls: { certificate_authority_ids: [`ca_${'0'.repeat(27)}`] },
      tls_termination: { min_version: '1.2' },
    },
  },
  {
    path: '/edges/https/{edge_id}/routes',
    parent: async (api) => `/edges/https/${await newHttpsEdge(api)}/routes`,
    list: false,
    // The edge shows its routes, oldest first.
    count: async (api, path) => {
      const edge = await api.get(path.replace(/\/routes$/, ''));
      if (edge.status !== 200) throw new Error(`could not read the HTTPS edge: ${edge.text}`);
      return edge.json.routes.length;
    },
    listedIn: '/edges/https',
    create: () => ({ match_type: 'path_prefix', match: `/${unique()}` }),
    update: { description: 'changed' },
    describable: true,
    modules: ROUTE_MODULE_BODIES,
  },
];

/** A kind the API only reads (its list and its items): its items are made by other requests. */
export interface ReadOnlyResource {
  path: string;
  /** Makes an item in the account of `api` and gives its id. */
  item(api: Api): Promise<string>;
  /** Actions on an item (`POST <item>/<action>` with `{}`): tunnel session commands. */
  actions?: string[];
}

/** The store of the server `api` talks to: live agents are written there, as an instance's LiveRecords would. */
const storeOf = (api: Api) => (api as unknown as { harness: Harness }).harness.deps.store;

/** Every read-only resource route, for the same suite. */
export const readOnlyResources: ReadOnlyResource[] = [
  {
    path: '/audit_events',
    // Every mutation records one.
    item: async (api) => {
      await newPolicy(api);
      const res = await api.get('/audit_events?limit=1');
      if (res.status !== 200) throw new Error(`could not list audit events: ${res.text}`);
      return res.json.audit_events[0].id;
    },
  },
  {
    path: '/tunnel_sessions',
    item: async (api) => (await seedLiveSession(storeOf(api), api.info.accountId)).session.id,
    actions: ['restart', 'stop', 'update'],
  },
  { path: '/tunnels', item: async (api) => (await seedLiveSession(storeOf(api), api.info.accountId)).bound.id },
];

async function newHttpsEdge(api: Api): Promise<string> {
  const res = await api.post('/edges/https', { description: 'parent of routes' });
  if (res.status !== 201) throw new Error(`could not create an HTTPS edge: ${res.text}`);
  return res.json.id;
}

async function newSshCa(api: Api): Promise<string> {
  const res = await api.post('/ssh_certificate_authorities', { private_key_type: 'ed25519' });
  if (res.status !== 201) throw new Error(`could not create an SSH CA: ${res.text}`);
  return res.json.id;
}

/** A fresh Ed25519 public key as an authorized-keys line. */
export function newPublicKey(): string {
  return authorizedKeysLine(toSshPublicKey(generateKeyPairSync('ed25519').publicKey), 'test@edgeplane');
}

async function newPolicy(api: Api): Promise<string> {
  const res = await api.post('/ip_policies', {});
  if (res.status !== 201) throw new Error(`could not create an IP policy: ${res.text}`);
  return res.json.id;
}

function randomCidr(): string {
  const b = randomBytes(3);
  return `10.${b[0]}.${b[1]}.${b[2]}/32`;
}
