// The edge's traffic policy evaluator: a policy module (`policy` or `traffic_policy`, as the
// control plane stored it) compiled once into what the HTTP and TCP ingress call on each request,
// response and connection. Pure of I/O but for jwt-validation's JWKS fetches (through
// PolicyDeps.fetch) and log lines (PolicyDeps.log). See policy.ts for how a policy runs.
export { compileHttpPolicy, compileTcpPolicy } from './policy.js';
export type {
  ConnectDecision,
  HeaderField,
  HttpPolicy,
  PolicyConnection,
  PolicyDeps,
  PolicyError,
  PolicyModule,
  PolicyRequest,
  PolicyResponse,
  Refusal,
  RequestDecision,
  ResponseDecision,
  TcpPolicy,
} from './types.js';
