import { Type } from '@sinclair/typebox';
import { Body, DescribedCreate, DescribedFields, DescribedPatch, Nullable } from '../../core/schema.js';
import { moduleFields, moduleRequestFields, type ModuleDefinition } from '../../crud/modules.js';

/** Fields newer responses carry that no endpoint configuration sets: always null. */
export const UNSET_FIELDS = ['backend', 'basic_auth'] as const;

export function endpointConfigurationSchemas(modules: readonly ModuleDefinition[]) {
  return {
    resource: Type.Object(
      {
        ...DescribedFields('ec'),
        type: Type.String({ description: 'http, https or tcp' }),
        ...moduleFields(modules),
        ...Object.fromEntries(UNSET_FIELDS.map((m) => [m, Nullable(Type.Object({}, { additionalProperties: true, description: 'always null' }))])),
      },
      { description: 'endpoint configuration (legacy): modules applied to the domains or addresses it is attached to' },
    ),
    create: Body({
      ...DescribedCreate,
      type: Type.String({ maxLength: 16, description: 'http, https or tcp; fixed at creation' }),
      ...moduleRequestFields(modules),
    }),
    update: Body({ ...DescribedPatch, ...moduleRequestFields(modules) }),
  };
}
