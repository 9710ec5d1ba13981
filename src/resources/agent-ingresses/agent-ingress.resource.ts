// Agent ingresses: a domain of the user's, delegated to the service's nameservers, under which
// agents connect at tunnel.<region>.<domain>. The domain is unique across accounts and may not
// be the service's own. The domain and every name under it belong to the ingress's account: no
// other account's reserved domain or ingress may be at, under or (a wildcard) over it. Its uri is
// a path, as the spec shows; the list's is absolute.
import type { DomainSettings } from '../../config.js';
import type { CrossAccountReader } from '../../db/cross-account.js';
import { describedChanges, describedColumns } from '../../core/schema.js';
import { defineResource } from '../../crud/definition.js';
import type { AgentIngressesTable } from '../../db/schema.js';
import { certificateManagementToApi, followCertificateChange, NO_MANAGEMENT, policyChanges, readPolicy } from '../../certificates/certificate-management.js';
import { checkIngressOwnsItsNames, checkNameFree, readDomain, reversedName, serviceOwner } from '../reserved-domains/domain-names.js';
import { regionDomains } from '../../certificates/certificate-subjects.js';
import { certificateReference } from '../tls-certificates/tls-certificate.resource.js';
import { agentIngressCatalogue, agentIngressErrors } from './agent-ingress.errors.js';
import { AgentIngress, AgentIngressCreate, AgentIngressUpdate } from './agent-ingress.schema.js';

/** `across`: for the checks against every account's names. */
export function agentIngressDefinition(settings: DomainSettings, across: CrossAccountReader) {
  return defineResource({
    kind: 'agent_ingress',
    title: 'agent ingress',
    errors: agentIngressCatalogue,
    prefix: 'agin',
    path: '/agent_ingresses',
    listKey: 'ingresses',
    table: 'agent_ingresses',
    uri: 'path',
    schemas: { resource: AgentIngress, create: AgentIngressCreate, update: AgentIngressUpdate },
    immutable: ['domain'],
    // Written only by the certificate job: the certificate issued for it cannot be deleted under it.
    references: [certificateReference<AgentIngressesTable>()],

    prepare(ctx, body) {
      const { name } = readDomain(body.domain, { wildcard: false });
      const base = serviceOwner(settings, name);
      if (base !== undefined) throw agentIngressErrors.ingressUnderServiceDomain({ value: name, base });
      const policy = body.certificate_management_policy ? readPolicy(body.certificate_management_policy) : undefined;
      return {
        row: {
          ...describedColumns(body),
          domain: name,
          domain_reversed: reversedName(name),
          certificate_id: null,
          ...NO_MANAGEMENT,
          ...(policy && policyChanges(undefined, policy, ctx.now)),
        },
      };
    },

    patch(ctx, body, current): Partial<AgentIngressesTable> {
      const policy = body.certificate_management_policy != null ? readPolicy(body.certificate_management_policy) : undefined;
      return { ...describedChanges(body), ...(policy && policyChanges(current, policy, ctx.now)) };
    },

    detach: { certificate_management_policy: () => NO_MANAGEMENT },

    hooks: {
      async beforeCreate(db, _ctx, row) {
        await checkNameFree(across, db, 'agent_ingresses', row.domain, {
          mine: (id) => agentIngressErrors.ingressTakenByYou({ value: row.domain, id }),
          other: () => agentIngressErrors.ingressTakenByOther({ value: row.domain }),
        });
        await checkIngressOwnsItsNames(across, db, row.domain);
      },
      afterWrite: followCertificateChange,
      onUniqueViolation: (target, row) =>
        target === 'agent_ingresses_domain_key' ? agentIngressErrors.ingressTakenByOther({ value: String(row.domain) }) : undefined,
    },

    toApi: (row: AgentIngressesTable) => ({
      id: row.id,
      description: row.description,
      metadata: row.metadata,
      domain: row.domain,
      ns_targets: settings.nameservers,
      region_domains: regionDomains(row.domain, settings),
      created_at: row.created_at,
      ...certificateManagementToApi(row),
    }),
  });
}
