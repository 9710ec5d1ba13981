// Endpoint configurations (legacy): a type fixed at creation and the modules that type allows,
// each the definition edges and routes use. Reserved domains attach them by type (http, https)
// and reserved addresses as tcp; one still attached cannot be deleted.
import { describedColumns, describedResponse } from '../../core/schema.js';
import { defineResource } from '../../crud/definition.js';
import type { EndpointConfigurationsTable, EndpointConfigurationType } from './endpoint-configuration.table.js';
import type { Sealer } from '../../lib/crypto/sealer.js';
import { ipPolicyModule, loggingModule, mutualTlsModule, tlsTerminationModule } from '../../edge-config/modules/edge-modules.js';
import {
  circuitBreakerModule,
  compressionModule,
  requestHeadersModule,
  responseHeadersModule,
  webhookVerificationModule,
} from '../../edge-config/modules/route-modules.js';
import { oauthModule, oidcModule, samlModule } from '../../edge-config/modules/sign-in-modules.js';
import { endpointConfigurationCatalogue, endpointConfigurationErrors } from './endpoint-configuration.errors.js';
import { UNSET_FIELDS, endpointConfigurationSchemas } from './endpoint-configuration.schema.js';

export const ENDPOINT_CONFIGURATION_TYPES: readonly EndpointConfigurationType[] = ['http', 'https', 'tcp'];

const HTTP_MODULES = [
  'circuit_breaker',
  'compression',
  'request_headers',
  'response_headers',
  'ip_policy',
  'webhook_validation',
  'oauth',
  'logging',
  'saml',
  'oidc',
] as const;

/** The modules each type allows: TCP only screens and logs; HTTPS adds what TLS needs. */
export const ALLOWED_MODULES: Record<EndpointConfigurationType, readonly string[]> = {
  http: HTTP_MODULES,
  https: [...HTTP_MODULES, 'mutual_tls', 'tls_termination'],
  tcp: ['ip_policy', 'logging'],
};

const unset = Object.fromEntries(UNSET_FIELDS.map((m) => [m, null]));

export function endpointConfigurationDefinition(sealer: Sealer) {
  const modules = [
    circuitBreakerModule,
    compressionModule,
    requestHeadersModule,
    responseHeadersModule,
    ipPolicyModule,
    mutualTlsModule,
    tlsTerminationModule,
    webhookVerificationModule('webhook_validation'),
    oauthModule(sealer),
    loggingModule,
    samlModule(sealer),
    oidcModule(sealer),
  ];
  return defineResource({
    kind: 'endpoint_configuration',
    title: 'endpoint configuration',
    errors: endpointConfigurationCatalogue,
    prefix: 'ec',
    path: '/endpoint_configurations',
    listKey: 'endpoint_configurations',
    table: 'endpoint_configurations',
    schemas: endpointConfigurationSchemas(modules),
    modules,
    immutable: ['type'],
    inUse: (id, referrers) => endpointConfigurationErrors.endpointConfigurationInUse({ id, referrers }),

    prepare(_ctx, body) {
      const type = body.type as EndpointConfigurationType;
      if (!ENDPOINT_CONFIGURATION_TYPES.includes(type)) throw endpointConfigurationErrors.invalidEndpointConfigurationType({ value: body.type });
      return { row: { ...describedColumns(body), type } };
    },

    moduleRules: [
      // Each type of configuration takes only some of the modules.
      ({ owner, changed }) => {
        const allowed = ALLOWED_MODULES[owner.type];
        const refused = changed.find((name) => !allowed.includes(name));
        return refused ? endpointConfigurationErrors.moduleNotAllowedForType({ module: refused, type: owner.type, allowed }) : undefined;
      },
    ],

    toApi: (row: EndpointConfigurationsTable) => ({ ...describedResponse(row), type: row.type, ...unset }),
  });
}
