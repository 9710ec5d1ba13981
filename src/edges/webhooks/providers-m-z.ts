// The webhook providers from Mailchimp to Zoom (and Orb): each provider's published signature
// scheme, checked against the route's one secret. Every check is written from the provider's own
// documentation (its `source`); no provider SDK is used because each would pull in a whole API
// client to compute one HMAC, and several have none for Node.
import { createHash, verify as verifySignature } from 'node:crypto';
import {
  BASE64,
  FIVE_MINUTES,
  META_SIGNATURES,
  anyDigest,
  bodyHmac,
  header,
  integer,
  matches,
  missing,
  pairs,
  sameToken,
  stale,
  stampedHeader,
  standardWebhooks,
  unsignedGet,
  versionedHmac,
  withoutPrefix,
} from './builders.js';
import { fail, fresh, hmac, PASS, sameDigest, UNDOCUMENTED_TOLERANCE_SECONDS, type WebhookRequest, type WebhookScheme } from './scheme.js';

// ---------------------------------------------------------------------------------------------
// Small readers of this half's own (the shared ones are in builders.ts)

const isForm = (request: WebhookRequest): boolean => /^application\/x-www-form-urlencoded\b/i.test(request.headers['content-type'] ?? '');

/** A form body's fields, sorted by name then value (code-unit order, as the providers sort). */
function sortedFormFields(request: WebhookRequest): [string, string][] {
  if (!isForm(request)) return [];
  const fields = [...new URLSearchParams(request.body.toString('utf8'))];
  return fields.sort(([ak, av], [bk, bv]) => (ak === bk ? compare(av, bv) : compare(ak, bk)));
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

// ---------------------------------------------------------------------------------------------
// The providers' schemes: their own checks, and the shared shapes (builders.ts) where they sign that way

/**
 * Mailchimp Transactional (Mandrill): HMAC-SHA1 of the URL followed by each POST field's name
 * and value, sorted by name. (Mailchimp's marketing webhooks are not signed at all; the provider
 * name covers the signed, Transactional ones.) When a webhook is added, Mailchimp first checks the
 * URL with a bodiless HEAD; that goes through, or the webhook could not be added behind the edge.
 */
const mailchimp: WebhookScheme = {
  provider: 'mailchimp',
  source: 'https://mailchimp.com/developer/transactional/guides/track-respond-activity-webhooks/#authenticating-webhook-requests',
  verify(secret, request) {
    if (request.method.toUpperCase() === 'HEAD' && request.body.length === 0) return PASS;
    const value = header(request, 'x-mandrill-signature');
    if (value === undefined) return missing('X-Mandrill-Signature');
    const signed =
      request.url +
      sortedFormFields(request)
        .map(([name, field]) => name + field)
        .join('');
    return matches(sameDigest(hmac('sha1', secret, signed), value, 'base64'), 'X-Mandrill-Signature');
  },
};

/**
 * Mailgun puts the signature in the body, not a header: `signature: {timestamp, token, signature}`
 * in a JSON body, or `timestamp`, `token` and `signature` fields in a form body. Mailgun signs the
 * timestamp and token only, not the event data.
 */
const mailgun: WebhookScheme = {
  provider: 'mailgun',
  source: 'https://documentation.mailgun.com/docs/mailgun/user-manual/webhooks/securing-webhooks',
  verify(secret, request, context) {
    const fields = mailgunSignature(request);
    if (fields === undefined) return fail('the body carries no Mailgun signature (timestamp, token, signature)');
    if (!fresh(integer(fields.timestamp), context, UNDOCUMENTED_TOLERANCE_SECONDS)) return stale('Mailgun signature', UNDOCUMENTED_TOLERANCE_SECONDS);
    return sameDigest(hmac('sha256', secret, fields.timestamp + fields.token), fields.signature, 'hex') ? PASS : fail('the Mailgun signature does not match');
  },
};

function mailgunSignature(request: WebhookRequest): { timestamp: string; token: string; signature: string } | undefined {
  let source: Record<string, unknown> | undefined;
  if (isForm(request)) {
    source = Object.fromEntries(new URLSearchParams(request.body.toString('utf8')));
  } else {
    try {
      const parsed: unknown = JSON.parse(request.body.toString('utf8'));
      const signature = (parsed as { signature?: unknown } | null)?.signature;
      if (typeof signature === 'object' && signature !== null) source = signature as Record<string, unknown>;
    } catch {
      return undefined;
    }
  }
  const { timestamp, token, signature } = source ?? {};
  if (typeof timestamp !== 'string' || typeof token !== 'string' || typeof signature !== 'string') return undefined;
  return { timestamp, token, signature };
}

/** Microsoft Teams outgoing webhooks: `Authorization: HMAC <base64>`, keyed by the base64-decoded security token. */
const microsoftTeams: WebhookScheme = {
  provider: 'microsoft_teams',
  source: 'https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/add-outgoing-webhook',
  verify(secret, request) {
    const value = header(request, 'authorization');
    if (value === undefined) return missing('Authorization');
    const given = /^HMAC\s+(\S+)$/i.exec(value)?.[1];
    return matches(sameDigest(hmac('sha256', Buffer.from(secret, 'base64'), request.body), given, 'base64'), 'Authorization');
  },
};

/** Pinwheel: `X-Pinwheel-Signature: v2=<hex>` over `v2:<X-Timestamp>:<body>`. */
const pinwheel = versionedHmac({
  provider: 'pinwheel',
  source: 'https://docs.pinwheelapi.com/docs/webhook-signature-verification',
  signatureHeader: 'x-pinwheel-signature',
  timestampHeader: 'x-timestamp',
  version: 'v2',
  toleranceSeconds: UNDOCUMENTED_TOLERANCE_SECONDS,
});

/**
 * Plivo's V3 signature: HMAC-SHA256 (base64) of the URL rebuilt with its query fields sorted, the
 * POST fields sorted and run together, and the nonce, keyed by the auth token. Plivo may list one
 * signature per active auth token, comma separated. (V2 signs the URL path and nonce only, so a
 * captured V2 signature would vouch for any body: it is not accepted.)
 */
const plivo: WebhookScheme = {
  provider: 'plivo',
  source: 'https://www.plivo.com/docs/voice/concepts/signature-validation',
  verify(secret, request) {
    const name = header(request, 'x-plivo-signature-v3') !== undefined ? 'x-plivo-signature-v3' : 'x-plivo-signature-ma-v3';
    const value = header(request, name);
    if (value === undefined) return missing('X-Plivo-Signature-V3');
    const nonce = header(request, 'x-plivo-signature-v3-nonce') ?? header(request, 'x-plivo-signature-ma-v3-nonce');
    if (nonce === undefined) return missing('X-Plivo-Signature-V3-Nonce');
    const base = plivoSignedUrl(request);
    if (base === undefined) return fail(`Plivo signs GET and POST requests only, not ${request.method}`);
    return matches(anyDigest(hmac('sha256', secret, `${base}.${nonce}`), value.split(','), 'base64'), 'X-Plivo-Signature-V3');
  },
};

function plivoSignedUrl(request: WebhookRequest): string | undefined {
  const method = request.method.toUpperCase();
  if (method !== 'GET' && method !== 'POST') return undefined;
  const queryAt = request.url.indexOf('?');
  const base = queryAt < 0 ? request.url : request.url.slice(0, queryAt);
  const queryFields = queryAt < 0 ? [] : [...new URLSearchParams(request.url.slice(queryAt + 1))];
  const query = queryFields
    .sort(([ak, av], [bk, bv]) => (ak === bk ? compare(av, bv) : compare(ak, bk)))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  const fields = method === 'POST' ? sortedFormFields(request) : [];
  if (fields.length === 0) return query === '' ? base : `${base}?${query}`;
  return `${base}?${query === '' ? '' : `${query}.`}${fields.map(([name, value]) => name + value).join('')}`;
}

/**
 * SendGrid's signed event webhook: ECDSA (P-256, SHA-256) over the timestamp header followed by
 * the body; the secret is the verification key SendGrid shows, base64 DER (the API checks its form).
 */
const sendgrid: WebhookScheme = {
  provider: 'sendgrid',
  source: 'https://www.twilio.com/docs/sendgrid/for-developers/tracking-events/getting-started-event-webhook-security-features',
  verify(secret, request, context) {
    const signature = header(request, 'x-twilio-email-event-webhook-signature');
    if (signature === undefined) return missing('X-Twilio-Email-Event-Webhook-Signature');
    const timestamp = header(request, 'x-twilio-email-event-webhook-timestamp');
    if (!fresh(integer(timestamp), context, UNDOCUMENTED_TOLERANCE_SECONDS))
      return stale('X-Twilio-Email-Event-Webhook-Timestamp', UNDOCUMENTED_TOLERANCE_SECONDS);
    if (!BASE64.test(signature)) return matches(false, 'X-Twilio-Email-Event-Webhook-Signature');
    try {
      const key = { key: Buffer.from(secret, 'base64'), format: 'der', type: 'spki', dsaEncoding: 'der' } as const;
      const signed = Buffer.concat([Buffer.from(timestamp ?? ''), request.body]);
      return matches(verifySignature('sha256', signed, key, Buffer.from(signature, 'base64')), 'X-Twilio-Email-Event-Webhook-Signature');
    } catch {
      // A key that is not an EC public key, or a signature that is not DER: not a match either way.
      return matches(false, 'X-Twilio-Email-Event-Webhook-Signature');
    }
  },
};

/** Slack: `X-Slack-Signature: v0=<hex>` over `v0:<X-Slack-Request-Timestamp>:<body>`, five minutes either way. */
const slack = versionedHmac({
  provider: 'slack',
  source: 'https://api.slack.com/authentication/verifying-requests-from-slack',
  signatureHeader: 'x-slack-signature',
  timestampHeader: 'x-slack-request-timestamp',
  version: 'v0',
  toleranceSeconds: FIVE_MINUTES,
});

/** Square: HMAC-SHA256 (base64) of the subscription's notification URL followed by the body. */
const square: WebhookScheme = {
  provider: 'square',
  source: 'https://developer.squareup.com/docs/webhooks/step3validate',
  verify(secret, request) {
    const value = header(request, 'x-square-hmacsha256-signature');
    if (value === undefined) return missing('X-Square-HmacSha256-Signature');
    return matches(sameDigest(hmac('sha256', secret, request.url, request.body), value, 'base64'), 'X-Square-HmacSha256-Signature');
  },
};

/**
 * Svix: `svix-signature: v1,<base64> …` over `<svix-id>.<svix-timestamp>.<body>`, keyed by the
 * base64 part of the `whsec_…` secret; white-labelled senders use `webhook-` for `svix-`.
 */
const svix = standardWebhooks('svix', 'https://docs.svix.com/receiving/verifying-payloads/how-manual', ['svix', 'webhook']);

/**
 * Twilio: HMAC-SHA1 (base64) of the URL Twilio requested, followed for a form POST by each field's
 * name and value sorted by name; a JSON body is vouched for instead by the `bodySHA256` query field
 * (hex SHA-256 of the body), which the signed URL carries. Twilio's libraries accept the URL with
 * and without the scheme's default port, since Twilio may have signed either; so do we.
 */
const twilio: WebhookScheme = {
  provider: 'twilio',
  source: 'https://www.twilio.com/docs/usage/security#validating-requests',
  verify(secret, request) {
    const value = header(request, 'x-twilio-signature');
    if (value === undefined) return missing('X-Twilio-Signature');
    const bodySha256 = queryField(request.url, 'bodySHA256');
    let fields = '';
    if (bodySha256 !== undefined) {
      if (!sameDigest(createHash('sha256').update(request.body).digest(), bodySha256, 'hex')) return fail('the body does not match its bodySHA256');
    } else {
      fields = sortedFormFields(request)
        .map(([name, field]) => name + field)
        .join('');
    }
    const signedUrls = withAndWithoutDefaultPort(request.url);
    return matches(
      signedUrls.some((url) => sameDigest(hmac('sha1', secret, url + fields), value, 'base64')),
      'X-Twilio-Signature',
    );
  },
};

function queryField(url: string, name: string): string | undefined {
  const queryAt = url.indexOf('?');
  return queryAt < 0 ? undefined : (new URLSearchParams(url.slice(queryAt + 1)).get(name) ?? undefined);
}

/** The URL as given and with its default port added or removed (text only, so nothing else is re-encoded). */
function withAndWithoutDefaultPort(url: string): string[] {
  const parts = /^(https?):\/\/([^/?#]*)(.*)$/i.exec(url);
  if (parts === null) return [url];
  const [, scheme, authority, rest] = parts;
  const port = scheme.toLowerCase() === 'https' ? '443' : '80';
  const withoutPort = authority.endsWith(`:${port}`) ? authority.slice(0, -port.length - 1) : authority;
  const hasOtherPort = /:\d+$/.test(withoutPort) && !withoutPort.endsWith(']');
  const alternative = withoutPort !== authority ? withoutPort : hasOtherPort ? undefined : `${authority}:${port}`;
  return alternative === undefined ? [url] : [url, `${scheme}://${alternative}${rest}`];
}

/**
 * Twitter (X) Account Activity: `x-twitter-webhooks-signature: sha256=<base64>` of the body under the
 * consumer secret. X's challenge-response check (a GET carrying `crc_token`) is unsigned and must be
 * answered with an HMAC only the app can make; the edge lets that GET through to the app.
 */
const twitter = bodyHmac({
  provider: 'twitter',
  source: 'https://developer.x.com/en/docs/x-api/enterprise/account-activity-api/guides/securing-webhooks',
  signatures: [{ header: 'x-twitter-webhooks-signature', prefix: 'sha256=', algorithm: 'sha256', encoding: 'base64' }],
  unsignedChallenge: (request) => unsignedGet(request, 'crc_token'),
});

/**
 * VMware Workspace ONE UEM event notifications authenticate with HTTP Basic (the user name and
 * password set on the event notification), not a signature. The one secret holds both parts as
 * ngrok's guide for this provider takes them: `username::password`.
 */
const vmware: WebhookScheme = {
  provider: 'vmware',
  source: 'https://ngrok.com/docs/integrations/webhooks/vmware-webhooks',
  verify(secret, request) {
    const at = secret.indexOf('::');
    if (at < 0) return fail('the VMware secret must be username::password');
    const value = header(request, 'authorization');
    if (value === undefined) return missing('Authorization');
    const given = /^Basic\s+([A-Za-z0-9+/]+={0,2})$/i.exec(value)?.[1];
    if (given === undefined) return matches(false, 'Authorization');
    const expected = `${secret.slice(0, at)}:${secret.slice(at + 2)}`;
    return matches(sameToken(Buffer.from(given, 'base64').toString('utf8'), expected), 'Authorization');
  },
};

/**
 * WhatsApp (Meta Graph API): `X-Hub-Signature-256: sha256=<hex>` of the body under the app secret;
 * the older `X-Hub-Signature: sha1=<hex>`, which Meta still sends alongside, only when that is absent.
 * Meta's subscription check (a GET with `hub.mode=subscribe`) carries the verify token, which the
 * route's one secret is not; it goes through to the app, which knows its verify token.
 */
const whatsapp = bodyHmac({
  provider: 'whatsapp',
  source: 'https://developers.facebook.com/docs/graph-api/webhooks/getting-started#validate-payloads',
  signatures: META_SIGNATURES,
  unsignedChallenge: (request) => unsignedGet(request) && queryField(request.url, 'hub.mode') === 'subscribe',
});

/**
 * Worldline: `X-GCS-Signature`, base64 HMAC-SHA256 of the body under the secret webhook key. Its
 * endpoint check (a GET with `X-GCS-Webhooks-Endpoint-Verification`, to be echoed) is unsigned and
 * goes through to the app.
 */
const worldline = bodyHmac({
  provider: 'worldline',
  source: 'https://docs.connect.worldline-solutions.com/documentation/webhooks/event-structure/',
  signatures: [{ header: 'x-gcs-signature', algorithm: 'sha256', encoding: 'base64' }],
  unsignedChallenge: (request) => unsignedGet(request) && header(request, 'x-gcs-webhooks-endpoint-verification') !== undefined,
});

/** Zendesk: base64 HMAC-SHA256 of the signature timestamp header followed by the body. */
const zendesk: WebhookScheme = {
  provider: 'zendesk',
  source: 'https://developer.zendesk.com/documentation/webhooks/verifying/',
  verify(secret, request, context) {
    const value = header(request, 'x-zendesk-webhook-signature');
    if (value === undefined) return missing('X-Zendesk-Webhook-Signature');
    // Zendesk's examples show an ISO 8601 time; seconds since the epoch are taken too.
    const timestamp = header(request, 'x-zendesk-webhook-signature-timestamp');
    if (timestamp === undefined) return missing('X-Zendesk-Webhook-Signature-Timestamp');
    const seconds = /^\d+$/.test(timestamp) ? integer(timestamp) : isoSeconds(timestamp);
    if (!fresh(seconds, context, UNDOCUMENTED_TOLERANCE_SECONDS)) return stale('X-Zendesk-Webhook-Signature-Timestamp', UNDOCUMENTED_TOLERANCE_SECONDS);
    return matches(sameDigest(hmac('sha256', secret, timestamp, request.body), value, 'base64'), 'X-Zendesk-Webhook-Signature');
  },
};

/**
 * An ISO 8601 date and time (`2021-09-28T18:50:04Z`) in seconds; anything looser is not one. Without
 * `zoneless`, the zone is required; with it, a time that names none is UTC.
 */
function isoSeconds(text: string, zoneless = false): number {
  const parts = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?)(Z|[+-]\d{2}:\d{2})?$/.exec(text);
  if (parts === null || (parts[2] === undefined && !zoneless)) return NaN;
  return Date.parse(parts[1] + (parts[2] ?? 'Z')) / 1000;
}

/** Zoom: `x-zm-signature: v0=<hex>` over `v0:<x-zm-request-timestamp>:<body>`. */
const zoom = versionedHmac({
  provider: 'zoom',
  source: 'https://developers.zoom.us/docs/api/webhooks/#verify-webhook-events',
  signatureHeader: 'x-zm-signature',
  timestampHeader: 'x-zm-request-timestamp',
  version: 'v0',
  toleranceSeconds: UNDOCUMENTED_TOLERANCE_SECONDS,
});

/**
 * Orb: `X-Orb-Signature: v1=<hex>` (several, space separated, while a secret rotates) over
 * `v1:<X-Orb-Timestamp>:<body>`. The timestamp is ISO 8601, in UTC when it names no zone; Orb's own
 * library allows five minutes either way. Orb's guide gives the scheme in prose only; its official
 * library is the exact statement, so that is the source.
 */
const orb: WebhookScheme = {
  provider: 'orb',
  source: 'https://github.com/orbcorp/orb-node/blob/main/src/resources/webhooks.ts',
  verify(secret, request, context) {
    const value = header(request, 'x-orb-signature');
    if (value === undefined) return missing('X-Orb-Signature');
    const timestamp = header(request, 'x-orb-timestamp');
    if (timestamp === undefined || !fresh(isoSeconds(timestamp, true), context, FIVE_MINUTES)) return stale('X-Orb-Timestamp', FIVE_MINUTES);
    const given = value.split(' ').flatMap((entry) => {
      const digest = withoutPrefix(entry, 'v1=');
      return digest === undefined ? [] : [digest];
    });
    return matches(anyDigest(hmac('sha256', secret, `v1:${timestamp}:`, request.body), given, 'hex'), 'X-Orb-Signature');
  },
};

/** Trend Micro Cloud One Conformity: hex HMAC-SHA256 of the body; older deliveries name the header X-TrendMicro-Signature. */
const trendmicroConformity = bodyHmac({
  provider: 'trendmicro_conformity',
  source: 'https://cloudone.trendmicro.com/docs/conformity/webhook-communication/',
  signatures: [
    { header: 'x-conformity-signature', algorithm: 'sha256', encoding: 'hex' },
    { header: 'x-trendmicro-signature', algorithm: 'sha256', encoding: 'hex' },
  ],
});

/** PagerDuty (v3 webhooks): `X-PagerDuty-Signature: v1=<hex>[,v1=<hex>…]`, one per active secret. */
const pagerduty: WebhookScheme = {
  provider: 'pagerduty',
  source: 'https://developer.pagerduty.com/docs/verifying-signatures',
  verify(secret, request) {
    const value = header(request, 'x-pagerduty-signature');
    if (value === undefined) return missing('X-PagerDuty-Signature');
    return matches(anyDigest(hmac('sha256', secret, request.body), pairs(value).get('v1') ?? [], 'hex'), 'X-PagerDuty-Signature');
  },
};

// ---------------------------------------------------------------------------------------------
// The table

export const SCHEMES_M_Z: readonly WebhookScheme[] = [
  mailchimp,
  mailgun,
  microsoftTeams,
  bodyHmac({
    provider: 'modern_treasury',
    source: 'https://docs.moderntreasury.com/platform/docs/verifying-webhooks',
    signatures: [{ header: 'x-signature', algorithm: 'sha256', encoding: 'hex' }],
  }),
  bodyHmac({
    provider: 'mongodb',
    source: 'https://www.mongodb.com/docs/atlas/tutorial/webhook-integration/',
    signatures: [{ header: 'x-mms-signature', algorithm: 'sha1', encoding: 'base64' }],
  }),
  stampedHeader({
    provider: 'mux',
    source: 'https://www.mux.com/docs/core/verify-webhook-signatures',
    headers: ['mux-signature'],
    timestampKey: 't',
    signatureKey: 'v1',
    toleranceSeconds: 300, // Mux's guide leaves the window to the receiver; 300 s is its own library's default
  }),
  bodyHmac({
    provider: 'orbit',
    source: 'https://docs.orbit.love/docs/webhooks',
    signatures: [{ header: 'x-orbit-signature', prefix: 'sha256=', algorithm: 'sha256', encoding: 'hex' }],
  }),
  pagerduty,
  pinwheel,
  plivo,
  bodyHmac({
    provider: 'pusher',
    source: 'https://pusher.com/docs/channels/server_api/webhooks/#authentication',
    signatures: [{ header: 'x-pusher-signature', algorithm: 'sha256', encoding: 'hex' }],
  }),
  sendgrid,
  bodyHmac({
    provider: 'sentry',
    source: 'https://docs.sentry.io/organization/integrations/integration-platform/webhooks/#sentry-hook-signature',
    signatures: [{ header: 'sentry-hook-signature', algorithm: 'sha256', encoding: 'hex' }],
  }),
  bodyHmac({
    provider: 'shopify',
    source: 'https://shopify.dev/docs/apps/build/webhooks/subscribe/https#step-5-verify-the-webhook',
    signatures: [{ header: 'x-shopify-hmac-sha256', algorithm: 'sha256', encoding: 'base64' }],
  }),
  bodyHmac({
    provider: 'signal_sciences',
    source: 'https://docs.fastly.com/signalsciences/integrations/generic-webhooks',
    signatures: [{ header: 'x-sigsci-signature', algorithm: 'sha256', encoding: 'hex' }],
  }),
  slack,
  bodyHmac({
    provider: 'sonatype',
    source: 'https://help.sonatype.com/repomanager3/integrations/webhooks/working-with-hmac-payloads',
    signatures: [{ header: 'x-nexus-webhook-signature', algorithm: 'sha1', encoding: 'hex' }],
  }),
  square,
  stampedHeader({
    provider: 'stripe',
    source: 'https://docs.stripe.com/webhooks#verify-manually',
    headers: ['stripe-signature'],
    timestampKey: 't',
    signatureKey: 'v1',
    toleranceSeconds: 300, // Stripe's libraries' default tolerance, which its guide recommends
  }),
  svix,
  bodyHmac({
    provider: 'terraform',
    source: 'https://developer.hashicorp.com/terraform/cloud-docs/api-docs/notification-configurations#notification-authenticity',
    signatures: [{ header: 'x-tfe-notification-signature', algorithm: 'sha512', encoding: 'hex' }],
  }),
  stampedHeader({
    provider: 'tiktok',
    source: 'https://developers.tiktok.com/doc/webhooks-verification',
    headers: ['tiktok-signature'],
    timestampKey: 't',
    signatureKey: 's',
    toleranceSeconds: UNDOCUMENTED_TOLERANCE_SECONDS, // TikTok says to reject an old timestamp but names no window
  }),
  trendmicroConformity,
  twilio,
  twitter,
  bodyHmac({
    provider: 'typeform',
    source: 'https://www.typeform.com/developers/webhooks/secure-your-webhooks/',
    signatures: [{ header: 'typeform-signature', prefix: 'sha256=', algorithm: 'sha256', encoding: 'base64' }],
  }),
  vmware,
  bodyHmac({
    provider: 'webex',
    source: 'https://developer.webex.com/docs/webhooks',
    signatures: [{ header: 'x-spark-signature', algorithm: 'sha1', encoding: 'hex' }],
  }),
  whatsapp,
  worldline,
  {
    ...bodyHmac({
      provider: 'xero',
      source: 'https://developer.xero.com/documentation/guides/webhooks/configuring-your-server#intent-to-receive',
      signatures: [{ header: 'x-xero-signature', algorithm: 'sha256', encoding: 'base64' }],
    }),
    // Xero's intent-to-receive check activates a webhook only when a bad signature gets a 401.
    refusalStatus: 401,
  },
  zendesk,
  zoom,
  orb,
];
