// How each webhook provider signs, per its docs, written out with node:crypto and never with the
// table under test (src/edges/webhooks/), so a wrong table entry cannot agree with itself. The unit
// tests (webhooks-a-l, webhooks-m-z) check each scheme with these; the end-to-end test
// (test/edges/webhook-providers.test.ts) sends the same requests through the public listener, so
// the URL-signing providers take the host they are called at.
import { generateKeyPairSync, randomBytes, sign as ecdsaSign, type KeyObject } from 'node:crypto';
import type { WebhookRequest } from '../../src/edges/webhooks/scheme.js';
import { mac, webhookKit } from './webhook-test-helpers.js';

export const hex256 = (key: string | Buffer, data: string | Buffer) => mac('sha256', key, data, 'hex');
export const b64256 = (key: string | Buffer, data: string | Buffer) => mac('sha256', key, data, 'base64');
export const hex1 = (key: string | Buffer, data: string | Buffer) => mac('sha1', key, data, 'hex');

export const form = (fields: Record<string, string>): string => new URLSearchParams(fields).toString();
export const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

// ---------------------------------------------------------------------------------------------
// a–l: each case gives the headers of a signed request; the test builds the request

export interface AlCase {
  provider: string;
  secret: string;
  /** The body sent at `at` (most are fixed; Linear's carries its own timestamp). */
  body?: (at: number) => string;
  /** The headers of a request with `body` signed with `secret` at `at` (seconds). */
  sign(secret: string, body: string, at: number): Record<string, string>;
  /** The header whose absence is a refusal. */
  signatureHeader: string;
  /** How old a request must be to be refused as stale; absent when the scheme signs no time. */
  staleAfter?: number;
  url?: string;
  /** The token schemes (GitLab) do not cover the body. */
  bodyUnsigned?: true;
  /** Another secret of the same kind (default: the secret with an x appended). */
  otherSecret?: string;
}

export const JSON_BODY = '{"event":"test","data":{"id":42,"name":"Zoë"}}';

/** The a–l cases; `host` is the one the URL-signing providers (Contentful, HubSpot) are called at. */
export function alCases(host = 'hooks.example.com'): AlCase[] {
  return [
    {
      provider: 'aftership',
      secret: 'aftership-webhook-secret',
      sign: (secret, body) => ({ 'aftership-hmac-sha256': b64256(secret, body) }),
      signatureHeader: 'aftership-hmac-sha256',
    },
    {
      provider: 'airship',
      secret: 'a3f1c2d4e5b6a7980123456789abcdef0123456789abcdef0123456789abcdef',
      // X-UA-SIGNATURE: hex HMAC-SHA256 of `<X-UA-TIMESTAMP>:<body>`.
      sign: (secret, body, at) => ({ 'X-UA-Timestamp': String(at), 'X-UA-Signature': hex256(secret, `${at}:${body}`) }),
      signatureHeader: 'x-ua-signature',
      staleAfter: 3600,
    },
    {
      provider: 'alchemy',
      secret: 'whsec_alchemySigningKey',
      sign: (secret, body) => ({ 'X-Alchemy-Signature': hex256(secret, body) }),
      signatureHeader: 'x-alchemy-signature',
    },
    {
      provider: 'autodesk',
      secret: 'autodesk-token',
      sign: (secret, body) => ({ 'x-adsk-signature': `sha1hash=${hex1(secret, body)}` }),
      signatureHeader: 'x-adsk-signature',
    },
    {
      provider: 'bitbucket',
      secret: 'bitbucket-secret',
      sign: (secret, body) => ({ 'X-Hub-Signature': `sha256=${hex256(secret, body)}` }),
      signatureHeader: 'x-hub-signature',
    },
    {
      provider: 'bolt',
      secret: 'bolt-signing-secret',
      sign: (secret, body) => ({ 'X-Bolt-Hmac-Sha256': b64256(secret, body) }),
      signatureHeader: 'x-bolt-hmac-sha256',
    },
    {
      provider: 'box',
      secret: 'box-primary-key',
      // The body's bytes then the BOX-DELIVERY-TIMESTAMP's; both keys' signatures sent.
      sign: (secret, body, at) => {
        const stamp = new Date(at * 1000).toISOString().replace('.000Z', '+00:00');
        return {
          'BOX-DELIVERY-TIMESTAMP': stamp,
          'BOX-SIGNATURE-PRIMARY': b64256(secret, body + stamp),
          'BOX-SIGNATURE-SECONDARY': b64256('box-secondary-key', body + stamp),
          'BOX-SIGNATURE-VERSION': '1',
          'BOX-SIGNATURE-ALGORITHM': 'HmacSHA256',
        };
      },
      signatureHeader: 'box-signature-primary',
      staleAfter: 11 * 60,
    },
    {
      provider: 'brex',
      secret: Buffer.from('brex-key-bytes-0123456789').toString('base64'),
      // Appending to base64 can decode to the same key, so the other secret is another key.
      otherSecret: Buffer.from('brex-key-bytes-9876543210').toString('base64'),
      sign: (secret, body, at) => ({
        'Webhook-Id': 'msg_brex_1',
        'Webhook-Timestamp': String(at),
        'Webhook-Signature': `v1,${b64256(Buffer.from(secret, 'base64'), `msg_brex_1.${at}.${body}`)}`,
      }),
      signatureHeader: 'webhook-signature',
      staleAfter: 6 * 60,
    },
    {
      provider: 'buildkite',
      secret: 'bk-webhook-value-1',
      sign: (secret, body, at) => ({ 'X-Buildkite-Signature': `timestamp=${at},signature=${hex256(secret, `${at}.${body}`)}` }),
      signatureHeader: 'x-buildkite-signature',
      staleAfter: 3600,
    },
    {
      provider: 'calendly',
      secret: 'calendly-signing-key',
      sign: (secret, body, at) => ({ 'Calendly-Webhook-Signature': `t=${at},v1=${hex256(secret, `${at}.${body}`)}` }),
      signatureHeader: 'calendly-webhook-signature',
      staleAfter: 4 * 60,
    },
    {
      provider: 'castle',
      secret: 'castle-api-secret',
      sign: (secret, body) => ({ 'X-Castle-Signature': b64256(secret, body) }),
      signatureHeader: 'x-castle-signature',
    },
    {
      provider: 'chargify',
      secret: 'site-shared-key',
      sign: (secret, body) => ({ 'X-Chargify-Webhook-Signature-Hmac-Sha-256': hex256(secret, body) }),
      signatureHeader: 'x-chargify-webhook-signature-hmac-sha-256',
    },
    {
      provider: 'circleci',
      secret: 'circleci-secret',
      sign: (secret, body) => ({ 'circleci-signature': `v1=${hex256(secret, body)}` }),
      signatureHeader: 'circleci-signature',
    },
    {
      provider: 'clearbit',
      secret: 'sk_clearbit_api_key',
      sign: (secret, body) => ({ 'X-Request-Signature': `sha1=${hex1(secret, body)}` }),
      signatureHeader: 'x-request-signature',
    },
    {
      provider: 'clerk',
      secret: `whsec_${Buffer.from('clerk-key-bytes').toString('base64')}`,
      otherSecret: `whsec_${Buffer.from('clerk-key-other').toString('base64')}`,
      sign: (secret, body, at) => ({
        'svix-id': 'msg_clerk_1',
        'svix-timestamp': String(at),
        'svix-signature': `v1,${b64256(Buffer.from(secret.slice(6), 'base64'), `msg_clerk_1.${at}.${body}`)}`,
      }),
      signatureHeader: 'svix-signature',
      staleAfter: 6 * 60,
    },
    {
      provider: 'coinbase',
      secret: 'coinbase-shared-secret',
      sign: (secret, body) => ({ 'X-CC-Webhook-Signature': hex256(secret, body) }),
      signatureHeader: 'x-cc-webhook-signature',
    },
    {
      provider: 'contentful',
      secret: 'c'.repeat(64),
      url: `https://${host}/webhooks/contentful?a=1&b=2`,
      // Canonical request per Contentful's request verification: method, the path with its query
      // escaped then URI-encoded, the signed headers sorted as `name:value` joined by `;`, the body.
      sign: (secret, body, at) => {
        const ms = String(at * 1000);
        const signed = 'x-contentful-signed-headers,x-contentful-timestamp,x-contentful-topic';
        const canonical = [
          'POST',
          '/webhooks/contentful?a%253D1%2526b%253D2',
          `x-contentful-signed-headers:${signed};x-contentful-timestamp:${ms};x-contentful-topic:ContentManagement.Entry.publish`,
          body,
        ].join('\n');
        return {
          'X-Contentful-Topic': 'ContentManagement.Entry.publish',
          'x-contentful-timestamp': ms,
          'x-contentful-signed-headers': signed,
          'x-contentful-signature': hex256(secret, canonical),
        };
      },
      signatureHeader: 'x-contentful-signature',
      staleAfter: 31,
    },
    {
      provider: 'docusign',
      secret: 'docusign-connect-key-2',
      // One header per Connect key; this account has two and the route holds the second.
      sign: (secret, body) => ({ 'X-DocuSign-Signature-1': b64256('docusign-connect-key-1', body), 'X-DocuSign-Signature-2': b64256(secret, body) }),
      signatureHeader: 'x-docusign-signature-2',
    },
    {
      provider: 'dropbox',
      secret: 'dropbox-app-secret',
      sign: (secret, body) => ({ 'X-Dropbox-Signature': hex256(secret, body) }),
      signatureHeader: 'x-dropbox-signature',
    },
    ...['facebook_graph_api', 'facebook_messenger', 'instagram'].map((provider): AlCase => ({
      provider,
      secret: 'meta-app-secret',
      sign: (secret, body) => ({ 'X-Hub-Signature-256': `sha256=${hex256(secret, body)}` }),
      signatureHeader: 'x-hub-signature-256',
    })),
    {
      provider: 'frameio',
      secret: 'frameio-secret',
      sign: (secret, body, at) => ({ 'X-Frameio-Request-Timestamp': String(at), 'X-Frameio-Signature': `v0=${hex256(secret, `v0:${at}:${body}`)}` }),
      signatureHeader: 'x-frameio-signature',
      staleAfter: 6 * 60,
    },
    {
      provider: 'github',
      secret: 'github-secret',
      sign: (secret, body) => ({ 'X-Hub-Signature-256': `sha256=${hex256(secret, body)}` }),
      signatureHeader: 'x-hub-signature-256',
    },
    {
      provider: 'gitlab',
      secret: 'gitlab-secret-token',
      sign: (secret) => ({ 'X-Gitlab-Token': secret }),
      signatureHeader: 'x-gitlab-token',
      bodyUnsigned: true,
    },
    {
      provider: 'go1',
      secret: 'go1-shared-secret',
      sign: (secret, body, at) => ({ 'go1-signature': `t=${at},v1=${hex256(secret, `${at}.${body}`)}` }),
      signatureHeader: 'go1-signature',
      staleAfter: 2 * 60,
    },
    {
      provider: 'heroku',
      secret: 'heroku-webhook-secret',
      sign: (secret, body) => ({ 'Heroku-Webhook-Hmac-SHA256': b64256(secret, body) }),
      signatureHeader: 'heroku-webhook-hmac-sha256',
    },
    {
      provider: 'hostedhooks',
      secret: 'hostedhooks-endpoint-secret',
      sign: (secret, body, at) => ({ 'HostedHooks-Signature': `t=${at},s=${hex256(secret, `${at}.${body}`)}` }),
      signatureHeader: 'hostedhooks-signature',
      staleAfter: 3600,
    },
    {
      provider: 'hubspot',
      secret: 'hubspot-client-secret',
      url: `https://${host}/webhooks/hubspot?portal=1%3A2&x=%2Fy`,
      // v3: method, the URL with %3A, %2F… decoded, the body, the timestamp in milliseconds; base64.
      sign: (secret, body, at) => {
        const ms = String(at * 1000);
        return {
          'X-HubSpot-Request-Timestamp': ms,
          'X-HubSpot-Signature-v3': b64256(secret, `POSThttps://${host}/webhooks/hubspot?portal=1:2&x=/y${body}${ms}`),
        };
      },
      signatureHeader: 'x-hubspot-signature-v3',
      staleAfter: 6 * 60,
    },
    {
      provider: 'graphcms',
      secret: 'rCNwyiloY3oJYYkxgpBXaleIiUv5MYlx',
      // Hygraph signs JSON.stringify({ Body, EnvironmentName, TimeStamp }) with the body as text.
      sign: (secret, body, at) => {
        const ms = at * 1000;
        const signature = b64256(secret, JSON.stringify({ Body: body, EnvironmentName: 'master', TimeStamp: ms }));
        return { 'gcms-signature': `sign=${signature}, env=master, t=${ms}` };
      },
      signatureHeader: 'gcms-signature',
      staleAfter: 3600,
    },
    {
      provider: 'intercom',
      secret: 'intercom-client-secret',
      sign: (secret, body) => ({ 'X-Hub-Signature': `sha1=${hex1(secret, body)}` }),
      signatureHeader: 'x-hub-signature',
    },
    {
      provider: 'launch_darkly',
      secret: 'ld-webhook-secret',
      sign: (secret, body) => ({ 'X-LD-Signature': hex256(secret, body) }),
      signatureHeader: 'x-ld-signature',
    },
    {
      provider: 'linear',
      secret: 'lin_wh_secret',
      body: (at) => JSON.stringify({ action: 'create', type: 'Issue', webhookTimestamp: at * 1000 }),
      sign: (secret, body) => ({ 'Linear-Signature': hex256(secret, body) }),
      signatureHeader: 'linear-signature',
      staleAfter: 2 * 60,
    },
    {
      provider: 'jira',
      secret: 'jira-admin-webhook-secret',
      sign: (secret, body) => ({ 'X-Hub-Signature': `sha256=${hex256(secret, body)}` }),
      signatureHeader: 'x-hub-signature',
    },
  ];
}

// ---------------------------------------------------------------------------------------------
// m–z: each case builds the whole request, signed with the right or a wrong key

export type Which = 'right' | 'wrong';

export interface MzCase {
  provider: string;
  secret: string;
  /** A request carrying `body` as the provider would send it at `at` (seconds), signed with the right or a wrong key. */
  sign(body: string, at: number, which: Which): WebhookRequest;
  /** The same request with its signature taken away. */
  unsigned(request: WebhookRequest): WebhookRequest;
  /** Whether a signed timestamp bounds the request's age. */
  timestamped: boolean;
  /** False where the provider's signature does not cover the body (said in the case). */
  bodySigned?: boolean;
  /** True where the signature travels in the body, not a header (Mailgun). */
  signatureInBody?: boolean;
}

export const withoutHeaders =
  (...names: string[]) =>
  (signed: WebhookRequest): WebhookRequest => ({
    ...signed,
    headers: Object.fromEntries(Object.entries(signed.headers).filter(([name]) => !names.includes(name))),
  });

/** A secret per case and a different one that must not verify. */
const secretFor = (which: Which, secret: string): string => (which === 'right' ? secret : `${secret}-not`);

export const EC_KEYS = { right: generateKeyPairSync('ec', { namedCurve: 'prime256v1' }), wrong: generateKeyPairSync('ec', { namedCurve: 'prime256v1' }) };
const spkiBase64 = (key: KeyObject): string => key.export({ format: 'der', type: 'spki' }).toString('base64');

export const TEAMS_SECRET = randomBytes(32).toString('base64');
export const SVIX_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
export const MAILGUN_TOKEN = 'a'.repeat(25) + 'b'.repeat(25);

/**
 * The m–z cases. Their requests go to https://<host>/incoming, or, for the providers that sign the
 * URL (Mailchimp, Plivo, Square, Twilio), to their own path at `host`; without a host each keeps
 * the example host of its docs.
 */
export function mzCases(host?: string): MzCase[] {
  const at = (usual: string): string => host ?? usual;
  const { request } = webhookKit({ now: new Date(), url: `https://${at('hooks.example.com')}/incoming`, headers: { 'content-type': 'application/json' } });
  /** The common case: one header carrying `prefix` and a digest of the raw body. */
  const bodyDigestCase = (provider: string, headerName: string, algorithm: string, encoding: 'hex' | 'base64', prefix = ''): MzCase => {
    const secret = `${provider}-secret-${randomBytes(6).toString('hex')}`;
    return {
      provider,
      secret,
      sign: (body, _at, which) => request({ [headerName]: prefix + mac(algorithm, secretFor(which, secret), body, encoding) }, body),
      unsigned: withoutHeaders(headerName),
      timestamped: false,
    };
  };

  return [
    {
      // Mandrill: base64 HMAC-SHA1 of the URL, then each POST field's name and value sorted by name.
      provider: 'mailchimp',
      secret: 'mandrill-webhook-key',
      sign(body, _at, which) {
        const url = `https://${at('hooks.example.com')}/mandrill?tenant=7`;
        const signed = url + 'mandrill_events' + body;
        return request(
          { ...FORM, 'x-mandrill-signature': mac('sha1', secretFor(which, 'mandrill-webhook-key'), signed, 'base64') },
          form({ mandrill_events: body }),
          { url },
        );
      },
      unsigned: withoutHeaders('x-mandrill-signature'),
      timestamped: false,
    },
    {
      // Mailgun: the signature object in the JSON body, hex HMAC-SHA256 of timestamp + token. The
      // event data is not signed by Mailgun, so an altered event is not detectable (tested below).
      provider: 'mailgun',
      secret: 'key-mailgun-signing',
      sign(body, at, which) {
        const timestamp = String(at);
        const signature = mac('sha256', secretFor(which, 'key-mailgun-signing'), timestamp + MAILGUN_TOKEN, 'hex');
        return request({}, JSON.stringify({ signature: { timestamp, token: MAILGUN_TOKEN, signature }, 'event-data': { event: body } }));
      },
      unsigned: (signed) => request({}, JSON.stringify({ 'event-data': JSON.parse(signed.body.toString()) })),
      timestamped: true,
      bodySigned: false,
      signatureInBody: true,
    },
    {
      // Teams: Authorization: HMAC <base64 HMAC-SHA256 of the body>, keyed by the base64-decoded token.
      provider: 'microsoft_teams',
      secret: TEAMS_SECRET,
      sign: (body, _at, which) =>
        request({ authorization: `HMAC ${mac('sha256', which === 'right' ? Buffer.from(TEAMS_SECRET, 'base64') : randomBytes(32), body, 'base64')}` }, body),
      unsigned: withoutHeaders('authorization'),
      timestamped: false,
    },
    bodyDigestCase('modern_treasury', 'x-signature', 'sha256', 'hex'),
    bodyDigestCase('mongodb', 'x-mms-signature', 'sha1', 'base64'),
    {
      // Mux: mux-signature: t=<seconds>,v1=<hex HMAC-SHA256 of "t.body">.
      provider: 'mux',
      secret: 'mux-signing-secret',
      sign: (body, at, which) =>
        request({ 'mux-signature': `t=${at},v1=${mac('sha256', secretFor(which, 'mux-signing-secret'), `${at}.${body}`, 'hex')}` }, body),
      unsigned: withoutHeaders('mux-signature'),
      timestamped: true,
    },
    bodyDigestCase('orbit', 'x-orbit-signature', 'sha256', 'hex', 'sha256='),
    bodyDigestCase('pagerduty', 'x-pagerduty-signature', 'sha256', 'hex', 'v1='),
    {
      // Pinwheel: x-pinwheel-signature: v2=<hex HMAC-SHA256 of "v2:<x-timestamp>:body">.
      provider: 'pinwheel',
      secret: 'pinwheel-api-secret',
      sign: (body, at, which) =>
        request(
          { 'x-timestamp': String(at), 'x-pinwheel-signature': `v2=${mac('sha256', secretFor(which, 'pinwheel-api-secret'), `v2:${at}:${body}`, 'hex')}` },
          body,
        ),
      unsigned: withoutHeaders('x-pinwheel-signature'),
      timestamped: true,
    },
    {
      // Plivo V3: base64 HMAC-SHA256 of the URL with its query sorted, '.', the POST fields sorted and
      // run together, '.', the nonce.
      provider: 'plivo',
      secret: 'plivo-auth-token',
      sign(body, _at, which) {
        const nonce = '05429567804466091622';
        const signed = `https://${at('voice.example.com')}/answer?a=1&b=2.From14155550100Text${body}.${nonce}`;
        return request(
          { ...FORM, 'x-plivo-signature-v3-nonce': nonce, 'x-plivo-signature-v3': mac('sha256', secretFor(which, 'plivo-auth-token'), signed, 'base64') },
          form({ Text: body, From: '14155550100' }),
          { url: `https://${at('voice.example.com')}/answer?b=2&a=1` },
        );
      },
      unsigned: withoutHeaders('x-plivo-signature-v3'),
      timestamped: false,
    },
    { ...bodyDigestCase('pusher', 'x-pusher-signature', 'sha256', 'hex') },
    {
      // SendGrid: base64 DER ECDSA P-256/SHA-256 over timestamp + body; the secret is the public key.
      provider: 'sendgrid',
      secret: spkiBase64(EC_KEYS.right.publicKey),
      sign: (body, at, which) =>
        request(
          {
            'x-twilio-email-event-webhook-timestamp': String(at),
            'x-twilio-email-event-webhook-signature': ecdsaSign('sha256', Buffer.from(`${at}${body}`), EC_KEYS[which].privateKey).toString('base64'),
          },
          body,
        ),
      unsigned: withoutHeaders('x-twilio-email-event-webhook-signature'),
      timestamped: true,
    },
    // Sentry sends Sentry-Hook-Timestamp, but signs the body only: no window can be enforced.
    bodyDigestCase('sentry', 'sentry-hook-signature', 'sha256', 'hex'),
    bodyDigestCase('shopify', 'x-shopify-hmac-sha256', 'sha256', 'base64'),
    bodyDigestCase('signal_sciences', 'x-sigsci-signature', 'sha256', 'hex'),
    {
      // Slack: x-slack-signature: v0=<hex HMAC-SHA256 of "v0:<timestamp>:body">.
      provider: 'slack',
      secret: 'slack-signing-secret',
      sign: (body, at, which) =>
        request(
          {
            'x-slack-request-timestamp': String(at),
            'x-slack-signature': `v0=${mac('sha256', secretFor(which, 'slack-signing-secret'), `v0:${at}:${body}`, 'hex')}`,
          },
          body,
        ),
      unsigned: withoutHeaders('x-slack-signature'),
      timestamped: true,
    },
    bodyDigestCase('sonatype', 'x-nexus-webhook-signature', 'sha1', 'hex'),
    {
      // Square: base64 HMAC-SHA256 of the notification URL followed by the body.
      provider: 'square',
      secret: 'square-signature-key',
      sign: (body, _at, which) =>
        request(
          {
            'x-square-hmacsha256-signature': mac(
              'sha256',
              secretFor(which, 'square-signature-key'),
              `https://${at('shop.example.com')}/square${body}`,
              'base64',
            ),
          },
          body,
          {
            url: `https://${at('shop.example.com')}/square`,
          },
        ),
      unsigned: withoutHeaders('x-square-hmacsha256-signature'),
      timestamped: false,
    },
    {
      // Stripe: stripe-signature: t=<seconds>,v1=<hex HMAC-SHA256 of "t.body">.
      provider: 'stripe',
      secret: 'whsec_stripe_endpoint_secret',
      sign: (body, at, which) =>
        request({ 'stripe-signature': `t=${at},v1=${mac('sha256', secretFor(which, 'whsec_stripe_endpoint_secret'), `${at}.${body}`, 'hex')}` }, body),
      unsigned: withoutHeaders('stripe-signature'),
      timestamped: true,
    },
    {
      // Svix: svix-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">, keyed by the decoded secret.
      provider: 'svix',
      secret: SVIX_SECRET,
      sign(body, at, which) {
        const key = which === 'right' ? Buffer.from(SVIX_SECRET.slice('whsec_'.length), 'base64') : randomBytes(24);
        return request(
          { 'svix-id': 'msg_2cYBeXb', 'svix-timestamp': String(at), 'svix-signature': `v1,${mac('sha256', key, `msg_2cYBeXb.${at}.${body}`, 'base64')}` },
          body,
        );
      },
      unsigned: withoutHeaders('svix-signature'),
      timestamped: true,
    },
    bodyDigestCase('terraform', 'x-tfe-notification-signature', 'sha512', 'hex'),
    {
      // TikTok: tiktok-signature: t=<seconds>,s=<hex HMAC-SHA256 of "t.body">.
      provider: 'tiktok',
      secret: 'tiktok-client-secret',
      sign: (body, at, which) =>
        request({ 'tiktok-signature': `t=${at},s=${mac('sha256', secretFor(which, 'tiktok-client-secret'), `${at}.${body}`, 'hex')}` }, body),
      unsigned: withoutHeaders('tiktok-signature'),
      timestamped: true,
    },
    bodyDigestCase('trendmicro_conformity', 'x-conformity-signature', 'sha256', 'hex'),
    {
      // Twilio: base64 HMAC-SHA1 of the URL, then each POST field's name and value sorted by name.
      provider: 'twilio',
      secret: 'twilio-auth-token',
      sign(body, _at, which) {
        const url = `https://${at('sms.example.com')}/inbound?account=42`;
        const signed = `${url}Body${body}From+14155550100MessageSidSM0123`;
        return request(
          { ...FORM, 'x-twilio-signature': mac('sha1', secretFor(which, 'twilio-auth-token'), signed, 'base64') },
          form({ MessageSid: 'SM0123', From: '+14155550100', Body: body }),
          {
            url,
          },
        );
      },
      unsigned: withoutHeaders('x-twilio-signature'),
      timestamped: false,
    },
    bodyDigestCase('twitter', 'x-twitter-webhooks-signature', 'sha256', 'base64', 'sha256='),
    bodyDigestCase('typeform', 'typeform-signature', 'sha256', 'base64', 'sha256='),
    {
      // VMware Workspace ONE: HTTP Basic with the event notification's user name and password, taken
      // as ngrok takes them (`username::password`). Basic authentication does not cover the body.
      provider: 'vmware',
      secret: 'ws1-events::p@ss:w0rd',
      sign: (body, _at, which) =>
        request({ authorization: `Basic ${Buffer.from(which === 'right' ? 'ws1-events:p@ss:w0rd' : 'ws1-events:p@ss:w0rD').toString('base64')}` }, body),
      unsigned: withoutHeaders('authorization'),
      timestamped: false,
      bodySigned: false,
    },
    bodyDigestCase('webex', 'x-spark-signature', 'sha1', 'hex'),
    bodyDigestCase('whatsapp', 'x-hub-signature-256', 'sha256', 'hex', 'sha256='),
    bodyDigestCase('worldline', 'x-gcs-signature', 'sha256', 'base64'),
    bodyDigestCase('xero', 'x-xero-signature', 'sha256', 'base64'),
    {
      // Zendesk: base64 HMAC-SHA256 of the signature timestamp (ISO 8601) followed by the body.
      provider: 'zendesk',
      secret: 'zendesk-signing-secret',
      sign(body, at, which) {
        const timestamp = new Date(at * 1000).toISOString().replace('.000Z', 'Z');
        return request(
          {
            'x-zendesk-webhook-signature-timestamp': timestamp,
            'x-zendesk-webhook-signature': mac('sha256', secretFor(which, 'zendesk-signing-secret'), timestamp + body, 'base64'),
          },
          body,
        );
      },
      unsigned: withoutHeaders('x-zendesk-webhook-signature'),
      timestamped: true,
    },
    {
      // Zoom: x-zm-signature: v0=<hex HMAC-SHA256 of "v0:<x-zm-request-timestamp>:body">.
      provider: 'zoom',
      secret: 'zoom-secret-token',
      sign: (body, at, which) =>
        request(
          { 'x-zm-request-timestamp': String(at), 'x-zm-signature': `v0=${mac('sha256', secretFor(which, 'zoom-secret-token'), `v0:${at}:${body}`, 'hex')}` },
          body,
        ),
      unsigned: withoutHeaders('x-zm-signature'),
      timestamped: true,
    },
    {
      // Orb: x-orb-signature: v1=<hex HMAC-SHA256 of "v1:<x-orb-timestamp>:body">, the timestamp ISO 8601 without a zone.
      provider: 'orb',
      secret: 'orb-webhook-secret',
      sign(body, at, which) {
        const timestamp = new Date(at * 1000).toISOString().replace('Z', '');
        return request(
          { 'x-orb-timestamp': timestamp, 'x-orb-signature': `v1=${mac('sha256', secretFor(which, 'orb-webhook-secret'), `v1:${timestamp}:${body}`, 'hex')}` },
          body,
        );
      },
      unsigned: withoutHeaders('x-orb-signature'),
      timestamped: true,
    },
  ];
}
