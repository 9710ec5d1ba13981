// The options an agent sends with a Bind, made into the module values edges enforce: each option
// is checked and stored by the same module definition the API uses for routes (so a header, a
// pattern or a client secret is held to the same rules, and a secret is sealed the same way),
// and what edgeplane cannot do is refused by name, never ignored. Option semantics follow
// ngrok-go and ngrok-rust (their proto's HTTPEndpoint, TCPEndpoint and TLSEndpoint).
import { createHash } from 'node:crypto';
import type { RequestContext } from '../core/context.js';
import { ApiError } from '../core/errors.js';
import { compileValidator } from '../core/validation.js';
import type { ModuleDefinition } from '../crud/modules.js';
import {
  circuitBreakerModule,
  requestHeadersModule,
  responseHeadersModule,
  userAgentFilterModule,
  webhookVerificationModule,
} from '../edge-config/modules/route-modules.js';
import { oauthModule, oidcModule } from '../edge-config/modules/sign-in-modules.js';
import { checkTrafficPolicyDocument } from '../edge-config/traffic-policy/traffic-policy.js';
import type { Bind, HttpEndpoint, IpRestriction, OAuth, Oidc } from '../lib/agent-proto/messages.js';
import { parseCidr } from '../lib/ip/cidr.js';
import type { Sealer } from '../lib/crypto/sealer.js';
import type { CircuitBreakerModule, HeadersModule, PolicyModule, RouteModules, UserAgentFilterModule } from './edge-model.js';

/** An agent's CIDR lists, as ngrok applies them: a deny match refuses; with allow CIDRs, only a match passes. */
export interface AgentIpRestriction {
  allow: string[];
  deny: string[];
}

/** Basic auth credentials: each user's SHA-256 of `user:password`, compared in constant time (basic-auth.ts). */
export interface BasicAuthModule {
  digests: Buffer[];
}

/** The identity modules' stored values (sign-in-modules.ts, route-modules.ts), as a route would hold them. */
export interface AgentIdentityModules {
  oauth?: unknown;
  oidc?: unknown;
  webhookVerification?: unknown;
}

/** What an agent's endpoint asks the edge to enforce, made once at Bind: route modules, and the Bind's own checks. */
export type AgentEndpointModules = Pick<
  RouteModules,
  'circuitBreaker' | 'compression' | 'requestHeaders' | 'responseHeaders' | 'userAgentFilter' | 'websocketTcpConverter' | 'policy'
> & {
  basicAuth?: BasicAuthModule;
  ipRestriction?: AgentIpRestriction;
  identity: AgentIdentityModules;
};

declare module '../core/live-agents.js' {
  /** A live tunnel's endpoint carries what its Bind asked for: these modules. */
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the members come from AgentEndpointModules
  interface EndpointModules extends AgentEndpointModules {}
}

/** Why a Bind's options are refused: `unserved` (edgeplane cannot do it: named) or `invalid` (a value that is not valid). */
export class BindOptionRefused extends Error {
  constructor(
    message: string,
    readonly kind: 'unserved' | 'invalid',
  ) {
    super(message);
    this.name = 'BindOptionRefused';
  }
}

const unserved = (names: string[], why: string) =>
  new BindOptionRefused(
    `edgeplane does not serve the endpoint option${names.length > 1 ? 's' : ''} ${names.join(', ')}: ${why} Bind without ${names.length > 1 ? 'them' : 'it'}.`,
    'unserved',
  );
const invalid = (option: string, problem: string) => new BindOptionRefused(`The endpoint option ${option} is not valid: ${problem}`, 'invalid');

/** The sign-in modules do not read the request context (only SAML does, and agents cannot ask for SAML). */
const NO_CONTEXT = {} as RequestContext;

/**
 * A request body run through a module definition as the API runs it: checked against its request
 * schema, then parsed. An API error becomes the refusal of the option, with the API's words.
 */
function parsed<T>(option: string, definition: ModuleDefinition, body: Record<string, unknown>): T {
  const valid = compileValidator(definition.request, 'body');
  if (!valid(body)) {
    const [first] = valid.errors ?? [];
    // An unknown name (an OAuth provider this server has no support for) is named, not only counted.
    const extra = (first?.params as { additionalProperty?: string } | undefined)?.additionalProperty;
    throw invalid(option, `${first?.instancePath || '/'} ${first?.message ?? 'is invalid'}${extra !== undefined ? `: '${extra.slice(0, 64)}'` : ''}`);
  }
  try {
    return definition.parse(body as never, NO_CONTEXT).value as T;
  } catch (err) {
    if (err instanceof ApiError) throw invalid(option, err.message);
    throw err;
  }
}

// ---- What edgeplane cannot do, by option ----

/** Options edgeplane cannot serve on any endpoint, with why; checked before anything is translated. */
function unservedOptions(bind: Bind): BindOptionRefused | undefined {
  const o = bind.opts;
  const names: string[] = [];
  const reasons = new Set<string>();
  const refuse = (name: string, why: string) => {
    names.push(name);
    reasons.add(why);
  };
  if (o.proxyProto !== 0) refuse('proxy_proto', 'connections reach the agent as streams, without a PROXY protocol header.');
  if (bind.extra.ipPolicyRef !== '') refuse('ip_policy', 'an IP policy reference is not taken from agents; give CIDRs (allow_cidrs, deny_cidrs) instead.');
  if (bind.proto === 'http' || bind.proto === 'https') {
    if (bind.opts.hostHeaderRewrite) refuse('host_header_rewrite', 'the Host header goes to the agent as the client sent it.');
    if (bind.opts.mutualTlsCa) refuse('mutual_tls', 'client certificates are not asked for on agent endpoints.');
    if (bind.opts.oauth && bind.opts.oauth.sealedClientSecret.length > 0)
      refuse('oauth.sealed_client_secret', 'a secret sealed for ngrok cannot be opened here; send client_secret.');
    if (bind.opts.oidc && bind.opts.oidc.sealedClientSecret.length > 0)
      refuse('oidc.sealed_client_secret', 'a secret sealed for ngrok cannot be opened here; send client_secret.');
    if (bind.opts.webhookVerification && bind.opts.webhookVerification.sealedSecret.length > 0)
      refuse('webhook_verification.sealed_secret', 'a secret sealed for ngrok cannot be opened here; send secret.');
    if (bind.opts.basicAuth?.credentials.some((c) => c.hashedPassword.length > 0))
      refuse('basic_auth.hashed_password', 'only clear-text passwords are taken (they are kept hashed, in memory).');
  }
  if (bind.proto === 'tls') {
    if (bind.opts.mutualTlsAtEdge) refuse('mutual_tls', 'client certificates are not asked for on agent endpoints.');
    if (bind.opts.tlsTermination) refuse('tls_termination', 'a TLS endpoint is passed through to the agent, whose upstream terminates TLS.');
  }
  return names.length > 0 ? unserved(names, [...reasons].join(' ')) : undefined;
}

// ---- Translations, option by option ----

function cidrs(option: string, list: readonly string[]): string[] {
  return list.map((text, i) => {
    const cidr = parseCidr(text.includes('/') ? text : `${text}/${text.includes(':') ? 128 : 32}`);
    if (!cidr.ok)
      throw invalid(`${option}[${i}]`, `'${text.slice(0, 80)}' is not a CIDR${cidr.problem === 'not-network' ? ` (did you mean ${cidr.suggestion}?)` : ''}.`);
    return cidr.cidr;
  });
}

function ipRestrictionOf(value: IpRestriction | undefined): AgentIpRestriction | undefined {
  if (!value || (value.allowCidrs.length === 0 && value.denyCidrs.length === 0)) return undefined;
  return { allow: cidrs('ip_restriction.allow_cidrs', value.allowCidrs), deny: cidrs('ip_restriction.deny_cidrs', value.denyCidrs) };
}

const MIN_PASSWORD = 8;
const MAX_PASSWORD = 128;

/** `user:password` pairs: from BasicAuth's credentials, and from the older `Auth` string. */
function basicAuthOf(o: HttpEndpoint): BasicAuthModule | undefined {
  const pairs = (o.basicAuth?.credentials ?? []).map((c) => ({ username: c.username, password: c.cleartextPassword }));
  if (o.auth !== '') {
    const colon = o.auth.indexOf(':');
    if (colon < 0) throw invalid('auth', "must be 'user:password'.");
    pairs.push({ username: o.auth.slice(0, colon), password: o.auth.slice(colon + 1) });
  }
  if (pairs.length === 0) return undefined;
  const digests = pairs.map(({ username, password }, i) => {
    // As ngrok: a user name without ':' (Basic auth could not tell it from the password), a password of 8 to 128 characters.
    if (username === '' || username.includes(':')) throw invalid(`basic_auth.credentials[${i}].username`, "must be set and have no ':'.");
    if (password.length < MIN_PASSWORD || password.length > MAX_PASSWORD)
      throw invalid(`basic_auth.credentials[${i}].password`, `must be ${MIN_PASSWORD} to ${MAX_PASSWORD} characters long.`);
    return basicAuthDigest(username, password);
  });
  return { digests };
}

/** The SHA-256 of `user:password`: what a Basic Authorization header's credentials are compared by. */
export function basicAuthDigest(username: string, password: string): Buffer {
  return createHash('sha256').update(`${username}:${password}`, 'utf8').digest();
}

/** The agent's headers: `name:value` strings (ngrok-rust, ngrok-go) or the parsed map, then the names to remove. */
function headersOf(option: 'request_headers' | 'response_headers', value: HttpEndpoint['requestHeaders']): HeadersModule | undefined {
  if (!value) return undefined;
  const add: Record<string, string> = { ...value.addParsed };
  value.add.forEach((entry, i) => {
    const colon = entry.indexOf(':');
    if (colon <= 0) throw invalid(`${option}.add[${i}]`, "must be 'name:value'.");
    add[entry.slice(0, colon).trim()] = entry.slice(colon + 1).trim();
  });
  if (Object.keys(add).length === 0 && value.remove.length === 0) return undefined;
  const definition = option === 'request_headers' ? requestHeadersModule : responseHeadersModule;
  return parsed<HeadersModule>(option, definition, { add, remove: value.remove });
}

/** An agent's traffic policy document (on_http_request / on_http_response, or on_tcp_connect): checked as the API checks one. */
function policyOf(document: string | undefined, protocol: 'http' | 'tcp'): PolicyModule | undefined {
  if (document === undefined || document.trim() === '') return undefined;
  let ids: string[];
  try {
    ids = checkTrafficPolicyDocument(document, protocol);
  } catch (err) {
    if (err instanceof ApiError) throw invalid('traffic_policy', err.message);
    throw err;
  }
  // The account's IP policies are not what an agent names: its policy names CIDRs.
  if (ids.length > 0) throw unserved(['traffic_policy restrict-ips ip_policies'], 'an agent’s policy names CIDRs (allow, deny), not IP policies.');
  return { kind: 'traffic_policy', enabled: true, value: document };
}

/** What the identity options need: the sealer of client secrets, and the providers the operator has an OAuth application for. */
export interface IdentitySettings {
  sealer: Sealer;
  /** Providers (lower case) with the server's own OAuth application: an agent may ask for them without a client. */
  managedOAuthProviders?: readonly string[];
}

/** OAuth with the agent's own OAuth application, or the server's where the operator configured one for the provider. */
function oauthOf(value: OAuth | undefined, settings: IdentitySettings): unknown {
  if (!value) return undefined;
  const provider = value.provider.toLowerCase();
  const own = value.clientId !== '' || value.clientSecret !== '';
  if (!own && !settings.managedOAuthProviders?.includes(provider))
    throw unserved(
      ['oauth (managed application)'],
      `this server has no OAuth application of its own for ${value.provider || 'the provider'}; give client_id and client_secret.`,
    );
  const body = {
    provider: {
      [provider]: {
        ...(own && { client_id: value.clientId, client_secret: value.clientSecret }),
        ...(value.scopes.length > 0 && { scopes: value.scopes }),
        ...(value.allowEmails.length > 0 && { email_addresses: value.allowEmails }),
        ...(value.allowDomains.length > 0 && { email_domains: value.allowDomains }),
      },
    },
  };
  return parsed('oauth', oauthModule(settings.sealer), body);
}

function oidcOf(value: Oidc | undefined, { sealer }: IdentitySettings): unknown {
  if (!value) return undefined;
  if (value.allowEmails.length > 0 || value.allowDomains.length > 0)
    throw unserved(
      ['oidc.allow_emails', 'oidc.allow_domains'].filter((_, i) => [value.allowEmails, value.allowDomains][i]!.length > 0),
      'OIDC lets in whom the issuer signs in; restrict sign-ins at the issuer.',
    );
  const body = {
    issuer: value.issuerUrl,
    client_id: value.clientId,
    client_secret: value.clientSecret,
    ...(value.scopes.length > 0 && { scopes: value.scopes }),
  };
  return parsed('oidc', oidcModule(sealer), body);
}

/** The identity options made into the stored values of the route modules (client secrets sealed as the API seals them). */
export function identityModules(o: HttpEndpoint, settings: IdentitySettings): AgentIdentityModules {
  const identity: AgentIdentityModules = {};
  const oauth = oauthOf(o.oauth, settings);
  const oidc = oidcOf(o.oidc, settings);
  const webhook = o.webhookVerification
    ? parsed('webhook_verification', webhookVerificationModule('webhook_verification'), {
        provider: o.webhookVerification.provider,
        secret: o.webhookVerification.secret,
      })
    : undefined;
  if (oauth) identity.oauth = oauth;
  if (oidc) identity.oidc = oidc;
  if (webhook) identity.webhookVerification = webhook;
  return identity;
}

/** The module names of identity values, as routes name them. */
export function identityNames(identity: AgentIdentityModules): string[] {
  const names: string[] = [];
  if (identity.oauth !== undefined) names.push('oauth');
  if (identity.oidc !== undefined) names.push('oidc');
  if (identity.webhookVerification !== undefined) names.push('webhook_verification');
  return names;
}

function httpModules(o: HttpEndpoint, identity: IdentitySettings | undefined): AgentEndpointModules {
  const m: AgentEndpointModules = { identity: {} };
  const set = <K extends keyof AgentEndpointModules>(key: K, value: AgentEndpointModules[K] | undefined) => {
    if (value !== undefined) m[key] = value;
  };
  set('basicAuth', basicAuthOf(o));
  set('ipRestriction', ipRestrictionOf(o.ipRestriction));
  if (o.circuitBreaker && o.circuitBreaker.errorThreshold !== 0)
    m.circuitBreaker = parsed<CircuitBreakerModule>('circuit_breaker', circuitBreakerModule, { error_threshold_percentage: o.circuitBreaker.errorThreshold });
  if (o.compression) m.compression = { enabled: true };
  if (o.websocketTcpConverter) m.websocketTcpConverter = { enabled: true };
  set('requestHeaders', headersOf('request_headers', o.requestHeaders));
  set('responseHeaders', headersOf('response_headers', o.responseHeaders));
  if (o.userAgentFilter && (o.userAgentFilter.allow.length > 0 || o.userAgentFilter.deny.length > 0))
    m.userAgentFilter = parsed<UserAgentFilterModule>('user_agent_filter', userAgentFilterModule, {
      allow: o.userAgentFilter.allow,
      deny: o.userAgentFilter.deny,
    });
  set('policy', policyOf(o.trafficPolicy, 'http'));
  if (o.oauth || o.oidc || o.webhookVerification) {
    if (!identity)
      throw unserved(identityNames({ oauth: o.oauth, oidc: o.oidc, webhookVerification: o.webhookVerification }), 'this server cannot seal secrets.');
    m.identity = identityModules(o, identity);
  }
  return m;
}

/** Whether the modules ask for nothing: such an endpoint is served as it always was, with no edge pipeline. */
export function noModules(m: AgentEndpointModules): boolean {
  return Object.keys(m).length === 1 && identityNames(m.identity).length === 0;
}

/**
 * The modules a Bind's options ask for; undefined when it asks for none. Throws BindOptionRefused
 * naming the option edgeplane cannot serve, or the value that is not valid.
 */
export function agentEndpointModules(bind: Bind, identity: IdentitySettings | undefined): AgentEndpointModules | undefined {
  const refused = unservedOptions(bind);
  if (refused) throw refused;
  let m: AgentEndpointModules;
  if (bind.proto === 'http' || bind.proto === 'https') m = httpModules(bind.opts, identity);
  else {
    m = { identity: {} };
    const ip = ipRestrictionOf(bind.opts.ipRestriction);
    const policy = policyOf(bind.opts.trafficPolicy, 'tcp');
    if (ip) m.ipRestriction = ip;
    if (policy) m.policy = policy;
  }
  return noModules(m) ? undefined : m;
}
