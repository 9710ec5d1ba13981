// Webhook signature schemes, providers Mailchimp to Zoom (and Orb). Where a provider (or its own
// library) publishes a worked example, that example is the test vector. For every provider, requests
// are also signed here by the documented scheme, written out with node:crypto and never with the
// table's own code, so a wrong table entry cannot agree with itself.
import assert from 'node:assert/strict';
import { createHash, sign as ecdsaSign } from 'node:crypto';
import { describe, it } from 'node:test';
import { SCHEMES_M_Z } from '../../src/edges/webhooks/providers-m-z.js';
import { WEBHOOK_PROVIDERS } from '../../src/edge-config/modules/route-modules.js';
import { EC_KEYS, FORM, MAILGUN_TOKEN, SVIX_SECRET, TEAMS_SECRET, form, mzCases, withoutHeaders } from './webhook-signers.js';
import { mac, webhookKit } from './webhook-test-helpers.js';

const NOW = new Date('2026-11-26T10:00:00.000Z');
const NOW_SECONDS = NOW.getTime() / 1000;
/** An hour ago: outside every window in the table. */
const STALE_SECONDS = NOW_SECONDS - 3600;

const { request, accepted, refused } = webhookKit({
  now: NOW,
  url: 'https://hooks.example.com/incoming',
  headers: { 'content-type': 'application/json' },
});

// ---------------------------------------------------------------------------------------------
// Published examples

describe('webhook schemes m–z: the providers’ published examples', () => {
  it('slack: the request Slack’s “Verifying requests from Slack” page works through', async () => {
    // https://api.slack.com/authentication/verifying-requests-from-slack: signing secret,
    // timestamp, body and the signature the page arrives at.
    const body =
      'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA' +
      '&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN' +
      '&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
    const headers = {
      ...FORM,
      'x-slack-request-timestamp': '1531420618',
      'x-slack-signature': 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
    };
    const secret = '8f742231b10e8888abcd99yyyzzz85a5';
    const then = new Date((1531420618 + 60) * 1000);
    await accepted('slack', secret, request(headers, body), then);
    await refused('slack', secret, request(headers, body.replace('foobar', 'foobaz')), /does not match/, then);
    // Five minutes is Slack's window: the same request six minutes on is a replay.
    await refused('slack', secret, request(headers, body), /stale/, new Date((1531420618 + 360) * 1000));
  });

  it('twilio: the form POST of Twilio’s “Validating requests” example, auth token 12345', async () => {
    // https://www.twilio.com/docs/usage/security#validating-requests: URL, POST parameters and
    // the signature the page computes. Twilio's own library tests carry an older copy of the same
    // example (numbers ending 5309), which must hold as well.
    const url = 'https://mycompany.com/myapp.php?foo=1&bar=2';
    for (const [caller, signature] of [
      ['+14158675310', 'GvWf1cFY/Q7PnoempGyD5oXAezc='],
      ['+14158675309', 'RSOYDt4T1cUTdK1PDd93/VVr8B8='],
    ]) {
      const body = form({ CallSid: 'CA1234567890ABCDE', Caller: caller, Digits: '1234', From: caller, To: '+18005551212' });
      await accepted('twilio', '12345', request({ ...FORM, 'x-twilio-signature': signature }, body, { url }));
      // Twilio's libraries accept the URL with the scheme's default port as well.
      await accepted('twilio', '12345', request({ ...FORM, 'x-twilio-signature': signature }, body, { url: url.replace('.com/', '.com:443/') }));
      await refused('twilio', '12345', request({ ...FORM, 'x-twilio-signature': signature }, body.replace('Digits=1234', 'Digits=9999'), { url }));
      await refused('twilio', '54321', request({ ...FORM, 'x-twilio-signature': signature }, body, { url }));
    }
  });

  it('twilio: a JSON body vouched for by bodySHA256 (the vector of twilio-node’s request validation tests)', async () => {
    // twilio-node spec: body `{"property": "value", "boolean": true}`, its SHA-256 in the URL,
    // auth token 12345, signature over the URL alone.
    const body = '{"property": "value", "boolean": true}';
    const url = 'https://mycompany.com/myapp.php?foo=1&bar=2&bodySHA256=0a1ff7634d9ab3b95db5c9a2dfe9416e41502b283a80c7cf19632632f96e6620';
    const headers = { 'x-twilio-signature': 'a9nBmqA0ju/hNViExpshrM61xv4=' };
    await accepted('twilio', '12345', request(headers, body, { url }));
    await refused('twilio', '12345', request(headers, body.replace('value', 'other'), { url }));
  });

  it('svix: the example of Svix’s verification docs', async () => {
    // https://docs.svix.com/receiving/verifying-payloads/how: secret, message id, timestamp,
    // payload and signature of the docs' code sample.
    const headers = {
      'svix-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'svix-timestamp': '1614265330',
      'svix-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    };
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const then = new Date((1614265330 + 10) * 1000);
    await accepted('svix', secret, request(headers, '{"test": 2432232314}'), then);
    await refused('svix', secret, request(headers, '{"test": 2432232315}'), /does not match/, then);
    // Several signatures (a rotating secret), one of them right.
    await accepted(
      'svix',
      secret,
      request({ ...headers, 'svix-signature': `v1,${'A'.repeat(43)}= ${headers['svix-signature']}` }, '{"test": 2432232314}'),
      then,
    );
    await refused('svix', secret, request(headers, '{"test": 2432232314}'), /stale/, NOW);
  });

  it('square: the example of Square’s “Validate notifications” page', async () => {
    // https://developer.squareup.com/docs/webhooks/step3validate: signature key asdf1234,
    // notification URL https://example.com/webhook, body {"hello":"world"}.
    const headers = { 'x-square-hmacsha256-signature': '2kRE5qRU2tR+tBGlDwMEw2avJ7QM4ikPYD/PJ3bd9Og=' };
    await accepted('square', 'asdf1234', request(headers, '{"hello":"world"}', { url: 'https://example.com/webhook' }));
    // The URL is signed: the same body sent to another URL is refused.
    await refused('square', 'asdf1234', request(headers, '{"hello":"world"}', { url: 'https://example.com/webhook2' }));
  });

  it('sendgrid: the signed event of SendGrid’s own libraries’ test suites', async () => {
    // sendgrid-nodejs, sendgrid-java and sendgrid-csharp test EventWebhook verification with this
    // verification key, timestamp, payload and ECDSA signature.
    const publicKey = 'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEEDr2LjtURuePQzplybdC+u4CwrqDqBaWjcMMsTbhdbcwHBcepxo7yAQGhHPTnlvFYPAZFceEu/1FwCM/QmGUhA==';
    const payload = '{"category":"example_payload","event":"test_event","message_id":"message_id"}';
    const headers = {
      'x-twilio-email-event-webhook-timestamp': '1588788367',
      'x-twilio-email-event-webhook-signature': 'MEUCIQCtIHJeH93Y+qpYeWrySphQgpNGNr/U+UyUlBkU6n7RAwIgJTz2C+8a8xonZGi6BpSzoQsbVRamr2nlxFDWYNH2j/0=',
    };
    const then = new Date((1588788367 + 30) * 1000);
    await accepted('sendgrid', publicKey, request(headers, payload), then);
    await refused('sendgrid', publicKey, request(headers, 'payload'), /does not match/, then);
    // The libraries' "bad key" case: another EC key does not verify it.
    const otherKey = 'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEqTxd43gyp8IOEto2LdIfjRQrIbsd4SXZkLW6jDutdhXSJCWHw8REntlo7aNDthvj+y7GjUuFDb/R1NGe1OPzpA==';
    await refused('sendgrid', otherKey, request(headers, payload), /does not match/, then);
  });

  it('orb: the webhook of Orb’s official Node library tests', async () => {
    // orbcorp/orb-node tests/api-resources/webhooks.test.ts: secret, zoneless timestamp (UTC),
    // payload and signature; Orb's library allows five minutes.
    const payload =
      '{"id": "o4mmewpfNNTnjfZc", "created_at": "2024-03-27T15:42:29+00:00", "type": "resource_event.test", "properties": {"message": "A test webhook from Orb. Happy testing!"}}';
    const headers = { 'x-orb-timestamp': '2024-03-27T15:42:29.551', 'x-orb-signature': 'v1=9d25de966891ab0bc18754faf8d83d0980b44ae330fcc130b41a6cf3daf1f391' };
    const secret = 'c-UGKYdnhHh436B_sMouYAPUvXyWpzOdunZBV5dFSD8';
    const sent = Date.parse('2024-03-27T15:42:29.551Z');
    await accepted('orb', secret, request(headers, payload), new Date(sent));
    await accepted('orb', secret, request({ ...headers, 'x-orb-signature': `v1=my-invalid-signature ${headers['x-orb-signature']}` }, payload), new Date(sent));
    await refused('orb', secret, request(headers, payload), /stale/, new Date(sent + 360_000));
    await refused('orb', secret, request(headers, payload), /stale/, new Date(sent - 360_000));
    await refused('orb', 'foo', request(headers, payload), /does not match/, new Date(sent));
    await refused(
      'orb',
      secret,
      request({ ...headers, 'x-orb-signature': headers['x-orb-signature'].replace('v1=', 'v2=') }, payload),
      /does not match/,
      new Date(sent),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Every provider: signed here by its documented scheme

const CASES = mzCases();

const BODY = '{"event":"thing.created","id":"evt_1","data":{"name":"Zoë","amount":1200}}';
const OTHER_BODY = '{"event":"thing.created","id":"evt_1","data":{"name":"Zoë","amount":9900}}';

describe('webhook schemes m–z: each provider, signed by its documented scheme', () => {
  it('covers every m–z provider the API accepts, once', () => {
    const tableProviders = SCHEMES_M_Z.map((scheme) => scheme.provider);
    assert.equal(new Set(tableProviders).size, tableProviders.length, 'no provider twice');
    // The API's providers from Mailchimp on (Amazon SNS, listed as `sns`, is in the a–l table), and Orb.
    const expected = WEBHOOK_PROVIDERS.filter((provider) => (provider >= 'm' && provider !== 'sns') || provider === 'orb');
    assert.deepEqual([...tableProviders].sort(), [...expected].sort());
    assert.deepEqual(CASES.map((entry) => entry.provider).sort(), [...expected].sort(), 'a test case per provider');
    for (const scheme of SCHEMES_M_Z) assert.match(scheme.source, /^https:\/\/[^\s]+$/, `${scheme.provider} names where its scheme is published`);
  });

  for (const entry of CASES) {
    describe(entry.provider, () => {
      it('accepts a request signed with the secret', async () => {
        await accepted(entry.provider, entry.secret, entry.sign(BODY, NOW_SECONDS, 'right'));
      });

      it('refuses one signed with another secret', async () => {
        await refused(entry.provider, entry.secret, entry.sign(BODY, NOW_SECONDS, 'wrong'));
      });

      if (entry.bodySigned !== false) {
        it('refuses an altered body', async () => {
          const signed = entry.sign(BODY, NOW_SECONDS, 'right');
          await refused(entry.provider, entry.secret, { ...signed, body: entry.sign(OTHER_BODY, NOW_SECONDS, 'right').body });
        });
      }

      if (entry.timestamped) {
        it('refuses a stale timestamp, and accepts one a minute off', async () => {
          await refused(entry.provider, entry.secret, entry.sign(BODY, STALE_SECONDS, 'right'));
          await accepted(entry.provider, entry.secret, entry.sign(BODY, NOW_SECONDS - 60, 'right'));
          await accepted(entry.provider, entry.secret, entry.sign(BODY, NOW_SECONDS + 60, 'right'));
        });
      }

      it('refuses a request without its signature', async () => {
        await refused(entry.provider, entry.secret, entry.unsigned(entry.sign(BODY, NOW_SECONDS, 'right')));
      });

      // Mailgun's signature is in the body: its malformed values are in the particulars below.
      if (!entry.signatureInBody) {
        it('refuses malformed signature values without throwing', async () => {
          const signed = entry.sign(BODY, NOW_SECONDS, 'right');
          for (const garbage of ['', ' ', '=', 'v1=zz', 't=,v1=', 'sha256=', 'HMAC', 'Basic !!', '\u00ff'.repeat(64)]) {
            const headers = Object.fromEntries(Object.entries(signed.headers).map(([name, value]) => [name, name === 'content-type' ? value : garbage]));
            await refused(entry.provider, entry.secret, { ...signed, headers });
          }
        });
      }
    });
  }
});

// ---------------------------------------------------------------------------------------------
// What each scheme does beyond one signature

describe('webhook schemes m–z: provider particulars', () => {
  it('mailgun: the signature does not cover the event data, but does cover timestamp and token; a form body is read too', async () => {
    const timestamp = String(NOW_SECONDS);
    const signature = mac('sha256', 'key-mailgun-signing', timestamp + MAILGUN_TOKEN, 'hex');
    // Another token under the same signature: refused.
    const forged = JSON.stringify({ signature: { timestamp, token: MAILGUN_TOKEN.replace('a', 'c'), signature }, 'event-data': {} });
    await refused('mailgun', 'key-mailgun-signing', request({}, forged));
    const legacy = form({ event: 'delivered', timestamp, token: MAILGUN_TOKEN, signature });
    await accepted('mailgun', 'key-mailgun-signing', request(FORM, legacy));
    await refused('mailgun', 'key-mailgun-signing', request({}, 'not json'));
    for (const garbage of [null, 12, '', 'zz', { a: 1 }]) {
      const body = JSON.stringify({ signature: { timestamp, token: MAILGUN_TOKEN, signature: garbage }, 'event-data': {} });
      await refused('mailgun', 'key-mailgun-signing', request({}, body));
    }
    await refused('mailgun', 'key-mailgun-signing', request({}, JSON.stringify({ signature: 'v1' })));
    await refused('mailgun', 'key-mailgun-signing', request({}, 'null'));
  });

  it('microsoft_teams: the key is the decoded security token, not its text', async () => {
    const signature = mac('sha256', TEAMS_SECRET, BODY, 'base64');
    await refused('microsoft_teams', TEAMS_SECRET, request({ authorization: `HMAC ${signature}` }, BODY));
  });

  it('stripe, pagerduty: one matching signature among several is enough', async () => {
    const stripeSig = mac('sha256', 'whsec_s', `${NOW_SECONDS}.${BODY}`, 'hex');
    await accepted('stripe', 'whsec_s', request({ 'stripe-signature': `t=${NOW_SECONDS},v1=${'0'.repeat(64)},v1=${stripeSig},v0=${'1'.repeat(64)}` }, BODY));
    // The v0 scheme is Stripe's test one and is not a signature to accept.
    await refused('stripe', 'whsec_s', request({ 'stripe-signature': `t=${NOW_SECONDS},v0=${stripeSig}` }, BODY));
    const pagerSig = mac('sha256', 'pd', BODY, 'hex');
    await accepted('pagerduty', 'pd', request({ 'x-pagerduty-signature': `v1=${'0'.repeat(64)}, v1=${pagerSig}` }, BODY));
  });

  it('plivo: a GET is signed over its URL with the query sorted; several signatures may be listed', async () => {
    const nonce = '12345678901234567890';
    const signature = mac('sha256', 'tok', `https://voice.example.com/hangup?CallUUID=abc&Duration=3.${nonce}`, 'base64');
    const get = request({ 'x-plivo-signature-v3-nonce': nonce, 'x-plivo-signature-v3': `${'A'.repeat(43)}=,${signature}` }, '', {
      method: 'GET',
      url: 'https://voice.example.com/hangup?Duration=3&CallUUID=abc',
    });
    await accepted('plivo', 'tok', get);
    await refused('plivo', 'tok', { ...get, url: 'https://voice.example.com/hangup?Duration=4&CallUUID=abc' });
    await refused('plivo', 'tok', withoutHeaders('x-plivo-signature-v3-nonce')(get));
    // A POST with no fields and no query signs the bare URL.
    const bare = mac('sha256', 'tok', `https://voice.example.com/answer.${nonce}`, 'base64');
    await accepted(
      'plivo',
      'tok',
      request({ 'x-plivo-signature-v3-nonce': nonce, 'x-plivo-signature-v3': bare }, '', { url: 'https://voice.example.com/answer' }),
    );
  });

  it('twilio: a JSON body whose bodySHA256 does not match is refused even with a good URL signature', async () => {
    const url = `https://sms.example.com/json?bodySHA256=${createHash('sha256').update(OTHER_BODY).digest('hex')}`;
    await refused('twilio', 'tok', request({ 'x-twilio-signature': mac('sha1', 'tok', url, 'base64') }, BODY, { url }));
    await accepted('twilio', 'tok', request({ 'x-twilio-signature': mac('sha1', 'tok', url, 'base64') }, OTHER_BODY, { url }));
  });

  it('twitter: the unsigned CRC GET goes through to the app, which answers it; other unsigned requests do not', async () => {
    await accepted(
      'twitter',
      'consumer-secret',
      request({}, '', { method: 'GET', url: 'https://hooks.example.com/x?crc_token=9b4507b3-9040-4669-9ca3-6b94edb50553' }),
    );
    await refused('twitter', 'consumer-secret', request({}, '', { method: 'GET', url: 'https://hooks.example.com/x' }));
    await refused('twitter', 'consumer-secret', request({}, BODY, { method: 'POST', url: 'https://hooks.example.com/x?crc_token=1' }));
  });

  it('whatsapp: Meta’s subscription GET goes through; an unsigned POST does not', async () => {
    const url = 'https://hooks.example.com/wa?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=meatyhamhock';
    await accepted('whatsapp', 'app-secret', request({}, '', { method: 'GET', url }));
    await refused('whatsapp', 'app-secret', request({}, BODY, { method: 'POST', url }));
    // The older SHA-1 header counts only when the SHA-256 one is absent.
    const sha1 = { 'x-hub-signature': `sha1=${mac('sha1', 'app-secret', BODY, 'hex')}` };
    await accepted('whatsapp', 'app-secret', request(sha1, BODY));
    await refused('whatsapp', 'app-secret', request({ ...sha1, 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` }, BODY));
  });

  it('worldline: the endpoint verification GET goes through; the key id header is not required', async () => {
    await accepted('worldline', 'key', request({ 'x-gcs-webhooks-endpoint-verification': 'abc123' }, '', { method: 'GET' }));
    await refused('worldline', 'key', request({}, '', { method: 'GET' }));
  });

  it('mailchimp: Mandrill’s bodiless HEAD check goes through; a HEAD with a body does not', async () => {
    await accepted('mailchimp', 'key', request({}, '', { method: 'HEAD' }));
    await refused('mailchimp', 'key', request({}, BODY, { method: 'HEAD' }));
  });

  it('svix: white-labelled webhook- headers are read like svix- ones', async () => {
    const key = Buffer.from(SVIX_SECRET.slice('whsec_'.length), 'base64');
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(NOW_SECONDS),
      'webhook-signature': `v1,${mac('sha256', key, `msg_1.${NOW_SECONDS}.${BODY}`, 'base64')}`,
    };
    await accepted('svix', SVIX_SECRET, request(headers, BODY));
  });

  it('trendmicro_conformity: the older X-TrendMicro-Signature header is read too', async () => {
    await accepted('trendmicro_conformity', 'token', request({ 'x-trendmicro-signature': mac('sha256', 'token', BODY, 'hex') }, BODY));
  });

  it('vmware: a secret without the username::password separator refuses everything', async () => {
    await refused('vmware', 'only-a-password', request({ authorization: `Basic ${Buffer.from('only-a-password').toString('base64')}` }, BODY));
  });

  it('sendgrid: a secret that is not an EC public key refuses instead of throwing', async () => {
    const signature = ecdsaSign('sha256', Buffer.from(`${NOW_SECONDS}${BODY}`), EC_KEYS.right.privateKey).toString('base64');
    const headers = { 'x-twilio-email-event-webhook-timestamp': String(NOW_SECONDS), 'x-twilio-email-event-webhook-signature': signature };
    await refused('sendgrid', 'bm90IGEga2V5', request(headers, BODY));
  });

  it('zendesk, orb: a timestamp that is not a date is refused', async () => {
    const zendesk = { 'x-zendesk-webhook-signature-timestamp': 'yesterday', 'x-zendesk-webhook-signature': mac('sha256', 's', `yesterday${BODY}`, 'base64') };
    await refused('zendesk', 's', request(zendesk, BODY));
    const orb = { 'x-orb-timestamp': 'yesterday', 'x-orb-signature': `v1=${mac('sha256', 's', `v1:yesterday:${BODY}`, 'hex')}` };
    await refused('orb', 's', request(orb, BODY));
  });
});
