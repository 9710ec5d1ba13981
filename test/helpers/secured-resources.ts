// Every resource route the API serves, for the shared security suite. A new resource kind
// joins the suite with one line here; test/api/security.test.ts fails while a routed path
// is missing from this list.
import { randomBytes } from 'node:crypto';
import type { Api } from './harness.js';

export interface SecuredResource {
  path: string;
  /** A valid create body, made in the account of `api` (it may create what it references). */
  create(api: Api): Promise<Record<string, unknown>> | Record<string, unknown>;
  /** A valid update body. */
  update: Record<string, unknown>;
  /** Whether the resource has description and metadata. */
  describable: boolean;
}

const unique = () => randomBytes(4).toString('hex');

export const securedResources: SecuredResource[] = [
  { path: '/api_keys', create: () => ({ description: 'security suite' }), update: { description: 'changed' }, describable: true },
  { path: '/bot_users', create: () => ({ name: `bot-${unique()}` }), update: { name: `renamed-${unique()}` }, describable: false },
  { path: '/ip_policies', create: () => ({ description: 'security suite' }), update: { description: 'changed' }, describable: true },
  { path: '/ip_policy_rules', create: async (api) => ({ ip_policy_id: await newPolicy(api), cidr: randomCidr(), action: 'allow' }), update: { description: 'changed' }, describable: true },
  { path: '/ip_restrictions', create: async (api) => ({ type: 'dashboard', ip_policy_ids: [await newPolicy(api)] }), update: { description: 'changed' }, describable: true },
  { path: '/backends/tunnel_group', create: () => ({ labels: { env: 'prod' } }), update: { description: 'changed' }, describable: true },
  { path: '/backends/http_response', create: () => ({ body: 'hi', status_code: 200 }), update: { description: 'changed' }, describable: true },
  { path: '/backends/static', create: () => ({ address: 'app.internal:8080' }), update: { description: 'changed' }, describable: true },
  { path: '/backends/failover', create: () => ({ backends: [] }), update: { description: 'changed' }, describable: true },
  { path: '/backends/weighted', create: () => ({ backends: {} }), update: { description: 'changed' }, describable: true },
];

async function newPolicy(api: Api): Promise<string> {
  const res = await api.post('/ip_policies', {});
  if (res.status !== 201) throw new Error(`could not create an IP policy: ${res.text}`);
  return res.json.id;
}

function randomCidr(): string {
  const b = randomBytes(3);
  return `10.${b[0]}.${b[1]}.${b[2]}/32`;
}
