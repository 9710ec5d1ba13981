// Reserved domains. A name is unique across all accounts, and a wildcard covers every name under
// its base, so a reservation is checked against every account's names (without revealing them)
// under one lock across accounts, taken in the transaction. Names under a service-owned base are
// served by the platform's certificate: no CNAME target, no certificate, no policy. Others get a
// random CNAME target (and, for a wildcard, one for its ACME challenge), and take either an
// uploaded certificate that names them or a certificate management policy.
import type { DomainSettings } from '../../config.js';
import type { RequestContext } from '../../core/context.js';
import { errors } from '../../core/errors.js';
import { describedChanges, describedColumns, describedResponse } from '../../core/schema.js';
import { defineResource } from '../../crud/definition.js';
import type { CrossAccountReader } from '../../db/cross-account.js';
import type { ScopedDb } from '../../db/scoped.js';
import type { ReservedDomainsTable } from '../../db/schema.js';
import { certificateNameCovers } from '../../lib/dns/names.js';
import {
  certificateManagementToApi,
  followCertificateChange,
  isManaged,
  NO_MANAGEMENT,
  policyChanges,
  readPolicy,
  type CertPolicyBody,
} from '../../certificates/certificate-management.js';
import { endpointConfigurationErrors } from '../endpoint-configurations/endpoint-configuration.errors.js';
import { tlsCertificateErrors } from '../tls-certificates/tls-certificate.errors.js';
import { certificateReference } from '../tls-certificates/tls-certificate.resource.js';
import {
  checkNameFree,
  checkOutsideOthersIngresses,
  heldByOthers,
  parentsOf,
  randomTarget,
  readDomain,
  reversedName,
  reversedRangeUnder,
  serviceBaseOf,
} from './domain-names.js';
import { reservedDomainCatalogue, reservedDomainErrors } from './reserved-domain.errors.js';
import { ReservedDomain, ReservedDomainCreate, ReservedDomainUpdate } from './reserved-domain.schema.js';

const ENDPOINT_CONFIGURATION_FIELDS = [
  { column: 'http_endpoint_configuration_id', type: 'http' },
  { column: 'https_endpoint_configuration_id', type: 'https' },
] as const;

/** Throws 413/414/417/454 when the name, or a name it overlaps through a wildcard or an agent ingress, is already another's. */
async function checkAvailable(across: CrossAccountReader, db: ScopedDb, name: string): Promise<void> {
  await checkNameFree(across, db, 'reserved_domains', name, {
    mine: (id) => reservedDomainErrors.domainTakenByYou({ value: name, id }),
    other: () => reservedDomainErrors.domainTakenByOther({ value: name }),
  });
  // Another account's wildcard whose base this name is under (`*.example.com` over `a.b.example.com`).
  const coveringWildcards = parentsOf(name)
    .map((base) => `*.${base}`)
    .filter((w) => w !== name);
  if (await heldByOthers(across, db, 'reserved_domains', 'domain', { equal: coveringWildcards })) throw reservedDomainErrors.wildcardConflict({ value: name });
  // A wildcard over another account's names (`*.example.com` over `app.example.com`).
  if (name.startsWith('*.')) {
    const under = await heldByOthers(across, db, 'reserved_domains', 'domain_reversed', reversedRangeUnder(name.slice(2)));
    if (under) throw reservedDomainErrors.wildcardConflict({ value: name });
  }
  await checkOutsideOthersIngresses(across, db, name);
}

/** An uploaded certificate of the account that names the domain, or the 400. */
async function checkCertificate(db: ScopedDb, certificateId: string, domain: string): Promise<void> {
  const cert = await db.find('tls_certificates', certificateId);
  if (!cert) throw tlsCertificateErrors.tlsCertificateNotFound({ id: certificateId });
  if (cert.issued_at !== null) throw reservedDomainErrors.certificateIssued({ id: certificateId });
  const names = JSON.parse(cert.dns_names) as string[];
  if (!names.some((n) => certificateNameCovers(n, domain))) throw reservedDomainErrors.certificateNotCovering({ id: certificateId, domain, names });
}

/** Endpoint configurations named by the row are of the type their field takes. */
async function checkEndpointConfigurations(db: ScopedDb, row: Partial<ReservedDomainsTable>): Promise<void> {
  for (const { column, type } of ENDPOINT_CONFIGURATION_FIELDS) {
    const id = row[column];
    if (typeof id !== 'string') continue;
    const configuration = await db.find('endpoint_configurations', id);
    if (!configuration) throw endpointConfigurationErrors.endpointConfigurationNotFound({ field: column, id });
    if (configuration.type !== type)
      throw endpointConfigurationErrors.endpointConfigurationType({ field: column, id, type: configuration.type, expected: type });
  }
}

/** The certificate fields of a request on a domain: one source at most, and none under a service-owned base. */
function checkCertificateSources(
  domain: string,
  serviceOwned: boolean,
  body: { certificate_id?: string | null; certificate_management_policy?: CertPolicyBody | null },
) {
  const hasCertificate = body.certificate_id != null;
  const hasPolicy = body.certificate_management_policy != null;
  if (hasCertificate && hasPolicy) throw reservedDomainErrors.certificateSourceTwice();
  if (serviceOwned && hasPolicy) throw reservedDomainErrors.serviceDomainPolicy({ value: domain });
  if (serviceOwned && hasCertificate) throw reservedDomainErrors.serviceDomainCertificate({ value: domain });
}

/** `across`: for the checks against every account's names. */
export function reservedDomainDefinition(settings: DomainSettings, across: CrossAccountReader) {
  const endpointConfigurationNotFound = (field: string) => (id: string) => endpointConfigurationErrors.endpointConfigurationNotFound({ field, id });
  return defineResource({
    kind: 'reserved_domain',
    title: 'reserved domain',
    errors: reservedDomainCatalogue,
    prefix: 'rd',
    path: '/reserved_domains',
    listKey: 'reserved_domains',
    table: 'reserved_domains',
    schemas: { resource: ReservedDomain, create: ReservedDomainCreate, update: ReservedDomainUpdate },
    immutable: ['domain', 'region'],
    inUse: (id, edges) => reservedDomainErrors.domainInUseByEdge({ id, edges }),
    references: [
      certificateReference<ReservedDomainsTable>(),
      ...ENDPOINT_CONFIGURATION_FIELDS.map(({ column }) => ({
        in: 'column' as const,
        column,
        kinds: ['endpoint_configuration'],
        notFound: endpointConfigurationNotFound(column),
        onDelete: 'restrict' as const,
      })),
    ],

    prepare(ctx: RequestContext, body) {
      const { name, wildcard } = readDomain(body.domain, { wildcard: true });
      const serviceBase = serviceBaseOf(settings, name);
      // The official Python client sends "" for every string it was not given: "" is no region,
      // and no certificate or configuration.
      if (body.region && !settings.regions.includes(body.region)) throw errors.invalidRegion({ value: body.region, regions: settings.regions });
      const references = {
        certificate_id: body.certificate_id || null,
        http_endpoint_configuration_id: body.http_endpoint_configuration_id || null,
        https_endpoint_configuration_id: body.https_endpoint_configuration_id || null,
      };
      checkCertificateSources(name, serviceBase !== undefined, { ...body, ...references });
      const policy = body.certificate_management_policy ? readPolicy(body.certificate_management_policy) : undefined;
      const own = serviceBase === undefined;
      return {
        row: {
          ...describedColumns(body),
          domain: name,
          domain_reversed: reversedName(name),
          region: body.region ?? null,
          cname_target: own ? randomTarget(settings.cnameZone) : null,
          acme_challenge_cname_target: own && wildcard ? randomTarget(settings.acmeChallengeZone) : null,
          ...references,
          ...NO_MANAGEMENT,
          ...(policy && policyChanges(undefined, policy, ctx.now)),
        },
      };
    },

    patch(ctx, body, current): Partial<ReservedDomainsTable> {
      // Only names under a service-owned base were given no CNAME target.
      checkCertificateSources(current.domain, current.cname_target === null, body);
      if (body.certificate_id != null && isManaged(current)) throw reservedDomainErrors.managedCertificateAttached({ id: current.id });
      const policy = body.certificate_management_policy != null ? readPolicy(body.certificate_management_policy) : undefined;
      return {
        ...describedChanges(body),
        ...(body.certificate_id != null && { certificate_id: body.certificate_id }),
        ...(body.http_endpoint_configuration_id != null && { http_endpoint_configuration_id: body.http_endpoint_configuration_id }),
        ...(body.https_endpoint_configuration_id != null && { https_endpoint_configuration_id: body.https_endpoint_configuration_id }),
        ...(policy && policyChanges(current, policy, ctx.now)),
      };
    },

    detach: {
      certificate_management_policy: () => NO_MANAGEMENT,
      certificate: (row) => {
        if (isManaged(row)) throw reservedDomainErrors.managedCertificateAttached({ id: row.id });
        return row.certificate_id === null ? {} : { certificate_id: null };
      },
      http_endpoint_configuration: (row) => (row.http_endpoint_configuration_id === null ? {} : { http_endpoint_configuration_id: null }),
      https_endpoint_configuration: (row) => (row.https_endpoint_configuration_id === null ? {} : { https_endpoint_configuration_id: null }),
    },

    hooks: {
      async beforeCreate(db, _ctx, row) {
        await checkAvailable(across, db, row.domain);
        if (row.certificate_id !== null) await checkCertificate(db, row.certificate_id, row.domain);
        await checkEndpointConfigurations(db, row);
      },
      async beforeUpdate(db, _ctx, current, changes) {
        if (changes.certificate_id) await checkCertificate(db, changes.certificate_id, current.domain);
        await checkEndpointConfigurations(db, changes);
      },
      afterWrite: followCertificateChange,
      onUniqueViolation: (target, row) =>
        target === 'reserved_domains_domain_key' ? reservedDomainErrors.domainTakenByOther({ value: String(row.domain) }) : undefined,
    },

    toApi: (row: ReservedDomainsTable, view) => ({
      ...describedResponse(row),
      domain: row.domain,
      region: row.region,
      cname_target: row.cname_target,
      certificate: row.certificate_id === null ? null : view.ref(row.certificate_id),
      ...certificateManagementToApi(row),
      acme_challenge_cname_target: row.acme_challenge_cname_target,
      http_endpoint_configuration: row.http_endpoint_configuration_id === null ? null : view.ref(row.http_endpoint_configuration_id),
      https_endpoint_configuration: row.https_endpoint_configuration_id === null ? null : view.ref(row.https_endpoint_configuration_id),
    }),
  });
}
