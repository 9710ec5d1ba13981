import { Type } from '@sinclair/typebox';
import { Body, DescribedCreate, DescribedFields, DescribedPatch, Nullable } from '../../core/schema.js';

/**
 * The module fields of an endpoint configuration. Their bodies arrive with the edges' modules;
 * until then each is present and null, so that clients that read them find every key.
 */
export const ENDPOINT_CONFIGURATION_MODULES = [
  'circuit_breaker',
  'compression',
  'request_headers',
  'response_headers',
  'ip_policy',
  'mutual_tls',
  'tls_termination',
  'webhook_validation',
  'oauth',
  'logging',
  'saml',
  'oidc',
  'backend',
  'basic_auth',
] as const;

export const EndpointConfiguration = Type.Object(
  {
    ...DescribedFields('ec'),
    type: Type.String({ description: 'http, https or tcp' }),
    ...Object.fromEntries(ENDPOINT_CONFIGURATION_MODULES.map((m) => [m, Nullable(Type.Object({}, { additionalProperties: true }))])),
  },
  { description: 'endpoint configuration (legacy): modules applied to the domains or addresses it is attached to' },
);

export const EndpointConfigurationCreate = Body({
  ...DescribedCreate,
  type: Type.String({ maxLength: 16, description: 'http, https or tcp; fixed at creation' }),
});
export const EndpointConfigurationUpdate = Body(DescribedPatch);
