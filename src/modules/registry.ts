// Every resource kind the API serves. A new kind is one line here.
import type { Store } from '../db/store.js';
import type { Sealer } from '../lib/crypto/sealer.js';
import type { Authenticator } from '../http/auth.js';
import { apiKeysResource } from './api-keys/api-key.resource.js';
import { backendResources } from './backends/backend.resources.js';
import { botUsersResource } from './bot-users/bot-user.resource.js';
import { ipPoliciesResource } from './ip-policies/ip-policy.resource.js';
import { ipPolicyRulesResource } from './ip-policy-rules/ip-policy-rule.resource.js';
import type { ApiIpGuard } from './ip-restrictions/api-ip-guard.js';
import { ipRestrictionsResource } from './ip-restrictions/ip-restriction.resource.js';
import { sshCertificateAuthoritiesResource } from './ssh/ssh-ca.resource.js';
import { sshCertificateResources } from './ssh/ssh-certificate.resource.js';

export interface ResourceDeps {
  store: Store;
  auth: Authenticator;
  ipGuard: ApiIpGuard;
  sealer: Sealer;
}

export function buildResources({ store, auth, ipGuard, sealer }: ResourceDeps) {
  const ipChanged = (accountId: string) => ipGuard.invalidate(accountId);
  return {
    apiKeys: apiKeysResource(store, auth),
    botUsers: botUsersResource(store, auth),
    ipPolicies: ipPoliciesResource(store),
    ipPolicyRules: ipPolicyRulesResource(store, ipChanged),
    ipRestrictions: ipRestrictionsResource(store, ipChanged),
    ...backendResources(store),
    sshCertificateAuthorities: sshCertificateAuthoritiesResource(store, sealer),
    ...sshCertificateResources(store, sealer),
  };
}

export type Resources = ReturnType<typeof buildResources>;
