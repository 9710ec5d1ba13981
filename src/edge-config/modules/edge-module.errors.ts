// The errors of the module kinds of edges, routes and endpoint configurations (edge-modules.ts,
// route-modules.ts, sign-in-modules.ts). Those of traffic policies are
// src/edge-config/traffic-policy/traffic-policy.errors.ts; setting and excluding modules is
// src/crud's (src/core/errors.ts).
import { commaList, entry, throwersOf } from '../../core/errors.js';

export const edgeModuleCatalogue = {
  // Edge modules (TLS termination, mutual TLS, logging)
  certificateAuthorityNotFound: entry<{ id: string }>(
    1957,
    400,
    'mutual_tls.certificate_authority_ids names no certificate authority of this account.',
    (a) => `certificate authority '${a.id}' in mutual_tls.certificate_authority_ids is not a certificate authority (ca_…) of this account.`,
  ),
  invalidTerminateAt: entry<{ value: string }>(
    224,
    400,
    'tls_termination.terminate_at is not edge or upstream.',
    (a) => `tls_termination.terminate_at '${a.value}' is not supported; use edge or upstream.`,
  ),
  invalidMinVersion: entry<{ value: string }>(
    7107,
    400,
    'tls_termination.min_version is not a TLS version from 1.0 to 1.3.',
    (a) => `tls_termination.min_version '${a.value}' is not supported; use 1.0, 1.1, 1.2 or 1.3.`,
  ),
  minVersionUpstream: entry(
    7108,
    400,
    'tls_termination.min_version is set while TLS terminates upstream.',
    () => 'tls_termination.min_version applies only when TLS terminates at the edge; leave it null with terminate_at upstream.',
  ),
  mutualTlsNeedsEdgeTermination: entry(
    1694,
    400,
    'Mutual TLS is set while TLS terminates upstream.',
    () => 'mutual_tls needs TLS terminated at the edge; set tls_termination.terminate_at to edge, or delete the mutual_tls module.',
  ),
  terminateAtNotAllowed: entry(
    7109,
    400,
    'terminate_at is sent in the TLS termination of an HTTPS edge, which always terminates at the edge.',
    () => "tls_termination.terminate_at is not allowed on an HTTPS edge: it always terminates TLS at the edge; send only 'enabled' and 'min_version'.",
  ),
  eventStreamNotFound: entry<{ id: string }>(
    1623,
    400,
    'A logging module names an event stream; this API serves none.',
    (a) => `logging.event_stream_ids names '${a.id.slice(0, 80)}', but this API serves no event streams; send an empty list.`,
  ),

  // Route modules (circuit breaker, webhook verification, OAuth, SAML, user agent filter)
  circuitBreakerThreshold: entry<{ value: number }>(
    7011,
    400,
    'circuit_breaker.error_threshold_percentage is not a fraction from 0.0 to 1.0.',
    (a) => `circuit_breaker.error_threshold_percentage must be a fraction from 0.0 to 1.0 (0.5 trips the breaker at 50 % errors); got ${a.value}.`,
  ),
  snsSecretNotAccepted: entry<{ module: string }>(
    7026,
    400,
    'An SNS webhook verification module has a secret, which SNS does not use.',
    (a) => `${a.module}: SNS webhook verification does not accept a secret; SNS messages are checked against the signing certificate AWS names in them.`,
  ),
  webhookSecretRequired: entry<{ module: string; provider: string }>(
    7027,
    400,
    'A webhook verification module has no secret, which its provider needs.',
    (a) => `${a.module}: provider '${a.provider}' requires a secret (the signing secret or key the provider shows for its webhooks).`,
  ),
  sendgridKeyInvalid: entry<{ module: string }>(
    7028,
    400,
    'A SendGrid webhook verification secret is not a base64 ECDSA public key.',
    (a) => `${a.module}: the sendgrid secret must be the verification key SendGrid shows: a base64 ECDSA public key (DER SubjectPublicKeyInfo).`,
  ),
  webhookProviderMissing: entry<{ module: string }>(
    7029,
    400,
    'A webhook verification module names no provider.',
    (a) => `${a.module}.provider is required: name the service that signs the webhooks (github, stripe, twilio, …).`,
  ),
  unknownWebhookProvider: entry<{ module: string; provider: string; supported: readonly string[] }>(
    7030,
    400,
    'A webhook verification module names a provider that is not supported.',
    (a) => `${a.module}.provider '${a.provider}' is not a supported webhook provider; supported providers are ${commaList(a.supported)}.`,
  ),
  oauthProviderCount: entry<{ count: number; supported: readonly string[] }>(
    7031,
    400,
    'An OAuth module does not name exactly one identity provider.',
    (a) => `oauth.provider must name exactly one identity provider (one of ${commaList(a.supported)}); ${a.count} were given.`,
  ),
  oauthClientPair: entry<{ provider: string }>(
    7032,
    400,
    'An OAuth module has a client_id without a client_secret, or the reverse.',
    (a) => `oauth.provider.${a.provider}: give client_id and client_secret together (your own OAuth application), or neither (the managed application).`,
  ),
  samlMetadataInvalid: entry<{ reason: string }>(
    7033,
    400,
    'saml.idp_metadata is not the SAML metadata of an identity provider.',
    (a) => `saml.idp_metadata ${a.reason}.`,
  ),
  webhookSecretTooLong: entry<{ module: string; length: number; max: number }>(
    7154,
    400,
    'A webhook verification secret is longer than the limit.',
    (a) => `${a.module}.secret is limited to ${a.max} characters; ${a.length} were given.`,
  ),
  userAgentRegexInvalid: entry<{ list: string; index: number; reason: string }>(
    2090,
    400,
    'A regular expression of a user agent filter does not compile or could take exponential time.',
    (a) => `user_agent_filter.${a.list}[${a.index}] ${a.reason}.`,
  ),
} as const;

/** Error factories: `throw edgeModuleErrors.certificateAuthorityNotFound(…)`. */
export const edgeModuleErrors = throwersOf(edgeModuleCatalogue);
