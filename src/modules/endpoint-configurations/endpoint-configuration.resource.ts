// Endpoint configurations (legacy): a type fixed at creation and, later, modules. Reserved
// domains attach them by type (http, https); one still attached cannot be deleted.
import { errors } from '../../core/errors.js';
import { describedColumns, describedResponse } from '../../core/schema.js';
import { defineResource } from '../../crud/definition.js';
import type { EndpointConfigurationsTable, EndpointConfigurationType } from '../../db/schema.js';
import {
  ENDPOINT_CONFIGURATION_MODULES,
  EndpointConfiguration,
  EndpointConfigurationCreate,
  EndpointConfigurationUpdate,
} from './endpoint-configuration.schema.js';

export const ENDPOINT_CONFIGURATION_TYPES: readonly EndpointConfigurationType[] = ['http', 'https', 'tcp'];

const noModules = Object.fromEntries(ENDPOINT_CONFIGURATION_MODULES.map((m) => [m, null]));

export const endpointConfigurationDefinition = defineResource({
  kind: 'endpoint_configuration',
  title: 'endpoint configuration',
  prefix: 'ec',
  path: '/endpoint_configurations',
  listKey: 'endpoint_configurations',
  table: 'endpoint_configurations',
  schemas: { resource: EndpointConfiguration, create: EndpointConfigurationCreate, update: EndpointConfigurationUpdate },
  immutable: ['type'],
  inUse: (id, referrers) => errors.endpointConfigurationInUse({ id, referrers }),

  prepare(_ctx, body) {
    const type = body.type as EndpointConfigurationType;
    if (!ENDPOINT_CONFIGURATION_TYPES.includes(type)) throw errors.invalidEndpointConfigurationType({ value: body.type });
    return { row: { ...describedColumns(body), type } };
  },

  toApi: (row: EndpointConfigurationsTable) => ({
    ...describedResponse(row),
    type: row.type,
    ...noModules,
  }),
});
