// The messages of the agent protocol's typed streams: what an agent sends (Auth, Bind, Unbind,
// StartTunnelWithLabel, the replies to commands) and what the server sends (their replies, the
// commands, the header of a proxied connection). Field names and shapes are those of ngrok-rust's
// ngrok/src/internals/proto.rs (the Node SDK's), checked against ngrok-go's
// internal/tunnel/proto/msg.go. See docs/agent-protocol.md. Pure.
import { AgentProtoError } from './json.js';
import { decodeObject, encodeObject, type Field, type Kind, type Schema } from './schema.js';

/** The u32 that opens every typed stream (big-endian on the wire). */
export const StreamType = {
  auth: 0,
  bind: 1,
  unbind: 2,
  proxy: 3,
  restart: 4,
  stop: 5,
  update: 6,
  startTunnelWithLabel: 7,
  stopTunnel: 9,
  /** Heartbeats: 4-byte ids echoed, no JSON. */
  heartbeat: 0xffffffff,
} as const;

/** The protocol versions edgeplane speaks, best first (both agents offer ["3", "2"]). */
export const PROTOCOL_VERSIONS = ['3', '2'] as const;

/** 0 none, 1 or 2: the PROXY protocol version the agent's upstream expects. */
export type ProxyProto = 0 | 1 | 2;

export interface AuthExtra {
  os: string;
  arch: string;
  authToken: string;
  version: string;
  hostname: string;
  userAgent: string;
  metadata: string;
  /** What the server gave the previous session (AuthResp.Extra.Cookie); empty for a new one. */
  cookie: string;
  heartbeatInterval: number;
  heartbeatTolerance: number;
  /** undefined: the agent is too old for the command; '': supported; else why it is not. */
  updateUnsupportedError?: string;
  stopUnsupportedError?: string;
  restartUnsupportedError?: string;
  proxyType: string;
  mutualTls: boolean;
  serviceRun: boolean;
  configVersion: string;
  customInterface: boolean;
  customCas: boolean;
  clientType: string;
}

export interface Auth {
  version: string[];
  /** The session id to resume; empty for a new session. */
  clientId: string;
  extra: AuthExtra;
}

export interface AuthRespExtra {
  version?: string;
  region?: string;
  cookie?: string;
  accountName?: string;
  /** Seconds. */
  sessionDuration?: number;
  planName?: string;
  banner?: string;
}

export interface AuthResp {
  version: string;
  clientId: string;
  extra: AuthRespExtra;
}

export interface IpRestriction {
  allowCidrs: string[];
  denyCidrs: string[];
}
export interface BasicAuthCredential {
  username: string;
  cleartextPassword: string;
  hashedPassword: Buffer;
}
export interface OAuth {
  provider: string;
  clientId: string;
  clientSecret: string;
  sealedClientSecret: Buffer;
  allowEmails: string[];
  allowDomains: string[];
  scopes: string[];
}
export interface Oidc {
  issuerUrl: string;
  clientId: string;
  clientSecret: string;
  sealedClientSecret: Buffer;
  allowEmails: string[];
  allowDomains: string[];
  scopes: string[];
}
export interface WebhookVerification {
  provider: string;
  secret: string;
  sealedSecret: Buffer;
}
export interface MutualTls {
  /** PEM certificates, the CAs that client certificates must chain to. */
  mutualTlsCa: Buffer;
}
export interface Headers {
  add: string[];
  remove: string[];
  addParsed: Record<string, string>;
}
export interface UserAgentFilter {
  allow: string[];
  deny: string[];
}
export interface TlsTermination {
  cert: Buffer;
  key: Buffer;
  sealedKey: Buffer;
}

export interface HttpEndpoint {
  domain: string;
  hostname: string;
  auth: string;
  subdomain: string;
  hostHeaderRewrite: boolean;
  localUrlScheme?: string;
  proxyProto: ProxyProto;
  compression?: Record<string, never>;
  circuitBreaker?: { errorThreshold: number };
  ipRestriction?: IpRestriction;
  basicAuth?: { credentials: BasicAuthCredential[] };
  oauth?: OAuth;
  oidc?: Oidc;
  webhookVerification?: WebhookVerification;
  mutualTlsCa?: MutualTls;
  requestHeaders?: Headers;
  responseHeaders?: Headers;
  websocketTcpConverter?: Record<string, never>;
  userAgentFilter?: UserAgentFilter;
  /** A traffic policy document (JSON or YAML text). */
  trafficPolicy?: string;
}

export interface TcpEndpoint {
  /** The reserved address asked for ("host:port"), or empty for any. */
  addr: string;
  proxyProto: ProxyProto;
  ipRestriction?: IpRestriction;
  trafficPolicy?: string;
}

export interface TlsEndpoint {
  domain: string;
  hostname: string;
  subdomain: string;
  proxyProto: ProxyProto;
  mutualTlsAtAgent: boolean;
  mutualTlsAtEdge?: MutualTls;
  tlsTermination?: TlsTermination;
  ipRestriction?: IpRestriction;
  trafficPolicy?: string;
}

/** The options of a bind, by its protocol ("http" and "https" share theirs). */
export type BindOpts = { proto: 'http' | 'https'; opts: HttpEndpoint } | { proto: 'tcp'; opts: TcpEndpoint } | { proto: 'tls'; opts: TlsEndpoint };

export interface BindExtra {
  /** The tunnel's token from the previous session's BindResp (reconnects); empty at first. */
  token: string;
  ipPolicyRef: string;
  metadata: string;
  bindings: string[];
  poolingEnabled: boolean;
  /** Only the Go agent sends these two. */
  name: string;
  description: string;
}

export type Bind = BindOpts & {
  /** A session-unique id the agent chose, or empty for the server to choose one. */
  id: string;
  forwardsTo: string;
  forwardsProto: string;
  extra: BindExtra;
};

export type BindResp = BindOpts & {
  id: string;
  url: string;
  extra: { token: string; tunnelId?: string };
};

export interface Unbind {
  id: string;
}

export interface StartTunnelWithLabel {
  labels: Record<string, string>;
  forwardsTo: string;
  forwardsProto: string;
  metadata: string;
}

export interface StartTunnelWithLabelResp {
  id: string;
}

/** "0" undefined, "1" TCP, "2" TLS, "3" HTTPS: a string on the wire. */
export type EdgeType = '0' | '1' | '2' | '3';

export interface ProxyHeader {
  /** The bind (or labeled tunnel) id the connection is for. */
  id: string;
  clientAddr: string;
  proto: string;
  edgeType: EdgeType;
  passthroughTls: boolean;
}

export interface Update {
  version: string;
  permitMajorVersion: boolean;
}

export interface StopTunnel {
  id: string;
  message: string;
  errorCode?: string;
}

/** The agent's reply to Stop, Restart and Update. */
export interface CommandResp {
  /** Why the agent did not do it; undefined when it will. */
  error?: string;
}

// ---- The tables. Wire names are ngrok-rust's (serde is case-sensitive; Go is not). ----

const field = (name: string, wire: string, kind: Kind, more: Partial<Field> = {}): Field => ({ name, wire, kind, ...more });
const optional = { optional: true } as const;
const required = { required: true } as const;
// Inside the middleware objects (protobuf's snake_case on the wire), empty values are left out.
const omit = { omitDefault: true } as const;

const authExtraSchema: Schema = {
  what: 'Auth',
  fields: [
    field('os', 'OS', 'string'),
    field('arch', 'Arch', 'string'),
    field('authToken', 'AuthToken', 'string'),
    field('version', 'Version', 'string'),
    field('hostname', 'Hostname', 'string'),
    field('userAgent', 'UserAgent', 'string'),
    field('metadata', 'Metadata', 'string'),
    field('cookie', 'Cookie', 'string'),
    field('heartbeatInterval', 'HeartbeatInterval', 'int'),
    field('heartbeatTolerance', 'HeartbeatTolerance', 'int'),
    field('updateUnsupportedError', 'UpdateUnsupportedError', 'string', optional),
    field('stopUnsupportedError', 'StopUnsupportedError', 'string', optional),
    field('restartUnsupportedError', 'RestartUnsupportedError', 'string', optional),
    field('proxyType', 'ProxyType', 'string'),
    field('mutualTls', 'MutualTLS', 'bool'),
    field('serviceRun', 'ServiceRun', 'bool'),
    field('configVersion', 'ConfigVersion', 'string'),
    field('customInterface', 'CustomInterface', 'bool'),
    field('customCas', 'CustomCAs', 'bool'),
    field('clientType', 'ClientType', 'string'),
  ],
};

const authSchema: Schema = {
  what: 'Auth',
  fields: [
    field('version', 'Version', 'strings', required),
    field('clientId', 'ClientId', 'string'),
    field('extra', 'Extra', { object: authExtraSchema }, required),
  ],
};

const authRespSchema: Schema = {
  what: 'AuthResp',
  fields: [
    field('version', 'Version', 'string', required),
    field('clientId', 'ClientId', 'string', required),
    field(
      'extra',
      'Extra',
      {
        object: {
          what: 'AuthResp',
          fields: [
            field('version', 'Version', 'string', optional),
            field('region', 'Region', 'string', optional),
            field('cookie', 'Cookie', 'string', optional),
            field('accountName', 'AccountName', 'string', optional),
            field('sessionDuration', 'SessionDuration', 'int', optional),
            field('planName', 'PlanName', 'string', optional),
            field('banner', 'Banner', 'string', optional),
          ],
        },
      },
      optional,
    ),
  ],
};

const ipRestriction: Schema = {
  what: 'Bind',
  fields: [field('allowCidrs', 'allow_cidrs', 'strings', omit), field('denyCidrs', 'deny_cidrs', 'strings', omit)],
};
const mutualTls: Schema = { what: 'Bind', fields: [field('mutualTlsCa', 'mutual_tls_ca', 'base64', omit)] };
const empty: Schema = { what: 'Bind', fields: [] };
const oauthLike = (first: Field): Schema => ({
  what: 'Bind',
  fields: [
    first,
    field('clientId', 'client_id', 'string', omit),
    field('clientSecret', 'client_secret', 'string', omit),
    field('sealedClientSecret', 'sealed_client_secret', 'base64', omit),
    field('allowEmails', 'allow_emails', 'strings', omit),
    field('allowDomains', 'allow_domains', 'strings', omit),
    field('scopes', 'scopes', 'strings', omit),
  ],
});
const headers: Schema = {
  what: 'Bind',
  fields: [field('add', 'add', 'strings', omit), field('remove', 'remove', 'strings', omit), field('addParsed', 'addParsed', 'stringMap', omit)],
};

const httpEndpointSchema: Schema = {
  what: 'Bind',
  fields: [
    field('domain', 'Domain', 'string'),
    field('hostname', 'Hostname', 'string', required),
    field('auth', 'Auth', 'string', required),
    field('subdomain', 'Subdomain', 'string', required),
    field('hostHeaderRewrite', 'HostHeaderRewrite', 'bool', required),
    field('localUrlScheme', 'LocalUrlScheme', 'string', optional),
    field('proxyProto', 'ProxyProto', 'proxyProto', required),
    field('compression', 'Compression', { object: empty }, optional),
    field('circuitBreaker', 'CircuitBreaker', { object: { what: 'Bind', fields: [field('errorThreshold', 'error_threshold', 'float', omit)] } }, optional),
    field('ipRestriction', 'IPRestriction', { object: ipRestriction }, optional),
    field(
      'basicAuth',
      'BasicAuth',
      {
        object: {
          what: 'Bind',
          fields: [
            field(
              'credentials',
              'credentials',
              {
                list: {
                  what: 'Bind',
                  fields: [
                    field('username', 'username', 'string', required),
                    field('cleartextPassword', 'cleartext_password', 'string', omit),
                    field('hashedPassword', 'hashed_password', 'base64', omit),
                  ],
                },
              },
              omit,
            ),
          ],
        },
      },
      optional,
    ),
    field('oauth', 'OAuth', { object: oauthLike(field('provider', 'provider', 'string', required)) }, optional),
    field('oidc', 'OIDC', { object: oauthLike(field('issuerUrl', 'issuer_url', 'string', required)) }, optional),
    field(
      'webhookVerification',
      'WebhookVerification',
      {
        object: {
          what: 'Bind',
          fields: [
            field('provider', 'provider', 'string', required),
            field('secret', 'secret', 'string', omit),
            field('sealedSecret', 'sealed_secret', 'base64', omit),
          ],
        },
      },
      optional,
    ),
    field('mutualTlsCa', 'MutualTLSCA', { object: mutualTls }, optional),
    field('requestHeaders', 'RequestHeaders', { object: headers }, optional),
    field('responseHeaders', 'ResponseHeaders', { object: headers }, optional),
    field('websocketTcpConverter', 'WebsocketTCPConverter', { object: empty }, optional),
    field(
      'userAgentFilter',
      'UserAgentFilter',
      { object: { what: 'Bind', fields: [field('allow', 'allow', 'strings', omit), field('deny', 'deny', 'strings', omit)] } },
      optional,
    ),
    field('trafficPolicy', 'TrafficPolicy', 'string', optional),
  ],
};

const tcpEndpointSchema: Schema = {
  what: 'Bind',
  fields: [
    field('addr', 'Addr', 'string', required),
    field('proxyProto', 'ProxyProto', 'proxyProto', required),
    field('ipRestriction', 'IPRestriction', { object: ipRestriction }, optional),
    field('trafficPolicy', 'TrafficPolicy', 'string', optional),
  ],
};

const tlsEndpointSchema: Schema = {
  what: 'Bind',
  fields: [
    field('domain', 'Domain', 'string'),
    field('hostname', 'Hostname', 'string', required),
    field('subdomain', 'Subdomain', 'string', required),
    field('proxyProto', 'ProxyProto', 'proxyProto', required),
    field('mutualTlsAtAgent', 'MutualTLSAtAgent', 'bool', required),
    field('mutualTlsAtEdge', 'MutualTLSAtEdge', { object: mutualTls }, optional),
    field(
      'tlsTermination',
      'TLSTermination',
      {
        object: {
          what: 'Bind',
          fields: [field('cert', 'cert', 'base64', omit), field('key', 'key', 'base64', omit), field('sealedKey', 'sealed_key', 'base64', omit)],
        },
      },
      optional,
    ),
    field('ipRestriction', 'IPRestriction', { object: ipRestriction }, optional),
    field('trafficPolicy', 'TrafficPolicy', 'string', optional),
  ],
};

const optsSchemas = { http: httpEndpointSchema, https: httpEndpointSchema, tcp: tcpEndpointSchema, tls: tlsEndpointSchema } as const;

const bindExtraSchema: Schema = {
  what: 'Bind',
  fields: [
    field('token', 'Token', 'string'),
    field('ipPolicyRef', 'IPPolicyRef', 'string'),
    field('metadata', 'Metadata', 'string'),
    field('bindings', 'Bindings', 'strings'),
    field('poolingEnabled', 'PoolingEnabled', 'bool'),
    field('name', 'Name', 'string'),
    field('description', 'Description', 'string'),
  ],
};

// Opts is read after Proto says which table applies.
const bindSchema: Schema = {
  what: 'Bind',
  fields: [
    field('id', 'Id', 'string'),
    field('proto', 'Proto', 'string', required),
    field('forwardsTo', 'ForwardsTo', 'string'),
    field('forwardsProto', 'ForwardsProto', 'string'),
    field('extra', 'Extra', { object: bindExtraSchema }, required),
  ],
};

const bindRespSchema: Schema = {
  what: 'BindResp',
  fields: [
    field('id', 'Id', 'string', required),
    field('url', 'URL', 'string', required),
    field('proto', 'Proto', 'string', required),
    field(
      'extra',
      'Extra',
      { object: { what: 'BindResp', fields: [field('token', 'Token', 'string', required), field('tunnelId', 'TunnelID', 'string', optional)] } },
      required,
    ),
  ],
};

const unbindSchema: Schema = { what: 'Unbind', fields: [field('id', 'Id', 'string', required)] };

const startTunnelWithLabelSchema: Schema = {
  what: 'StartTunnelWithLabel',
  fields: [
    field('labels', 'Labels', 'stringMap', required),
    field('forwardsTo', 'ForwardsTo', 'string'),
    field('forwardsProto', 'ForwardsProto', 'string'),
    field('metadata', 'Metadata', 'string'),
  ],
};

const startTunnelWithLabelRespSchema: Schema = { what: 'StartTunnelWithLabelResp', fields: [field('id', 'Id', 'string', required)] };

export const proxyHeaderSchema: Schema = {
  what: 'ProxyHeader',
  fields: [
    field('id', 'Id', 'string', required),
    field('clientAddr', 'ClientAddr', 'string', required),
    field('proto', 'Proto', 'string', required),
    field('edgeType', 'EdgeType', 'string', required),
    field('passthroughTls', 'PassthroughTLS', 'bool', required),
  ],
};

const updateSchema: Schema = {
  what: 'Update',
  fields: [field('version', 'Version', 'string', required), field('permitMajorVersion', 'PermitMajorVersion', 'bool', required)],
};

const stopTunnelSchema: Schema = {
  what: 'StopTunnel',
  fields: [field('id', 'Id', 'string', required), field('message', 'Message', 'string', required), field('errorCode', 'ErrorCode', 'string', optional)],
};

const commandRespSchema: Schema = { what: 'CommandResp', fields: [field('error', 'Error', 'string', optional)] };

const errorRespSchema: Schema = { what: 'error reply', fields: [field('error', 'Error', 'string', optional)] };

// ---- What an agent sends: parsed JSON (see json.ts) in, a typed value or AgentProtoError out. ----

export function decodeAuth(value: unknown): Auth {
  return decodeObject(value, authSchema, '') as unknown as Auth;
}

export function decodeBind(value: unknown): Bind {
  const bind = decodeObject(value, bindSchema, '');
  const proto = bind.proto as string;
  // As Go's UnpackProtoOpts; "ssh" binds are not served.
  if (!Object.hasOwn(optsSchemas, proto)) {
    throw new AgentProtoError('bad_value', `Bind: 'Proto' must be one of http, https, tcp, tls, not '${proto.slice(0, 40)}'`);
  }
  const opts = (value as Record<string, unknown>).Opts ?? findFolded(value as Record<string, unknown>, 'opts');
  if (opts === undefined || opts === null) throw new AgentProtoError('missing_field', `Bind: 'Opts' is required`);
  return { ...bind, opts: decodeObject(opts, optsSchemas[proto as keyof typeof optsSchemas], 'Opts') } as unknown as Bind;
}

function findFolded(value: Record<string, unknown>, lower: string): unknown {
  let found: unknown;
  for (const [key, member] of Object.entries(value)) if (key.toLowerCase() === lower) found = member;
  return found;
}

export function decodeUnbind(value: unknown): Unbind {
  return decodeObject(value, unbindSchema, '') as unknown as Unbind;
}

export function decodeStartTunnelWithLabel(value: unknown): StartTunnelWithLabel {
  return decodeObject(value, startTunnelWithLabelSchema, '') as unknown as StartTunnelWithLabel;
}

/** The agent's reply to Stop, Restart or Update ({} when it will, {"Error": "…"} when not). */
export function decodeCommandResp(value: unknown): CommandResp {
  const resp = decodeObject(value, commandRespSchema, '') as CommandResp;
  // An empty Error is no error, as for the agent reading the server's replies.
  return resp.error ? resp : {};
}

/** An agent's request, by the type its stream opened with. */
export type AgentRequest =
  | { type: typeof StreamType.auth; message: Auth }
  | { type: typeof StreamType.bind; message: Bind }
  | { type: typeof StreamType.unbind; message: Unbind }
  | { type: typeof StreamType.startTunnelWithLabel; message: StartTunnelWithLabel };

/** The stream types an agent may open with a JSON request. */
export function isAgentRequestType(type: number): type is AgentRequest['type'] {
  return type === StreamType.auth || type === StreamType.bind || type === StreamType.unbind || type === StreamType.startTunnelWithLabel;
}

export function decodeAgentRequest(type: AgentRequest['type'], value: unknown): AgentRequest {
  switch (type) {
    case StreamType.auth:
      return { type, message: decodeAuth(value) };
    case StreamType.bind:
      return { type, message: decodeBind(value) };
    case StreamType.unbind:
      return { type, message: decodeUnbind(value) };
    case StreamType.startTunnelWithLabel:
      return { type, message: decodeStartTunnelWithLabel(value) };
  }
}

// ---- What the server sends: JSON text exactly as ngrok-rust's serde reads it. ----

export function encodeAuthResp(resp: AuthResp): string {
  return JSON.stringify(encodeObject(resp, authRespSchema));
}

export function encodeBindResp(resp: BindResp): string {
  // The agent keeps Opts and Extra.Token and sends them again when it binds on a new session.
  const { Extra, ...head } = encodeObject(resp, bindRespSchema);
  return JSON.stringify({ ...head, Opts: encodeObject(resp.opts, optsSchemas[resp.proto]), Extra });
}

/** Unbind succeeded: ngrok-rust's UnbindResp has no fields. */
export function encodeUnbindResp(): string {
  return '{}';
}

export function encodeStartTunnelWithLabelResp(resp: StartTunnelWithLabelResp): string {
  return JSON.stringify(encodeObject(resp, startTunnelWithLabelRespSchema));
}

/**
 * The reply to any request that failed. Both agents read {"Error": "…"} before the reply's own
 * shape; a line "ERR_NGROK_<n>" in it becomes the error's code on the agent's side.
 */
export function encodeErrorResp(message: string, errorCode?: string): string {
  return JSON.stringify({ Error: errorCode === undefined ? message : `${message}\n\n${errorCode}` });
}

/** Commands to the agent: Stop and Restart carry an empty object. */
export function encodeStop(): string {
  return '{}';
}
export function encodeRestart(): string {
  return '{}';
}
export function encodeUpdate(update: Update): string {
  return JSON.stringify(encodeObject(update, updateSchema));
}
/** The agent closes the tunnel with this message and sends no reply. */
export function encodeStopTunnel(stop: StopTunnel): string {
  return JSON.stringify(encodeObject(stop, stopTunnelSchema));
}

export function encodeProxyHeaderJson(header: ProxyHeader): string {
  return JSON.stringify(encodeObject(header, proxyHeaderSchema));
}

// ---- The server's messages read back, as the Rust agent would (its required fields): tests. ----

export function decodeAuthResp(value: unknown): AuthResp {
  const resp = decodeObject(value, authRespSchema, '') as unknown as AuthResp;
  return { ...resp, extra: resp.extra ?? {} };
}

export function decodeBindResp(value: unknown): BindResp {
  const resp = decodeObject(value, bindRespSchema, '');
  const proto = resp.proto as string;
  if (!Object.hasOwn(optsSchemas, proto)) throw new AgentProtoError('bad_value', `BindResp: unknown 'Proto' '${proto.slice(0, 40)}'`);
  const opts = (value as Record<string, unknown>).Opts;
  if (opts === undefined) throw new AgentProtoError('missing_field', `BindResp: 'Opts' is required`);
  return { ...resp, opts: decodeObject(opts, optsSchemas[proto as keyof typeof optsSchemas], 'Opts') } as unknown as BindResp;
}

export function decodeStartTunnelWithLabelResp(value: unknown): StartTunnelWithLabelResp {
  return decodeObject(value, startTunnelWithLabelRespSchema, '') as unknown as StartTunnelWithLabelResp;
}

export function decodeErrorResp(value: unknown): string | undefined {
  return (decodeObject(value, errorRespSchema, '') as { error?: string }).error || undefined;
}

export function decodeUpdate(value: unknown): Update {
  return decodeObject(value, updateSchema, '') as unknown as Update;
}

export function decodeStopTunnel(value: unknown): StopTunnel {
  return decodeObject(value, stopTunnelSchema, '') as unknown as StopTunnel;
}

export function decodeProxyHeaderJson(value: unknown): ProxyHeader {
  const header = decodeObject(value, proxyHeaderSchema, '') as unknown as ProxyHeader;
  if (!['0', '1', '2', '3'].includes(header.edgeType)) {
    throw new AgentProtoError('bad_value', `ProxyHeader: 'EdgeType' must be "0" to "3"`);
  }
  return header;
}
