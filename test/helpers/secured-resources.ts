// Every resource route the API serves, for the shared security suite. A new resource kind
// joins the suite with one line here; test/api/security.test.ts fails while a routed path
// is missing from this list.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { authorizedKeysLine, toSshPublicKey } from '../../src/lib/ssh/keys.js';
import { makeChain } from './certs.js';
import type { Api } from './harness.js';

export interface SecuredResource {
  path: string;
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

export const securedResources: SecuredResource[] = [
  { path: '/api_keys', create: () => ({ description: 'security suite' }), update: { description: 'changed' }, describable: true },
  { path: '/bot_users', create: () => ({ name: `bot-${unique()}` }), update: { name: `renamed-${unique()}` }, describable: false },
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
  { path: '/endpoint_configurations', create: () => ({ type: 'https' }), update: { description: 'changed' }, describable: true },
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
];

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
