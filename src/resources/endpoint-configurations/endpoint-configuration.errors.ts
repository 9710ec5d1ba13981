// The errors of endpoint configurations: their type and modules, deleting one still attached, and
// a reference to one from a reserved domain or a reserved address.
import { commaList, entry, shortList, throwersOf } from '../../core/errors.js';

export const endpointConfigurationCatalogue = {
  endpointConfigurationNotFound: entry<{ field: string; id: string }>(
    1600,
    400,
    'An endpoint configuration id names none of this account.',
    (a) => `${a.field} '${a.id}' is not an endpoint configuration (ec_…) of this account.`,
  ),
  endpointConfigurationType: entry<{ field: string; id: string; type: string; expected: string }>(
    428,
    400,
    'The endpoint configuration is of another type than the field takes.',
    (a) => `${a.field} '${a.id}' is an endpoint configuration of type ${a.type}; this field takes one of type ${a.expected}.`,
  ),
  invalidEndpointConfigurationType: entry<{ value: string }>(
    1622,
    400,
    'type of an endpoint configuration is not http, https or tcp.',
    (a) => `endpoint configuration type '${a.value}' is not supported; use http, https or tcp.`,
  ),
  endpointConfigurationInUse: entry<{ id: string; referrers: readonly string[] }>(
    1619,
    409,
    'The endpoint configuration is still attached to domains or addresses.',
    (a) => `endpoint configuration ${a.id} is still attached to ${shortList(a.referrers)}; detach it first.`,
  ),
  moduleNotAllowedForType: entry<{ module: string; type: string; allowed: readonly string[] }>(
    1621,
    400,
    'The module is not allowed on an endpoint configuration of this type.',
    (a) => `the ${a.module} module is not allowed on an endpoint configuration of type ${a.type}; the modules of that type are ${commaList(a.allowed)}.`,
  ),
} as const;

/** Error factories: `throw endpointConfigurationErrors.endpointConfigurationNotFound(…)`. */
export const endpointConfigurationErrors = throwersOf(endpointConfigurationCatalogue);
