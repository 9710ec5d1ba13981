// The webhook providers a–l (and jira, linear, which the API lists last): each one's signature scheme
// as the provider publishes it, with the page that says so. docs/webhooks.md carries the same table
// in prose; a change here is a change there.
import { X509Certificate, verify as verifySignature } from 'node:crypto';
import { escape as escapeQuery } from 'node:querystring';
import { gunzipSync } from 'node:zlib';
import {
  BASE64,
  FIVE_MINUTES,
  META_SIGNATURES,
  bodyHmac,
  checkStamped,
  checkStandard,
  header,
  integer,
  matches,
  missing,
  pairs,
  sameToken,
  stale,
  stampedHeader,
  standardKey,
  standardWebhooks,
  unsignedGet,
  versionedHmac,
  type Algorithm,
  type StampedScheme,
} from './builders.js';
import {
  MAX_WEBHOOK_BODY_BYTES,
  PASS,
  fail,
  fresh,
  hmac,
  sameDigest,
  type Verdict,
  type VerifyContext,
  type WebhookRequest,
  type WebhookScheme,
  UNDOCUMENTED_TOLERANCE_SECONDS,
} from './scheme.js';

// The readers and the shapes several providers sign in (body HMAC, `t=…,v1=…`, Standard Webhooks,
// `v0=…`) are in builders.ts, shared with providers-m-z.ts.

/** The request target as sent (`/path?query`), taken from the URL's text so nothing is re-encoded. */
function requestTarget(url: string): string {
  const target = url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '').replace(/#.*$/, '');
  return target === '' ? '/' : target;
}

// Meta's subscription check is a GET with hub.mode, hub.challenge and hub.verify_token and no
// signature; the backend answers it (it holds the verify token, which is not the app secret).
const metaChallenge = (request: WebhookRequest) => unsignedGet(request, 'hub.mode', 'hub.challenge');

function meta(provider: string, source: string): WebhookScheme {
  return bodyHmac({ provider, source, signatures: META_SIGNATURES, unsignedChallenge: metaChallenge });
}

// ---------------------------------------------------------------------------------------------
// AWS SNS: an RSA signature over the message's canonical fields, by the certificate at SigningCertURL

const SNS_SIGNED_FIELDS: Record<string, readonly string[]> = {
  Notification: ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'],
  SubscriptionConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
  UnsubscribeConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
};
const SNS_HASHES: Record<string, Algorithm> = { '1': 'sha1', '2': 'sha256' };
const SNS_CERTIFICATE_HOST = /^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$/i;
// AWS documents no age limit. SNS retries an HTTP/S delivery for at most 3,600 seconds (a hard limit)
// and every retry carries the first attempt's Timestamp and signature, so an hour plus clock skew.
const SNS_TOLERANCE_SECONDS = 3600 + FIVE_MINUTES;

/** Whether `url` may serve an SNS signing certificate: https on `sns.<region>.amazonaws.com(.cn)`, default port, no credentials. */
export function isSnsCertificateUrl(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' && parsed.port === '' && parsed.username === '' && parsed.password === '' && SNS_CERTIFICATE_HOST.test(parsed.hostname);
  } catch {
    return false;
  }
}

/** The string SNS signs: each signed field present, as `Name\nvalue\n`, in the documented order. */
function snsStringToSign(message: Record<string, unknown>, fields: readonly string[]): string | undefined {
  let text = '';
  for (const field of fields) {
    const value = message[field];
    if (value === undefined && field === 'Subject') continue; // a notification without a subject
    if (typeof value !== 'string') return undefined;
    text += `${field}\n${value}\n`;
  }
  return text;
}

async function verifySns(_secret: string, request: WebhookRequest, context: VerifyContext): Promise<Verdict> {
  let message: unknown;
  try {
    message = JSON.parse(request.body.toString('utf8'));
  } catch {
    return fail('the body is not an SNS message (not JSON)');
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return fail('the body is not an SNS message (not a JSON object)');
  const fields = message as Record<string, unknown>;
  const type = typeof fields.Type === 'string' ? fields.Type : '';
  const signed = SNS_SIGNED_FIELDS[type];
  if (!signed) return fail(`unknown SNS message Type ${JSON.stringify(type).slice(0, 64)}`);
  const announced = header(request, 'x-amz-sns-message-type');
  if (announced !== undefined && announced !== type) return fail('x-amz-sns-message-type does not match the message Type');
  const hash = SNS_HASHES[String(fields.SignatureVersion)];
  if (!hash) return fail('SignatureVersion is neither 1 nor 2');
  const certificateUrl = fields.SigningCertURL;
  if (typeof certificateUrl !== 'string' || !isSnsCertificateUrl(certificateUrl))
    return fail('SigningCertURL is not an https URL on sns.<region>.amazonaws.com');
  const timestamp = typeof fields.Timestamp === 'string' ? Date.parse(fields.Timestamp) : NaN;
  if (Number.isNaN(timestamp)) return fail('Timestamp is not an ISO 8601 time');
  if (!fresh(timestamp / 1000, context, SNS_TOLERANCE_SECONDS)) return stale('Timestamp', SNS_TOLERANCE_SECONDS);
  const stringToSign = snsStringToSign(fields, signed);
  if (stringToSign === undefined || typeof fields.Signature !== 'string') return fail(`the ${type} lacks a signed field or its Signature`);
  const signature = fields.Signature;
  if (!BASE64.test(signature)) return fail('Signature is not base64');

  const certificate = new X509Certificate(await context.fetchCertificate(certificateUrl));
  const now = context.now.getTime();
  if (now < Date.parse(certificate.validFrom) || now > Date.parse(certificate.validTo)) return fail('the signing certificate is not valid now');
  return matches(verifySignature(hash, Buffer.from(stringToSign), certificate.publicKey, Buffer.from(signature, 'base64')), 'Signature');
}

// ---------------------------------------------------------------------------------------------
// Schemes of their own

async function verifyAirship(secret: string, request: WebhookRequest, context: VerifyContext): Promise<Verdict> {
  const stamp = header(request, 'x-ua-timestamp');
  const signature = header(request, 'x-ua-signature');
  if (stamp === undefined || signature === undefined) return missing('x-ua-timestamp', 'x-ua-signature');
  const timestamp = integer(stamp);
  if (Number.isNaN(timestamp)) return fail('x-ua-timestamp is not a number of seconds');
  if (!fresh(timestamp, context, UNDOCUMENTED_TOLERANCE_SECONDS)) return stale('x-ua-timestamp', UNDOCUMENTED_TOLERANCE_SECONDS);
  const signs = (body: Buffer) => sameDigest(hmac('sha256', secret, `${stamp}:`, body), signature, 'hex');
  if (signs(request.body)) return PASS;
  // Airship gzips its Open Channel deliveries and signs the JSON inside, so a gzipped body is also
  // checked inflated (bounded, so a small body cannot inflate into a large one).
  if (/\bgzip\b/i.test(header(request, 'content-encoding') ?? '')) {
    try {
      return matches(signs(gunzipSync(request.body, { maxOutputLength: MAX_WEBHOOK_BODY_BYTES })), 'x-ua-signature');
    } catch {
      return fail('the body is marked gzip but does not inflate (or inflates past the body limit)');
    }
  }
  return matches(false, 'x-ua-signature');
}

function verifyBox(secret: string, request: WebhookRequest, context: VerifyContext): Verdict {
  const primary = header(request, 'box-signature-primary');
  const secondary = header(request, 'box-signature-secondary');
  const stamp = header(request, 'box-delivery-timestamp');
  if (primary === undefined && secondary === undefined) return missing('box-signature-primary', 'box-signature-secondary');
  if (stamp === undefined) return missing('box-delivery-timestamp');
  const version = header(request, 'box-signature-version');
  const algorithm = header(request, 'box-signature-algorithm');
  if ((version !== undefined && version !== '1') || (algorithm !== undefined && algorithm !== 'HmacSHA256'))
    return fail('box-signature-version/algorithm is not 1/HmacSHA256');
  const delivered = Date.parse(stamp);
  if (Number.isNaN(delivered)) return fail('box-delivery-timestamp is not an RFC 3339 time');
  if (!fresh(delivered / 1000, context, 600)) return stale('box-delivery-timestamp', 600);
  // Box signs the body followed by the timestamp's text, with each of the app's two keys (primary,
  // secondary) so that they can be rotated one at a time. The route holds one key: whichever slot it
  // sits in, its signature is in that slot's header, so a match in either header passes.
  const expected = hmac('sha256', secret, request.body, stamp);
  return matches(sameDigest(expected, primary, 'base64') || sameDigest(expected, secondary, 'base64'), 'box-signature-primary/secondary');
}

const BUILDKITE_SIGNATURE: StampedScheme = {
  provider: 'buildkite',
  source: 'https://buildkite.com/docs/apis/webhooks/pipelines#webhook-signature',
  headers: ['x-buildkite-signature'],
  timestampKey: 'timestamp',
  signatureKey: 'signature',
  toleranceSeconds: UNDOCUMENTED_TOLERANCE_SECONDS,
};

function verifyBuildkite(secret: string, request: WebhookRequest, context: VerifyContext): Verdict {
  const signature = header(request, 'x-buildkite-signature');
  if (signature !== undefined) return checkStamped(BUILDKITE_SIGNATURE, signature, secret, request, context);
  // A Buildkite webhook is set to send its token either signed (above) or as it is; the route's secret is that token.
  const token = header(request, 'x-buildkite-token');
  if (token === undefined) return missing('x-buildkite-signature', 'x-buildkite-token');
  return matches(sameToken(token, secret), 'x-buildkite-token');
}

function verifyCircleci(secret: string, request: WebhookRequest): Verdict {
  const value = header(request, 'circleci-signature');
  if (value === undefined) return missing('circleci-signature');
  // `v1=<hex>[,v2=…]`: only v1 is defined; a later version alongside is ignored.
  const expected = hmac('sha256', secret, request.body);
  return matches(
    (pairs(value).get('v1') ?? []).some((signature) => sameDigest(expected, signature, 'hex')),
    'circleci-signature v1',
  );
}

// Contentful signs a canonical request: method, path, the headers named in x-contentful-signed-headers
// and the body. This follows @contentful/node-apps-toolkit (signRequest/verifyRequest), which the
// request-verification docs point to, down to its way of encoding the path.
const CONTENTFUL_TTL_SECONDS = 30;

function contentfulPath(target: string): string {
  const [pathname, search] = target.split('?');
  const escaped = search ? escapeQuery(search) : '';
  return encodeURI(escaped ? `${pathname}?${escaped}` : pathname);
}

function verifyContentful(secret: string, request: WebhookRequest, context: VerifyContext): Verdict {
  const signature = header(request, 'x-contentful-signature');
  const signedList = header(request, 'x-contentful-signed-headers');
  const stamp = header(request, 'x-contentful-timestamp');
  if (signature === undefined || signedList === undefined || stamp === undefined)
    return missing('x-contentful-signature', 'x-contentful-signed-headers', 'x-contentful-timestamp');
  const timestamp = integer(stamp); // milliseconds
  if (Number.isNaN(timestamp)) return fail('x-contentful-timestamp is not a number of milliseconds');
  if (!fresh(timestamp / 1000, context, CONTENTFUL_TTL_SECONDS)) return stale('x-contentful-timestamp', CONTENTFUL_TTL_SECONDS);

  const names = signedList.split(',');
  const signed = new Map<string, string>();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined && names.includes(name)) signed.set(name, value.trim());
  }
  // The two headers of the scheme itself are always signed, with the values the signer gave them.
  signed.set('x-contentful-timestamp', String(timestamp));
  signed.set('x-contentful-signed-headers', '');
  signed.set('x-contentful-signed-headers', [...signed.keys()].sort().join(','));
  const canonicalHeaders = [...signed.entries()]
    .sort(([a], [b]) => (a > b ? 1 : -1))
    .map(([name, value]) => `${name}:${value}`)
    .join(';');
  const canonical = `${request.method.toUpperCase()}\n${contentfulPath(requestTarget(request.url))}\n${canonicalHeaders}\n`;
  return matches(sameDigest(hmac('sha256', secret, canonical, request.body), signature, 'hex'), 'x-contentful-signature');
}

function verifyDocusign(secret: string, request: WebhookRequest): Verdict {
  // Connect signs with every HMAC key the account has (up to 100), one header each: X-DocuSign-Signature-1…
  const expected = hmac('sha256', secret, request.body);
  let seen = false;
  for (let index = 1; index <= 100; index++) {
    const signature = header(request, `x-docusign-signature-${index}`);
    if (signature === undefined) continue;
    seen = true;
    if (sameDigest(expected, signature, 'base64')) return PASS;
  }
  return seen ? matches(false, 'no x-docusign-signature-N') : missing('x-docusign-signature-1');
}

// Hygraph (GraphCMS) signs a JSON document of the body (as text), the environment name and the
// timestamp in milliseconds, all three also given in the header: `sign=<base64>, env=<name>, t=<ms>`.
function verifyGraphcms(secret: string, request: WebhookRequest, context: VerifyContext): Verdict {
  const value = header(request, 'gcms-signature');
  if (value === undefined) return missing('gcms-signature');
  const fields = pairs(value);
  const signature = fields.get('sign')?.[0];
  const environment = fields.get('env')?.[0];
  const timestamp = integer(fields.get('t')?.[0]);
  if (signature === undefined || environment === undefined || Number.isNaN(timestamp)) return fail('gcms-signature lacks sign=, env= or t=');
  if (!fresh(timestamp / 1000, context, UNDOCUMENTED_TOLERANCE_SECONDS)) return stale('gcms-signature t', UNDOCUMENTED_TOLERANCE_SECONDS);
  const signed = JSON.stringify({ Body: request.body.toString('utf8'), EnvironmentName: environment, TimeStamp: timestamp });
  return matches(sameDigest(hmac('sha256', secret, signed), signature, 'base64'), 'gcms-signature');
}

// HubSpot's v3 signature covers method, the full URL HubSpot called (with some characters
// percent-decoded, as its docs list them), the body and the timestamp in milliseconds. v1 and v2
// (an unkeyed SHA-256 with the secret in front, and no timestamp) are not accepted: HubSpot sends v3
// on every request and deprecates the others.
const HUBSPOT_DECODED: Record<string, string> = {
  '%3A': ':',
  '%2F': '/',
  '%3F': '?',
  '%40': '@',
  '%21': '!',
  '%24': '$',
  '%27': "'",
  '%28': '(',
  '%29': ')',
  '%2A': '*',
  '%2C': ',',
  '%3B': ';',
};

function verifyHubspot(secret: string, request: WebhookRequest, context: VerifyContext): Verdict {
  const signature = header(request, 'x-hubspot-signature-v3');
  const stamp = header(request, 'x-hubspot-request-timestamp');
  if (signature === undefined || stamp === undefined) return missing('x-hubspot-signature-v3', 'x-hubspot-request-timestamp');
  const timestamp = integer(stamp); // milliseconds
  if (Number.isNaN(timestamp)) return fail('x-hubspot-request-timestamp is not a number of milliseconds');
  if (!fresh(timestamp / 1000, context, FIVE_MINUTES)) return stale('x-hubspot-request-timestamp', FIVE_MINUTES);
  const uri = request.url.replace(/#.*$/, '').replace(/%(3A|2F|3F|40|21|24|27|28|29|2A|2C|3B)/gi, (code) => HUBSPOT_DECODED[code.toUpperCase()]);
  const expected = hmac('sha256', secret, `${request.method.toUpperCase()}${uri}`, request.body, stamp);
  return matches(sameDigest(expected, signature, 'base64'), 'x-hubspot-signature-v3');
}

// GitLab sends the webhook's secret token as it is, in X-Gitlab-Token. Newer GitLab (a signing token,
// behind the webhook_signing_token flag) also signs the Standard Webhooks way; the route's secret is
// whichever of the two the user gave it, so either passing is enough. The signing token's encoding is
// not documented yet: it is tried as a whsec_/base64 key and as its own bytes.
function verifyGitlab(secret: string, request: WebhookRequest, context: VerifyContext): Verdict {
  const token = header(request, 'x-gitlab-token');
  if (token !== undefined && sameToken(token, secret)) return PASS;
  if (header(request, 'webhook-signature') !== undefined) {
    const keys = [Buffer.from(secret), standardKey(secret)].filter((key): key is Buffer => key !== undefined);
    const verdict = checkStandard('webhook', keys, request, context);
    if (verdict.ok || token === undefined) return verdict;
  }
  return token === undefined ? missing('x-gitlab-token', 'webhook-signature') : matches(false, 'x-gitlab-token');
}

function verifyJira(secret: string, request: WebhookRequest): Verdict {
  const value = header(request, 'x-hub-signature');
  if (value === undefined) return missing('x-hub-signature');
  // `method=signature` (WebSub); Atlassian signs with sha256.
  const at = value.indexOf('=');
  const method = value.slice(0, at).toLowerCase();
  if (at <= 0 || !['sha1', 'sha256', 'sha512'].includes(method)) return fail('x-hub-signature is not <sha256|sha1|sha512>=<hex>');
  return matches(sameDigest(hmac(method as Algorithm, secret, request.body), value.slice(at + 1), 'hex'), 'x-hub-signature');
}

// Linear puts the send time in the signed body (webhookTimestamp, milliseconds) and asks receivers
// to refuse one more than a minute away.
const LINEAR_TOLERANCE_SECONDS = 60;

function verifyLinear(secret: string, request: WebhookRequest, context: VerifyContext): Verdict {
  const signature = header(request, 'linear-signature');
  if (signature === undefined) return missing('linear-signature');
  if (!sameDigest(hmac('sha256', secret, request.body), signature, 'hex')) return matches(false, 'linear-signature');
  let timestamp: unknown;
  try {
    timestamp = (JSON.parse(request.body.toString('utf8')) as { webhookTimestamp?: unknown } | null)?.webhookTimestamp;
  } catch {
    return fail('the body is not JSON, so its webhookTimestamp cannot be read');
  }
  if (typeof timestamp !== 'number') return fail('the body has no webhookTimestamp');
  return fresh(timestamp / 1000, context, LINEAR_TOLERANCE_SECONDS) ? PASS : stale('webhookTimestamp', LINEAR_TOLERANCE_SECONDS);
}

// ---------------------------------------------------------------------------------------------
// The table

export const SCHEMES_A_L: readonly WebhookScheme[] = [
  bodyHmac({
    provider: 'aftership',
    source: 'https://www.aftership.com/docs/tracking/webhook/webhook-signature',
    // Tracking sends aftership-hmac-sha256; Returns and Warranty as-signature-hmac-sha256; Shipping and
    // organisations older than Oct 2022 am-webhook-signature as `hmac-sha256=<base64>`. One algorithm for all.
    signatures: [
      { header: 'aftership-hmac-sha256', algorithm: 'sha256', encoding: 'base64' },
      { header: 'as-signature-hmac-sha256', algorithm: 'sha256', encoding: 'base64' },
      { header: 'am-webhook-signature', prefix: 'hmac-sha256=', algorithm: 'sha256', encoding: 'base64' },
    ],
  }),
  {
    provider: 'airship',
    source: 'https://support.airship.com/hc/en-us/articles/360032501831-Implementing-a-Signature-Hash-and-Validating-an-Open-Channel-Webhook',
    verify: verifyAirship,
  },
  bodyHmac({
    provider: 'alchemy',
    source: 'https://docs.alchemy.com/reference/notify-api-quickstart#webhook-signature--security',
    signatures: [{ header: 'x-alchemy-signature', algorithm: 'sha256', encoding: 'hex' }],
  }),
  { provider: 'sns', source: 'https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html', verify: verifySns },
  bodyHmac({
    provider: 'autodesk',
    source: 'https://aps.autodesk.com/en/docs/webhooks/v1/tutorials/how-to-verify-payload-signature/',
    signatures: [{ header: 'x-adsk-signature', prefix: 'sha1hash=', algorithm: 'sha1', encoding: 'hex' }],
  }),
  bodyHmac({
    provider: 'bitbucket',
    source: 'https://support.atlassian.com/bitbucket-cloud/docs/manage-webhooks/#Secure-webhooks',
    signatures: [{ header: 'x-hub-signature', prefix: 'sha256=', algorithm: 'sha256', encoding: 'hex' }],
  }),
  bodyHmac({
    provider: 'bolt',
    source: 'https://help.bolt.com/developers/webhooks/hook-verification/',
    signatures: [{ header: 'x-bolt-hmac-sha256', algorithm: 'sha256', encoding: 'base64' }],
  }),
  { provider: 'box', source: 'https://developer.box.com/guides/webhooks/v2/signatures-v2/', verify: verifyBox },
  standardWebhooks('brex', 'https://developer.brex.com/docs/webhooks/', ['webhook', 'svix']),
  { provider: 'buildkite', source: BUILDKITE_SIGNATURE.source, verify: verifyBuildkite },
  stampedHeader({
    provider: 'calendly',
    source: 'https://developer.calendly.com/api-docs/4c305798a61d3-webhook-signatures',
    headers: ['calendly-webhook-signature'],
    timestampKey: 't',
    signatureKey: 'v1',
    toleranceSeconds: 180, // Calendly's own example refuses a signature older than three minutes
  }),
  bodyHmac({
    provider: 'castle',
    source: 'https://docs.castle.io/docs/webhooks',
    signatures: [{ header: 'x-castle-signature', algorithm: 'sha256', encoding: 'base64' }],
  }),
  bodyHmac({
    provider: 'chargify',
    source: 'https://help.chargify.com/webhooks/webhooks-reference.html#signature-verification',
    // The older X-Chargify-Webhook-Signature (MD5 of key and body) is not read: Chargify sends both.
    signatures: [{ header: 'x-chargify-webhook-signature-hmac-sha-256', algorithm: 'sha256', encoding: 'hex' }],
  }),
  { provider: 'circleci', source: 'https://circleci.com/docs/guides/integration/outbound-webhooks/', verify: verifyCircleci },
  bodyHmac({
    provider: 'clearbit',
    source: 'https://dashboard.clearbit.com/docs#webhooks',
    signatures: [{ header: 'x-request-signature', prefix: 'sha1=', algorithm: 'sha1', encoding: 'hex' }],
    // The key is the API secret key; Clearbit's own examples disagree on whether its `sk_` is part of
    // the HMAC key, so both forms are tried (either way only the key's holder can sign).
    keys: (secret) => (secret.startsWith('sk_') ? [secret, secret.slice(3)] : [secret]),
  }),
  standardWebhooks('clerk', 'https://clerk.com/docs/webhooks/overview', ['svix', 'webhook']),
  bodyHmac({
    provider: 'coinbase',
    source: 'https://docs.cdp.coinbase.com/commerce/api-arcitecture/webhooks-security',
    signatures: [{ header: 'x-cc-webhook-signature', algorithm: 'sha256', encoding: 'hex' }],
  }),
  { provider: 'contentful', source: 'https://www.contentful.com/developers/docs/webhooks/request-verification/', verify: verifyContentful },
  { provider: 'docusign', source: 'https://developers.docusign.com/platform/webhooks/connect/hmac/', verify: verifyDocusign },
  bodyHmac({
    provider: 'dropbox',
    source: 'https://www.dropbox.com/developers/reference/webhooks#documentation',
    signatures: [{ header: 'x-dropbox-signature', algorithm: 'sha256', encoding: 'hex' }],
    // Dropbox checks a new webhook URL with an unsigned GET ?challenge=… that the backend echoes.
    unsignedChallenge: (request) => unsignedGet(request, 'challenge'),
  }),
  meta('facebook_graph_api', 'https://developers.facebook.com/docs/graph-api/webhooks/getting-started#validate-payloads'),
  meta('facebook_messenger', 'https://developers.facebook.com/docs/messenger-platform/webhooks#validate-payloads'),
  versionedHmac({
    provider: 'frameio',
    source: 'https://developer.frame.io/platform/v2/webhooks-overview',
    signatureHeader: 'x-frameio-signature',
    timestampHeader: 'x-frameio-request-timestamp',
    version: 'v0',
    toleranceSeconds: FIVE_MINUTES,
  }),
  bodyHmac({
    provider: 'github',
    source: 'https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries',
    // X-Hub-Signature (SHA-1) is sent alongside only for old receivers; GitHub says to use this one.
    signatures: [{ header: 'x-hub-signature-256', prefix: 'sha256=', algorithm: 'sha256', encoding: 'hex' }],
  }),
  { provider: 'gitlab', source: 'https://docs.gitlab.com/user/project/integrations/webhooks/#validate-payloads-by-using-a-secret-token', verify: verifyGitlab },
  stampedHeader({
    provider: 'go1',
    source: 'https://developers.go1.com/docs/developer-tools/webhooks/security',
    headers: ['go1-signature'],
    timestampKey: 't',
    signatureKey: 'v1',
    toleranceSeconds: 60, // the default of Go1's own verifier (@go1/webhook-verifier-js)
  }),
  bodyHmac({
    provider: 'heroku',
    source: 'https://devcenter.heroku.com/articles/app-webhooks#securing-webhook-requests',
    signatures: [{ header: 'heroku-webhook-hmac-sha256', algorithm: 'sha256', encoding: 'base64' }],
  }),
  stampedHeader({
    provider: 'hostedhooks',
    source: 'https://docs.hostedhooks.com/security/security-features/webhook-signatures',
    // The docs name the header as Rack sees it (HTTP_HOSTEDHOOKS_SIGNATURE): HostedHooks-Signature.
    headers: ['hostedhooks-signature', 'http_hostedhooks_signature'],
    timestampKey: 't',
    signatureKey: 's',
    toleranceSeconds: UNDOCUMENTED_TOLERANCE_SECONDS, // no window documented; HostedHooks re-signs every retry
  }),
  { provider: 'hubspot', source: 'https://developers.hubspot.com/docs/apps/legacy-apps/authentication/validating-requests', verify: verifyHubspot },
  { provider: 'graphcms', source: 'https://hygraph.com/docs/api-reference/basics/webhooks#signed-webhooks', verify: verifyGraphcms },
  meta('instagram', 'https://developers.facebook.com/docs/instagram-platform/webhooks#validate-payloads'),
  bodyHmac({
    provider: 'intercom',
    source: 'https://developers.intercom.com/intercom-api-reference/v1.0/reference/signed-notifications',
    signatures: [{ header: 'x-hub-signature', prefix: 'sha1=', algorithm: 'sha1', encoding: 'hex' }],
  }),
  bodyHmac({
    provider: 'launch_darkly',
    source: 'https://launchdarkly.com/docs/home/infrastructure/webhooks#sign-a-webhook',
    signatures: [{ header: 'x-ld-signature', algorithm: 'sha256', encoding: 'hex' }],
  }),
  { provider: 'linear', source: 'https://linear.app/developers/webhooks#securing-webhooks', verify: verifyLinear },
  { provider: 'jira', source: 'https://developer.atlassian.com/cloud/jira/platform/webhooks/#secure-admin-webhooks', verify: verifyJira },
];
