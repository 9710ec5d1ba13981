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
];
