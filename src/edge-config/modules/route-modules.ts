// The modules of HTTPS edge routes (and, for some, of endpoint configurations): headers,
// compression, the WebSocket-to-TCP converter, the circuit breaker, webhook verification and the
// user agent filter; the sign-in modules are in sign-in-modules.ts. Each is declared once, as the
// edge modules in edge-modules.ts are: request and response shapes, what is stored, what is shown.
// None of them names other resources, so `refs` is always empty. What each stores is what it shows.
import { createPublicKey } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import safeRegex from 'safe-regex2';
import { defineModule, type ModuleDefinition } from '../../crud/modules.js';
import type { Sealer } from '../../lib/crypto/sealer.js';
import { isToken } from '../../lib/http/syntax.js';
import { re2AsJavaScript, re2Problem } from '../../lib/regex/re2.js';
import { checkHeaders, MAX_HEADER_VALUE_BYTES, MAX_HEADERS } from '../values/headers.js';
import { sharedValueErrors } from '../values/shared-value.errors.js';
import { edgeModuleErrors } from './edge-module.errors.js';
import { backendModule, Enabled, ipRestrictionModule, policyModule, trafficPolicyModule } from './edge-modules.js';
import { oauthModule, oidcModule, samlModule } from './sign-in-modules.js';

const DAY_SECONDS = 24 * 60 * 60;

// ---------------------------------------------------------------------------------------------
// Request and response headers

// The limits of a backend's headers, which checkHeaders holds.
const MAX_HEADER_ENTRIES = MAX_HEADERS;
const MAX_HEADER_VALUE_LENGTH = MAX_HEADER_VALUE_BYTES;
const MAX_HEADER_NAME_LENGTH = 256;

const HeadersRequest = Type.Object(
  {
    enabled: Enabled,
    add: Type.Optional(
      Type.Record(Type.String(), Type.String({ maxLength: MAX_HEADER_VALUE_LENGTH }), {
        // A Record's key schema is not carried into JSON Schema; propertyNames bounds the names.
        propertyNames: { maxLength: MAX_HEADER_NAME_LENGTH },
        maxProperties: MAX_HEADER_ENTRIES,
        description: `header name → value, at most ${MAX_HEADER_ENTRIES}; names are stored and shown lower-cased`,
      }),
    ),
    remove: Type.Optional(
      Type.Array(Type.String({ maxLength: MAX_HEADER_NAME_LENGTH }), {
        maxItems: MAX_HEADER_ENTRIES,
        description: `header names, at most ${MAX_HEADER_ENTRIES}`,
      }),
    ),
  },
  { additionalProperties: false },
);
const HeadersValue = Type.Object({ enabled: Type.Boolean(), add: Type.Record(Type.String(), Type.String()), remove: Type.Array(Type.String()) });

function checkHeaderName(name: string): string {
  if (!isToken(name)) throw sharedValueErrors.invalidHeaderName({ name: name.slice(0, 80) });
  return name;
}

function headersModule(name: 'request_headers' | 'response_headers', title: string) {
  return defineModule({
    name,
    title,
    request: HeadersRequest,
    stored: HeadersValue,
    response: HeadersValue,
    parse: (body) => ({
      value: { enabled: body.enabled ?? true, add: checkHeaders(body.add ?? {}), remove: (body.remove ?? []).map(checkHeaderName) },
      refs: [],
    }),
    toApi: (value) => ({ enabled: value.enabled, add: value.add, remove: value.remove }),
  });
}

export const requestHeadersModule = headersModule('request_headers', 'request headers');
export const responseHeadersModule = headersModule('response_headers', 'response headers');

// ---------------------------------------------------------------------------------------------
// Modules that are only switched on or off

const Switch = Type.Object({ enabled: Type.Boolean() });

function switchModule(name: string, title: string) {
  return defineModule({
    name,
    title,
    request: Type.Object({ enabled: Enabled }, { additionalProperties: false }),
    stored: Switch,
    response: Switch,
    parse: (body) => ({ value: { enabled: body.enabled ?? true }, refs: [] }),
    toApi: (value) => ({ enabled: value.enabled }),
  });
}

export const compressionModule = switchModule('compression', 'compression');
export const websocketTcpConverterModule = switchModule('websocket_tcp_converter', 'WebSocket to TCP converter');

// ---------------------------------------------------------------------------------------------
// Circuit breaker

const CIRCUIT_BREAKER_DEFAULTS = { tripped_duration: 10, rolling_window: 10, num_buckets: 10, volume_threshold: 20, error_threshold_percentage: 0.5 };
const CircuitBreakerRequest = Type.Object(
  {
    enabled: Enabled,
    tripped_duration: Type.Optional(
      Type.Integer({ minimum: 1, maximum: DAY_SECONDS, description: 'seconds the breaker stays open once tripped (default 10)' }),
    ),
    rolling_window: Type.Optional(Type.Integer({ minimum: 1, maximum: DAY_SECONDS, description: 'seconds of statistics the breaker looks at (default 10)' })),
    num_buckets: Type.Optional(Type.Integer({ minimum: 1, maximum: 128, description: 'buckets the rolling window is divided into, 1 to 128 (default 10)' })),
    volume_threshold: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'requests in the window before the breaker may trip (default 20)' }),
    ),
    // Not bounded here: a value outside 0.0 to 1.0 gets its own error, which says it is a fraction.
    error_threshold_percentage: Type.Optional(Type.Number({ description: 'fraction of errors that trips the breaker, 0.0 to 1.0 (default 0.5)' })),
  },
  { additionalProperties: false },
);
const CircuitBreakerValue = Type.Object({
  enabled: Type.Boolean(),
  tripped_duration: Type.Integer(),
  rolling_window: Type.Integer(),
  num_buckets: Type.Integer(),
  volume_threshold: Type.Integer(),
  error_threshold_percentage: Type.Number(),
});

export const circuitBreakerModule = defineModule({
  name: 'circuit_breaker',
  title: 'circuit breaker',
  request: CircuitBreakerRequest,
  stored: CircuitBreakerValue,
  response: CircuitBreakerValue,
  parse: (body) => {
    const value = { enabled: true, ...CIRCUIT_BREAKER_DEFAULTS, ...body };
    const threshold = value.error_threshold_percentage;
    if (!(threshold >= 0 && threshold <= 1)) throw edgeModuleErrors.circuitBreakerThreshold({ value: threshold });
    return { value, refs: [] };
  },
  toApi: (value) => ({ ...value }),
});

// ---------------------------------------------------------------------------------------------
// Webhook verification

/** The services whose webhook signatures the edge checks. */
export const WEBHOOK_PROVIDERS: readonly string[] = `
  aftership airship alchemy sns autodesk bitbucket bolt box brex buildkite calendly castle chargify circleci clearbit clerk coinbase
  contentful docusign dropbox facebook_graph_api facebook_messenger frameio github gitlab go1 heroku hostedhooks hubspot graphcms
  instagram intercom launch_darkly mailchimp mailgun microsoft_teams modern_treasury mongodb mux orbit pagerduty pinwheel plivo pusher
  sendgrid sentry shopify signal_sciences slack sonatype square stripe svix terraform tiktok trendmicro_conformity twilio twitter
  typeform vmware webex whatsapp worldline xero zendesk zoom jira linear orb
`
  .trim()
  .split(/\s+/);
const PROVIDER_SET = new Set<string>(WEBHOOK_PROVIDERS);
export const MAX_WEBHOOK_SECRET_LENGTH = 4096;

const WebhookRequest = Type.Object(
  {
    enabled: Enabled,
    // Optional in the schema so that a missing provider gets its own error (7029).
    provider: Type.Optional(Type.String({ maxLength: 64, description: 'the service that signs the webhooks (case-insensitive): github, stripe, …' })),
    // The schema's bound only keeps the body small; the real limit is checked with its own error (7154).
    secret: Type.Optional(
      Type.String({
        maxLength: 4 * MAX_WEBHOOK_SECRET_LENGTH,
        description: `the signing secret, at most ${MAX_WEBHOOK_SECRET_LENGTH} characters; none for sns`,
      }),
    ),
  },
  { additionalProperties: false },
);
const WebhookValue = Type.Object({ enabled: Type.Boolean(), provider: Type.String(), secret: Type.String() });

/** SendGrid signs with ECDSA and shows its verification key as base64 DER (SubjectPublicKeyInfo). */
function isEcPublicKey(secret: string): boolean {
  try {
    return createPublicKey({ key: Buffer.from(secret, 'base64'), format: 'der', type: 'spki' }).asymmetricKeyType === 'ec';
  } catch {
    return false;
  }
}

/** The secret a provider (lower-cased) needs: none for SNS (AWS signs with a certificate), one for every other. */
function webhookSecret(module: string, provider: string, secret: string): string {
  if (secret.length > MAX_WEBHOOK_SECRET_LENGTH) throw edgeModuleErrors.webhookSecretTooLong({ module, length: secret.length, max: MAX_WEBHOOK_SECRET_LENGTH });
  // An empty secret is none: some clients always send the field.
  if (provider === 'sns') {
    if (secret !== '') throw edgeModuleErrors.snsSecretNotAccepted({ module });
    return secret;
  }
  if (secret === '') throw edgeModuleErrors.webhookSecretRequired({ module, provider });
  if (provider === 'sendgrid' && !isEcPublicKey(secret)) throw edgeModuleErrors.sendgridKeyInvalid({ module });
  return secret;
}

/**
 * Webhook verification: `webhook_verification` on routes, `webhook_validation` on endpoint
 * configurations. The provider is matched case-insensitively and kept as sent; the secret is
 * stored and shown as the reference API does (it verifies, it does not authenticate the caller).
 */
export function webhookVerificationModule(name: string) {
  return defineModule({
    name,
    title: 'webhook verification',
    request: WebhookRequest,
    stored: WebhookValue,
    response: WebhookValue,
    parse: (body) => {
      const provider = body.provider ?? '';
      if (provider === '') throw edgeModuleErrors.webhookProviderMissing({ module: name });
      const known = provider.toLowerCase();
      if (!PROVIDER_SET.has(known)) throw edgeModuleErrors.unknownWebhookProvider({ module: name, provider, supported: WEBHOOK_PROVIDERS });
      const value = { enabled: body.enabled ?? true, provider, secret: webhookSecret(name, known, body.secret ?? '') };
      return { value, refs: [] };
    },
    toApi: (value) => ({ enabled: value.enabled, provider: value.provider, secret: value.secret }),
  });
}

// ---------------------------------------------------------------------------------------------
// User agent filter

const MAX_PATTERNS = 32;
const Patterns = Type.Optional(
  Type.Array(Type.String({ maxLength: 1024 }), { maxItems: MAX_PATTERNS, description: `regular expressions (RE2 syntax), at most ${MAX_PATTERNS}` }),
);
const UserAgentRequest = Type.Object({ enabled: Enabled, allow: Patterns, deny: Patterns }, { additionalProperties: false });
const UserAgentValue = Type.Object({ enabled: Type.Boolean(), allow: Type.Array(Type.String()), deny: Type.Array(Type.String()) });

/**
 * Why a pattern is refused, or undefined: RE2 must compile it, and, because a filter runs on every
 * request, safe-regex2 must find no nested quantifier (star height above 1) and at most 25
 * repetitions; what its parser cannot read is refused too.
 */
function patternProblem(pattern: string): string | undefined {
  const problem = re2Problem(pattern);
  if (problem) return problem;
  if (!safeRegex(re2AsJavaScript(pattern)))
    return 'could take exponential time (a nested quantifier such as (a+)+, or more than 25 repetitions) or could not be analysed';
  return undefined;
}

function checkPatterns(list: 'allow' | 'deny', patterns: readonly string[] = []): string[] {
  patterns.forEach((pattern, index) => {
    const reason = patternProblem(pattern);
    if (reason) throw edgeModuleErrors.userAgentRegexInvalid({ list, index, reason });
  });
  return [...patterns];
}

export const userAgentFilterModule = defineModule({
  name: 'user_agent_filter',
  title: 'user agent filter',
  request: UserAgentRequest,
  stored: UserAgentValue,
  response: UserAgentValue,
  parse: (body) => {
    const value = { enabled: body.enabled ?? true, allow: checkPatterns('allow', body.allow), deny: checkPatterns('deny', body.deny) };
    return { value, refs: [] };
  },
  toApi: (value) => ({ enabled: value.enabled, allow: value.allow, deny: value.deny }),
});

// ---------------------------------------------------------------------------------------------
// The modules of a route: a new route module is declared above and listed here.

/** The modules of a route, in the order responses show them. */
export function routeModules(sealer: Sealer): ModuleDefinition[] {
  return [
    backendModule,
    ipRestrictionModule,
    circuitBreakerModule,
    compressionModule,
    requestHeadersModule,
    responseHeadersModule,
    webhookVerificationModule('webhook_verification'),
    oauthModule(sealer),
    samlModule(sealer),
    oidcModule(sealer),
    websocketTcpConverterModule,
    userAgentFilterModule,
    policyModule('http'),
    trafficPolicyModule('http'),
  ];
}
