// The two protocols a policy is checked for, TCP and HTTP: every action type each one knows (and
// the check of its config), the actions allowed in each direction of the policy module and in each
// phase of a traffic_policy document, and the CEL environment of each.
import { HTTP_CHECKS, TCP_CHECKS } from './action-configs.js';
import type { CelEnvName } from './cel.js';
import type { ConfigCheck } from './config-check.js';

export type PolicyProtocol = 'tcp' | 'http';

/** Where rules run: the CEL environment of their expressions and the actions allowed there. */
export interface Place {
  env: CelEnvName;
  actions: readonly string[];
}

export interface ProtocolSpec {
  /** Every action type of the protocol (sorted, as messages list them), and the check of each one's config. */
  actions: readonly string[];
  checks: Readonly<Record<string, ConfigCheck>>;
  /** The policy module's two directions, and the phases of a traffic_policy document. */
  directions: { inbound: Place; outbound: Place };
  phases: Readonly<Record<string, Place>>;
}

function protocolSpec(checks: Record<string, ConfigCheck>, places: Pick<ProtocolSpec, 'directions' | 'phases'>): ProtocolSpec {
  return { actions: Object.keys(checks).sort(), checks, ...places };
}

const HTTP_REQUEST_ACTIONS = [
  'add-headers',
  'custom-response',
  'deny',
  'jwt-validation',
  'log',
  'rate-limit',
  'redirect',
  'remove-headers',
  'restrict-ips',
  'url-rewrite',
] as const;
// forward-internal is an action of a traffic_policy document's request phase only (the older policy
// module's inbound direction predates it).
const HTTP_DOCUMENT_REQUEST_ACTIONS = [...HTTP_REQUEST_ACTIONS, 'forward-internal'] as const;
const HTTP_RESPONSE_ACTIONS = ['add-headers', 'compress-response', 'custom-response', 'log', 'remove-headers'] as const;

export const PROTOCOLS: Record<PolicyProtocol, ProtocolSpec> = {
  tcp: protocolSpec(TCP_CHECKS, {
    directions: { inbound: { env: 'tcp', actions: ['deny', 'log', 'restrict-ips'] }, outbound: { env: 'tcp', actions: ['log'] } },
    // forward-internal and close-connection: a traffic_policy document's only, as on HTTP.
    phases: { on_tcp_connect: { env: 'tcp', actions: ['close-connection', 'deny', 'forward-internal', 'log', 'restrict-ips'] } },
  }),
  // The policy module's inbound runs on requests and its outbound on responses, as the document's two phases do.
  http: protocolSpec(HTTP_CHECKS, {
    directions: {
      inbound: { env: 'policy_http_request', actions: HTTP_REQUEST_ACTIONS },
      outbound: { env: 'policy_http_response', actions: HTTP_RESPONSE_ACTIONS },
    },
    phases: {
      on_http_request: { env: 'http_request', actions: HTTP_DOCUMENT_REQUEST_ACTIONS },
      on_http_response: { env: 'http_response', actions: HTTP_RESPONSE_ACTIONS },
    },
  }),
};
