// Webhook verification for the providers a–l: each provider's request, signed here the way the
// provider's docs describe it (written out in this file, not taken from the table under test), is
// accepted; a wrong signature, an altered body, a stale timestamp and a missing header are refused.
// Where a provider publishes a worked example (GitHub, Svix/Standard Webhooks), that example is the
// test vector. SNS is signed by a certificate the test makes, served by a fetcher the test gives.
import assert from 'node:assert/strict';
import { sign as rsaSign } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, LookupFunction } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { WEBHOOK_PROVIDERS } from '../../src/edge-config/modules/route-modules.js';
import { MAX_WEBHOOK_BODY_BYTES, createCertificateFetcher, schemeOf, verifyWebhook } from '../../src/edges/webhooks/index.js';
import { SCHEMES_A_L } from '../../src/edges/webhooks/providers-a-l.js';
import { makeChain, type Chain } from '../helpers/certs.js';
import { JSON_BODY, alCases, b64256, hex1, hex256 } from './webhook-signers.js';
import { webhookKit } from './webhook-test-helpers.js';

const NOW = new Date();
const T = Math.floor(NOW.getTime() / 1000);
const URL_ = 'https://hooks.example.com/webhooks/in?route=1';

const { request, accepted, refused } = webhookKit({ now: NOW, url: URL_ });

// ---------------------------------------------------------------------------------------------
// One case per provider: how the provider signs, per its docs

const CASES = alCases();

describe('webhook verification a–l: every provider', () => {
  for (const c of CASES) {
    const bodyAt = c.body ?? (() => JSON_BODY);
    const make = (at: number, secret = c.secret) => request(c.sign(secret, bodyAt(at), at), bodyAt(at), { url: c.url ?? URL_ });

    describe(c.provider, () => {
      it('accepts a request signed by the documented scheme', async () => {
        await accepted(c.provider, c.secret, make(T));
      });

      it('refuses a request signed with another secret', async () => {
        await refused(c.provider, c.secret, make(T, c.otherSecret ?? `${c.secret}x`), /does not match/);
      });

      if (!c.bodyUnsigned) {
        it('refuses an altered body', async () => {
          const original = make(T);
          await refused(c.provider, c.secret, { ...original, body: Buffer.concat([original.body, Buffer.from(' ')]) }, /does not match|webhookTimestamp/);
        });
      }

      if (c.staleAfter !== undefined) {
        const staleAfter = c.staleAfter;
        it('refuses a stale timestamp, and one from the future', async () => {
          await refused(c.provider, c.secret, make(T - staleAfter), /stale|more than/);
          await refused(c.provider, c.secret, make(T + staleAfter), /stale|more than/);
        });
      }

      it(`refuses a request without ${c.signatureHeader}`, async () => {
        const req = make(T);
        const headers = { ...req.headers };
        delete headers[c.signatureHeader];
        await refused(c.provider, c.secret, { ...req, headers }, /missing|does not match/);
      });
    });
  }

  it('covers exactly the providers a–l of the API, each with an https source', () => {
    const mine = new Set(CASES.map((c) => c.provider).concat('sns'));
    assert.deepEqual(SCHEMES_A_L.map((scheme) => scheme.provider).sort(), [...mine].sort());
    for (const scheme of SCHEMES_A_L) {
      assert.ok(WEBHOOK_PROVIDERS.includes(scheme.provider), `${scheme.provider} is a provider the API accepts`);
      assert.match(scheme.source, /^https:\/\/[^/]+\//, `${scheme.provider} names where it is documented`);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Published examples

describe('webhook verification a–l: published examples', () => {
  it('github: the docs example ("It\'s a Secret to Everybody" / "Hello, World!")', async () => {
    // https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries#testing-the-webhook-payload-validation
    const req = request({ 'X-Hub-Signature-256': 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17' }, 'Hello, World!');
    await accepted('github', "It's a Secret to Everybody", req);
    await refused('github', "It's a Secret to Everybody", { ...req, body: Buffer.from('Hello, World?') }, /does not match/);
  });

  // https://docs.svix.com/receiving/verifying-payloads/how-manual (the same example as the Standard
  // Webhooks specification): secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw, id msg_p5jXN8AQM9LWM0D4loKWxJek,
  // timestamp 1614265330, body {"test": 2432232314} → v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=
  const SVIX_AT = new Date(1614265330 * 1000);
  const svixBody = '{"test": 2432232314}';
  const svixSignature = 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';

  it('clerk: the Svix docs example, with svix-* headers', async () => {
    const req = request({ 'svix-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek', 'svix-timestamp': '1614265330', 'svix-signature': svixSignature }, svixBody);
    await accepted('clerk', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', req, SVIX_AT);
    // Several signatures while a key rotates: one valid is enough.
    await accepted(
      'clerk',
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      { ...req, headers: { ...req.headers, 'svix-signature': `v1,AAAA ${svixSignature}` } },
      SVIX_AT,
    );
    // The same request five minutes and a second later is a replay.
    await refused('clerk', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', req, /stale/, new Date(SVIX_AT.getTime() + 301_000));
  });

  it('brex: the same example with webhook-* headers and the bare base64 secret Brex hands out', async () => {
    const req = request({ 'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek', 'webhook-timestamp': '1614265330', 'webhook-signature': svixSignature }, svixBody);
    await accepted('brex', 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', req, SVIX_AT);
    await refused('brex', 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', { ...req, headers: { ...req.headers, 'webhook-id': 'msg_other' } }, /does not match/, SVIX_AT);
  });
});

// ---------------------------------------------------------------------------------------------
// The variants of some schemes

describe('webhook verification a–l: scheme variants', () => {
  it('airship: a gzipped delivery is checked against the JSON inside', async () => {
    const secret = 'airship-secret';
    const signature = hex256(secret, `${T}:${JSON_BODY}`);
    const req = request({ 'x-ua-timestamp': String(T), 'x-ua-signature': signature, 'content-encoding': 'gzip' }, gzipSync(JSON_BODY));
    await accepted('airship', secret, req);
    await refused('airship', secret, { ...req, body: gzipSync(`${JSON_BODY} `) }, /does not match/);
    await refused('airship', secret, { ...req, body: Buffer.from('not gzip') }, /does not inflate/);
  });

  it('box: the key in the secondary slot passes; an unknown signature version is refused', async () => {
    const stamp = new Date(NOW).toISOString();
    const headers = {
      'box-delivery-timestamp': stamp,
      'box-signature-primary': b64256('some-other-primary', JSON_BODY + stamp),
      'box-signature-secondary': b64256('box-secondary-key', JSON_BODY + stamp),
    };
    await accepted('box', 'box-secondary-key', request(headers, JSON_BODY));
    await refused('box', 'box-secondary-key', request({ ...headers, 'box-signature-version': '2' }, JSON_BODY), /version/);
  });

  it('buildkite: the plain X-Buildkite-Token mode', async () => {
    await accepted('buildkite', 'bk-token', request({ 'X-Buildkite-Token': 'bk-token' }, JSON_BODY));
    await refused('buildkite', 'bk-token', request({ 'X-Buildkite-Token': 'bk-token-2' }, JSON_BODY), /does not match/);
    await refused('buildkite', 'bk-token', request({}, JSON_BODY), /missing/);
  });

  it('gitlab: the Standard Webhooks signing token, alone or beside a secret token', async () => {
    // GitLab's signing token: HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`, `v1,<base64>`.
    const token = 'gitlab-signing-token';
    const signed = (key: string) => ({
      'webhook-id': 'a1b2c3',
      'webhook-timestamp': String(T),
      'webhook-signature': `v1,${b64256(key, `a1b2c3.${T}.${JSON_BODY}`)}`,
    });
    await accepted('gitlab', token, request(signed(token), JSON_BODY));
    await refused('gitlab', token, request(signed('another-token'), JSON_BODY), /does not match/);
    // Both configured in GitLab, the route holding the signing token: the secret token does not match, the signature does.
    await accepted('gitlab', token, request({ ...signed(token), 'x-gitlab-token': 'the-secret-token' }, JSON_BODY));
    await refused('gitlab', token, request({ ...signed('another-token'), 'x-gitlab-token': 'the-secret-token' }, JSON_BODY), /does not match/);
    await refused('gitlab', token, request({ ...signed(token), 'webhook-timestamp': String(T - 600) }, JSON_BODY), /stale/);
  });

  it('dropbox and meta: the unsigned GET challenge passes, a signed-looking POST without signature does not', async () => {
    await accepted('dropbox', 's', request({}, '', { method: 'GET', url: 'https://hooks.example.com/dropbox?challenge=abc123' }));
    await refused('dropbox', 's', request({}, 'x', { method: 'GET', url: 'https://hooks.example.com/dropbox?challenge=abc123' }), /missing/);
    await refused('dropbox', 's', request({}, '', { method: 'POST', url: 'https://hooks.example.com/dropbox?challenge=abc123' }), /missing/);
    const challenge = 'https://hooks.example.com/meta?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=token';
    await accepted('facebook_messenger', 's', request({}, '', { method: 'GET', url: challenge }));
    await refused('facebook_messenger', 's', request({}, '', { method: 'GET', url: 'https://hooks.example.com/meta' }), /missing/);
  });

  it('contentful: the scheme headers are signed even when x-contentful-signed-headers leaves them out', async () => {
    // As @contentful/node-apps-toolkit: the timestamp and the signed-headers list itself are always signed.
    const secret = 'd'.repeat(64);
    const ms = String(T * 1000);
    const canonical = [
      'POST',
      '/webhooks/in?route%253D1',
      `x-contentful-signed-headers:x-contentful-signed-headers,x-contentful-timestamp,x-contentful-topic;x-contentful-timestamp:${ms};x-contentful-topic:T`,
      JSON_BODY,
    ].join('\n');
    const headers = {
      'x-contentful-topic': 'T',
      'x-contentful-timestamp': ms,
      'x-contentful-signed-headers': 'x-contentful-topic',
      'x-contentful-signature': hex256(secret, canonical),
    };
    await accepted('contentful', secret, request(headers, JSON_BODY));
    await refused('contentful', secret, request({ ...headers, 'x-contentful-topic': 'U' }, JSON_BODY), /does not match/);
  });

  it('meta: the SHA-1 X-Hub-Signature is read when the SHA-256 one is absent', async () => {
    await accepted('instagram', 'app-secret', request({ 'X-Hub-Signature': `sha1=${hex1('app-secret', JSON_BODY)}` }, JSON_BODY));
  });

  it('aftership: the Returns and the older Shipping headers', async () => {
    await accepted('aftership', 'k', request({ 'as-signature-hmac-sha256': b64256('k', JSON_BODY) }, JSON_BODY));
    await accepted('aftership', 'k', request({ 'am-webhook-signature': `hmac-sha256=${b64256('k', JSON_BODY)}` }, JSON_BODY));
  });

  it('clearbit: the key with or without its sk_ prefix', async () => {
    await accepted('clearbit', 'sk_abc', request({ 'x-request-signature': `sha1=${hex1('abc', JSON_BODY)}` }, JSON_BODY));
  });

  it('linear: a body without webhookTimestamp is refused even when signed', async () => {
    const body = '{"action":"create"}';
    await refused('linear', 'k', request({ 'linear-signature': hex256('k', body) }, body), /webhookTimestamp/);
  });
});

// ---------------------------------------------------------------------------------------------
// AWS SNS

const SNS_HOST = 'sns.us-east-1.amazonaws.com';
const CERT_URL = `https://${SNS_HOST}/SimpleNotificationService-0123456789abcdef.pem`;

describe('webhook verification a–l: AWS SNS', () => {
  let chain: Chain;
  let other: Chain;
  before(async () => {
    chain = await makeChain({ names: [SNS_HOST], keyKind: 'rsa' });
    other = await makeChain({ names: [SNS_HOST], keyKind: 'rsa' });
  });

  /** An SNS message signed as AWS documents: each signed field as `Name\nvalue\n`, in order. */
  function snsMessage(fields: Record<string, string>, options: { version?: '1' | '2'; key?: Chain; certUrl?: string } = {}): Record<string, string> {
    const version = options.version ?? '2';
    const order =
      fields.Type === 'Notification'
        ? ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type']
        : ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
    const text = order
      .filter((name) => fields[name] !== undefined)
      .map((name) => `${name}\n${fields[name]}\n`)
      .join('');
    const signature = rsaSign(version === '1' ? 'sha1' : 'sha256', Buffer.from(text), (options.key ?? chain).leaf.key).toString('base64');
    return { ...fields, SignatureVersion: version, Signature: signature, SigningCertURL: options.certUrl ?? CERT_URL };
  }

  const notification = (extra: Record<string, string> = {}) => ({
    Type: 'Notification',
    MessageId: '22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324',
    TopicArn: 'arn:aws:sns:us-east-1:123456789012:MyTopic',
    Subject: 'My First Message',
    Message: 'Hello world!\nsecond line',
    Timestamp: NOW.toISOString(),
    UnsubscribeURL: 'https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe',
    ...extra,
  });

  async function snsVerdict(message: Record<string, string>, now = NOW, headers: Record<string, string> = {}) {
    const fetched: string[] = [];
    const result = await verifyWebhook('SNS', '', request({ 'x-amz-sns-message-type': message.Type, ...headers }, JSON.stringify(message)), {
      now,
      fetchCertificate: async (url) => {
        fetched.push(url);
        if (url !== CERT_URL) throw new Error(`the test serves no certificate at ${url}`);
        return chain.leaf.certPem;
      },
    });
    return { result, fetched };
  }

  it('accepts notifications signed with SignatureVersion 1 (SHA1withRSA) and 2 (SHA256withRSA)', async () => {
    assert.deepEqual((await snsVerdict(snsMessage(notification(), { version: '1' }))).result, { ok: true });
    assert.deepEqual((await snsVerdict(snsMessage(notification(), { version: '2' }))).result, { ok: true });
  });

  it('accepts a notification without Subject, and a subscription confirmation', async () => {
    const { Subject: _none, ...withoutSubject } = notification();
    assert.deepEqual((await snsVerdict(snsMessage(withoutSubject))).result, { ok: true });
    const confirmation = {
      Type: 'SubscriptionConfirmation',
      MessageId: '165545c9-2a5c-472c-8df2-7ff2be2b3b1b',
      Token:
        '2336412f37fb687f5d51e6e241d09c805a5a57b30d712f794cc5f6a988666d92768dd60a747ba6f3beb71854e285d6ad02428b09ceece29417f1f02d609c582afbacc99c583a916b9981dd2728f4ae6fdb82efd087cc3b7849e05798d2d2785c03b0879594eeac82c01f235d0e717736',
      TopicArn: 'arn:aws:sns:us-west-2:123456789012:MyTopic',
      Message: 'You have chosen to subscribe to the topic arn:aws:sns:us-west-2:123456789012:MyTopic.',
      SubscribeURL: 'https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-west-2:123456789012:MyTopic&Token=2336412f37',
      Timestamp: NOW.toISOString(),
    };
    assert.deepEqual((await snsVerdict(snsMessage(confirmation))).result, { ok: true });
  });

  it('refuses an altered message, another key, a stale timestamp and a mismatched message-type header', async () => {
    const signed = snsMessage(notification());
    assert.match(JSON.stringify((await snsVerdict({ ...signed, Message: 'Hello world?' })).result), /does not match/);
    assert.match(JSON.stringify((await snsVerdict(snsMessage(notification(), { key: other }))).result), /does not match/);
    const old = snsMessage(notification({ Timestamp: new Date(NOW.getTime() - 2 * 3600_000).toISOString() }));
    assert.match(JSON.stringify((await snsVerdict(old)).result), /stale/);
    assert.match(JSON.stringify((await snsVerdict(signed, NOW, { 'x-amz-sns-message-type': 'SubscriptionConfirmation' })).result), /x-amz-sns-message-type/);
    const { Signature: _gone, ...unsigned } = signed;
    assert.equal((await snsVerdict(unsigned as Record<string, string>)).result.ok, false);
    assert.match(JSON.stringify((await snsVerdict({ ...signed, SignatureVersion: '3' })).result), /SignatureVersion/);
  });

  it('fetches the certificate only from https on sns.<region>.amazonaws.com(.cn)', async () => {
    for (const url of [
      'https://sns.us-east-1.amazonaws.com.evil.example/cert.pem',
      'http://sns.us-east-1.amazonaws.com/cert.pem',
      'https://evil.example/sns.us-east-1.amazonaws.com/cert.pem',
      'https://sns.us-east-1.amazonaws.com:8443/cert.pem',
      'https://user@sns.us-east-1.amazonaws.com/cert.pem',
      'https://s3.amazonaws.com/cert.pem',
      'not a url',
    ]) {
      const { result, fetched } = await snsVerdict(snsMessage(notification(), { certUrl: url }));
      assert.match(JSON.stringify(result), /SigningCertURL/, url);
      assert.deepEqual(fetched, [], `nothing is fetched from ${url}`);
    }
    // China regions sign from amazonaws.com.cn: the host is allowed (this test serves no certificate there).
    const { fetched } = await snsVerdict(snsMessage(notification(), { certUrl: 'https://sns.cn-north-1.amazonaws.com.cn/cert.pem' }));
    assert.deepEqual(fetched, ['https://sns.cn-north-1.amazonaws.com.cn/cert.pem']);
  });

  it('refuses, without throwing, a body that is no SNS message and a certificate that cannot be had', async () => {
    const outcome = await verifyWebhook('sns', '', request({}, 'not json'));
    assert.match(JSON.stringify(outcome), /not JSON/);
    const broken = await verifyWebhook('sns', '', request({}, JSON.stringify(snsMessage(notification()))), {
      now: NOW,
      fetchCertificate: async () => 'not a certificate',
    });
    assert.equal(broken.ok, false);
  });

  it('refuses a signing certificate that has expired', async () => {
    const later = new Date(chain.leaf.cert.notAfter.getTime() + 1000);
    const message = snsMessage(notification({ Timestamp: later.toISOString() }));
    assert.match(JSON.stringify((await snsVerdict(message, later)).result), /not valid now/);
  });
});

// ---------------------------------------------------------------------------------------------
// The default certificate fetcher, against a real TLS server posing as sns.us-east-1.amazonaws.com

describe('webhook verification a–l: the SNS certificate fetcher', () => {
  let chain: Chain;
  let server: Server;
  let port: number;
  const hits = new Map<string, number>();
  // Every SNS host resolves to the test server; autoSelectFamily asks for all addresses at once.
  const lookup = ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
    else callback(null, '127.0.0.1', 4);
  }) as unknown as LookupFunction;

  before(async () => {
    chain = await makeChain({ names: [SNS_HOST, 'sns.eu-west-1.amazonaws.com'], keyKind: 'rsa' });
    server = createServer({ key: chain.leaf.keyPem, cert: chain.leaf.certPem }, (req, res) => {
      const path = req.url ?? '';
      hits.set(path, (hits.get(path) ?? 0) + 1);
      if (path.startsWith('/cert')) res.end(chain.leaf.certPem);
      else if (path === '/redirect') res.writeHead(302, { location: `https://${SNS_HOST}/cert.pem` }).end();
      else if (path === '/big') res.end('x'.repeat(100_000));
      else if (path === '/slow')
        res.write('-----BEGIN'); // never ends
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  const fetcher = (options: { timeoutMs?: number; cacheSize?: number } = {}) =>
    createCertificateFetcher({ ...options, connect: { lookup, port, ca: chain.root.certPem } });

  it('fetches a certificate once and serves it from the cache after', async () => {
    const fetch = fetcher();
    assert.equal(await fetch(`https://${SNS_HOST}/cert-a.pem`), chain.leaf.certPem);
    assert.equal(await fetch(`https://${SNS_HOST}/cert-a.pem`), chain.leaf.certPem);
    assert.equal(hits.get('/cert-a.pem'), 1);
  });

  it('keeps at most cacheSize certificates, dropping the least recently used', async () => {
    const fetch = fetcher({ cacheSize: 1 });
    await fetch(`https://${SNS_HOST}/cert-b.pem`);
    await fetch(`https://${SNS_HOST}/cert-c.pem`);
    await fetch(`https://${SNS_HOST}/cert-b.pem`);
    assert.equal(hits.get('/cert-b.pem'), 2);
  });

  it('does not follow a redirect, refuses an oversized answer and gives up on a slow one', async () => {
    const fetch = fetcher({ timeoutMs: 300 });
    await assert.rejects(fetch(`https://${SNS_HOST}/redirect`), /302/);
    await assert.rejects(fetch(`https://${SNS_HOST}/big`), /larger than/);
    await assert.rejects(fetch(`https://${SNS_HOST}/slow`), /longer than 300 ms/);
    // A failure is not cached: the same URL is asked again.
    await assert.rejects(fetch(`https://${SNS_HOST}/redirect`), /302/);
    assert.equal(hits.get('/redirect'), 2);
  });

  it('refuses other hosts and plain http without connecting', async () => {
    const before = [...hits.values()].reduce((a, b) => a + b, 0);
    await assert.rejects(fetcher()('https://example.com/cert.pem'), /not an SNS certificate URL/);
    await assert.rejects(fetcher()(`http://${SNS_HOST}/cert.pem`), /not an SNS certificate URL/);
    assert.equal(
      [...hits.values()].reduce((a, b) => a + b, 0),
      before,
    );
  });
});

// ---------------------------------------------------------------------------------------------
// The registry

describe('webhook verification: registry', () => {
  it('finds a scheme case-insensitively and refuses an unknown provider with a reason', async () => {
    assert.equal(schemeOf('GitHub')?.provider, 'github');
    assert.equal(schemeOf('LAUNCH_DARKLY')?.provider, 'launch_darkly');
    assert.equal(schemeOf('nope'), undefined);
    assert.match(JSON.stringify(await verifyWebhook('nope', 's', request({}, ''))), /unknown webhook provider/);
  });

  it('refuses a body over the limit before any scheme reads it', async () => {
    const body = Buffer.alloc(MAX_WEBHOOK_BODY_BYTES + 1, 0x20);
    const req = request({ 'x-hub-signature-256': `sha256=${hex256('s', body)}` }, body);
    assert.match(JSON.stringify(await verifyWebhook('github', 's', req)), /larger than/);
  });

  it('has a scheme for every provider the API accepts', () => {
    const without = WEBHOOK_PROVIDERS.filter((provider) => schemeOf(provider) === undefined);
    assert.deepEqual(without, []);
  });
});
