import { backendModule, ipRestrictionModule, policyModule, trafficPolicyModule } from '../edge-modules/edge-modules.js';

/** The modules of a TCP edge. */
export const TCP_EDGE_MODULES = [backendModule, ipRestrictionModule, policyModule('tcp'), trafficPolicyModule('tcp')] as const;
