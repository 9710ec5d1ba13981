// What the edge's traffic policy evaluator is given (the connection, the request, the response,
// the configuration it reads through PolicyDeps) and what it answers. Pure data: the ingress
// builds these from its sockets and acts on the decisions.

/** A header as a field line: its name as received (any case) and its value. */
export type HeaderField = [name: string, value: string];

export interface PolicyConnection {
  clientIp: string;
  clientPort: number;
  serverIp: string;
  serverPort: number;
  startedAt: Date;
  endpoint: { id: string; host: string; port: number; url: string; addr: string; protocol: 'http' | 'https' | 'tcp' | 'tls' };
}

/** A request; mutated in place by add-headers, remove-headers and url-rewrite of the request phase. */
export interface PolicyRequest {
  method: string;
  scheme: 'http' | 'https';
  /** The Host header (or :authority), port included when the client gave one. */
  host: string;
  /** Path + '?' + query, as on the request line (origin form). */
  url: string;
  headers: HeaderField[];
  /** `HTTP/1.1`, `HTTP/2`, … */
  version: string;
  receivedAt: Date;
  /**
   * The body, when the ingress buffered it: only jwt-validation tokens of method `body` read it
   * (HttpPolicy.needsRequestBody says when a policy has such a token); absent, such a token is absent.
   */
  body?: Uint8Array | string;
}

/** A response from the upstream; mutated in place by add-headers and remove-headers of the response phase. */
export interface PolicyResponse {
  status: number;
  headers: HeaderField[];
}

/** A response the edge sends instead of going upstream (or instead of the upstream's response). */
export interface Refusal {
  status: number;
  headers: HeaderField[];
  body: string;
  /** The rule (its name, or `#n` for the n-th of its phase when it has none) and the action type that sent it. */
  rule: string;
  action: string;
}

/** An expression (or a `${}` template, a bucket key, …) that failed to evaluate: the ingress answers with a 500-class page and logs it. */
export interface PolicyError {
  kind: 'error';
  rule: string;
  problem: string;
}

export type RequestDecision =
  /** Go on to the backend; `forwardInternal`: to the account's internal endpoint at this URL instead (forward-internal). */
  { kind: 'continue'; forwardInternal?: { url: string; rule: string } } | { kind: 'respond'; response: Refusal } | PolicyError;

export type ResponseDecision =
  /** Send the (possibly changed) response; `compress` lists compress-response's algorithms, in the order given, for the ingress to choose from by Accept-Encoding. */
  | { kind: 'continue'; compress?: string[] }
  /** Send this response instead of the upstream's (custom-response). */
  | { kind: 'respond'; response: Refusal }
  | PolicyError;

export type ConnectDecision =
  /** Go on to the backend; `forwardInternal`: to the account's internal TCP endpoint at this URL instead (forward-internal). */
  { kind: 'allow'; forwardInternal?: { url: string; rule: string } } | { kind: 'deny'; rule: string; action: string } | PolicyError;

export interface HttpPolicy {
  /** Whether a jwt-validation action reads tokens from the body: the ingress then buffers it into PolicyRequest.body. */
  readonly needsRequestBody: boolean;
  onRequest(conn: PolicyConnection, req: PolicyRequest): Promise<RequestDecision>;
  onResponse(conn: PolicyConnection, req: PolicyRequest, res: PolicyResponse): ResponseDecision;
}

export interface TcpPolicy {
  onConnect(conn: PolicyConnection): ConnectDecision;
  /** When the connection ends: the policy module's outbound rules (log actions) run. */
  onClose(conn: PolicyConnection): void;
}

export interface PolicyDeps {
  /**
   * The CIDRs of an IP policy's rules, by policy id, as the edge's configuration snapshot holds
   * them; called on each evaluation of a restrict-ips naming it. Return the same object while the
   * policy is unchanged: its matcher is built once per object.
   */
  ipPolicy(id: string): { allow: string[]; deny: string[] } | undefined;
  log(line: Record<string, unknown>, msg: string): void;
  now?(): Date;
  /** For jwt-validation's JWKS (and OpenID discovery); global fetch when absent. */
  fetch?: typeof fetch;
}

/** A policy module as an edge's configuration holds it. */
export type { PolicyModule } from '../edge-config.js';
