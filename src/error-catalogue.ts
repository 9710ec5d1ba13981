// Every error the API can answer with, gathered from the catalogues that live beside the code that
// throws them (src/core/errors.ts for the errors that are no one kind's, a `<name>.errors.ts` for
// each kind or feature). It sits at the top of src because it must see core, resources,
// edge-config and certificates; only scripts/errors-doc.ts, which writes docs/errors.md from it,
// and the tests import it. A new catalogue is added to CATALOGUES below, or it is in no document.
import { certificateManagementCatalogue } from './certificates/certificate-management.errors.js';
import { coreCatalogue, type Catalogue } from './core/errors.js';
import { hostportCatalogue } from './edge-config/hostports/hostport.errors.js';
import { edgeModuleCatalogue } from './edge-config/modules/edge-module.errors.js';
import { trafficPolicyCatalogue } from './edge-config/traffic-policy/traffic-policy.errors.js';
import { agentIngressCatalogue } from './resources/agent-ingresses/agent-ingress.errors.js';
import { backendCatalogue } from './resources/backends/backend.errors.js';
import { botUserCatalogue } from './resources/bot-users/bot-user.errors.js';
import { certificateAuthorityCatalogue } from './resources/certificate-authorities/certificate-authority.errors.js';
import { credentialCatalogue } from './resources/credentials/credential.errors.js';
import { endpointConfigurationCatalogue } from './resources/endpoint-configurations/endpoint-configuration.errors.js';
import { httpsEdgeCatalogue } from './resources/https-edges/https-edge.errors.js';
import { ipPolicyCatalogue } from './resources/ip-policies/ip-policy.errors.js';
import { ipPolicyRuleCatalogue } from './resources/ip-policy-rules/ip-policy-rule.errors.js';
import { ipRestrictionCatalogue } from './resources/ip-restrictions/ip-restriction.errors.js';
import { reservedAddrCatalogue } from './resources/reserved-addrs/reserved-addr.errors.js';
import { reservedDomainCatalogue } from './resources/reserved-domains/reserved-domain.errors.js';
import { sshCertificateAuthorityCatalogue } from './resources/ssh-certificate-authorities/ssh-certificate-authority.errors.js';
import { sshCertificateCatalogue } from './resources/ssh-certificates/ssh-certificate.errors.js';
import { tcpEdgeCatalogue } from './resources/tcp-edges/tcp-edge.errors.js';
import { tlsCertificateCatalogue } from './resources/tls-certificates/tls-certificate.errors.js';
import { tunnelSessionCatalogue } from './resources/tunnel-sessions/tunnel-session.errors.js';

/** Every catalogue, by the name it is exported under (which the load-time check names). */
export const CATALOGUES: Readonly<Record<string, Catalogue>> = {
  coreCatalogue,
  agentIngressCatalogue,
  backendCatalogue,
  botUserCatalogue,
  certificateAuthorityCatalogue,
  certificateManagementCatalogue,
  credentialCatalogue,
  edgeModuleCatalogue,
  endpointConfigurationCatalogue,
  hostportCatalogue,
  httpsEdgeCatalogue,
  ipPolicyCatalogue,
  ipPolicyRuleCatalogue,
  ipRestrictionCatalogue,
  reservedAddrCatalogue,
  reservedDomainCatalogue,
  sshCertificateAuthorityCatalogue,
  sshCertificateCatalogue,
  tcpEdgeCatalogue,
  tlsCertificateCatalogue,
  trafficPolicyCatalogue,
  tunnelSessionCatalogue,
};

/** One error as the documentation shows it, with the catalogue it comes from. */
export interface CatalogueError {
  name: string;
  catalogue: string;
  code: number;
  status: number;
  meaning: string;
}

/**
 * The errors of the catalogues, in one list. Throws if two entries share a code (a client could not
 * tell them apart) or a name (`errors.x` would not say which one is meant when read or searched).
 */
export function gatherCatalogues(catalogues: Readonly<Record<string, Catalogue>>): CatalogueError[] {
  const gathered: CatalogueError[] = [];
  const byCode = new Map<number, CatalogueError>();
  const byName = new Map<string, CatalogueError>();
  for (const [catalogue, entries] of Object.entries(catalogues)) {
    for (const [name, { code, status, meaning }] of Object.entries(entries)) {
      const error = { name, catalogue, code, status, meaning };
      const sameCode = byCode.get(code);
      if (sameCode) throw new Error(`ERR_EP_${code} is the code of both ${where(sameCode)} and ${where(error)}; give each error its own code`);
      const sameName = byName.get(name);
      if (sameName) throw new Error(`${where(sameName)} and ${where(error)} have the same name; give each error its own name`);
      byCode.set(code, error);
      byName.set(name, error);
      gathered.push(error);
    }
  }
  return gathered;
}

const where = (error: CatalogueError) => `${error.catalogue}.${error.name}`;

/** Every error the API can answer with; gathering it at load time fails if two share a code or a name. */
export const ERROR_CATALOGUE: readonly CatalogueError[] = gatherCatalogues(CATALOGUES);
