// The resources edge configuration names by id, declared here, below both the module kinds that
// name them and the resource kinds that are named, so that neither imports the other: backends
// (named by the backend module and by failover and weighted backends) and IP policies (named by
// IP restriction modules, traffic policies, IP policy rules and IP restrictions).
import { sharedValueErrors } from './shared-value.errors.js';

/** The kinds a backend id may be of. */
export const BACKEND_KINDS = ['tunnel_group_backend', 'http_response_backend', 'static_backend', 'failover_backend', 'weighted_backend'] as const;

/** The 400 for an id in `field` that is no backend of the account. */
export const backendNotFound = (field: string) => (id: string) => sharedValueErrors.backendNotFound({ field, id });

/** The 400 for an id in `field` that is no IP policy of the account. */
export const policyNotFound = (field: string) => (id: string) => sharedValueErrors.ipPolicyNotFound({ field, id });

/** How many IP policies one restriction (a resource or a module) may name. */
export const MAX_POLICIES_PER_RESTRICTION = 50;
