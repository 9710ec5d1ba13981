// What both halves of the webhook tests (webhooks-a-l, webhooks-m-z) need: requests as a provider
// sends them, an HMAC written out with node:crypto (never the table's own code, so a wrong table
// entry cannot agree with itself), and the accepted/refused checks of a scheme's verdict.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { schemeOf, type Verdict, type WebhookRequest } from '../../src/edges/webhooks/index.js';

/** An HMAC of `data` under `key`, as text in `encoding`. */
export const mac = (algorithm: string, key: string | Buffer, data: string | Buffer, encoding: 'hex' | 'base64'): string =>
  createHmac(algorithm, key).update(data).digest(encoding);

export interface WebhookKit {
  /** A POST to the kit's URL with the kit's headers and these (names lower-cased, as node:http gives them). */
  request(headers: Record<string, string>, body: string | Buffer, extra?: Partial<Pick<WebhookRequest, 'method' | 'url'>>): WebhookRequest;
  /** The scheme's own verdict: called directly, not through verifyWebhook, whose catch would turn a throw into a refusal and hide it. */
  verdict(provider: string, secret: string, request: WebhookRequest, now?: Date): Promise<Verdict>;
  accepted(provider: string, secret: string, request: WebhookRequest, now?: Date): Promise<void>;
  /** Refused, for a reason matching `why` when given; the reason never shows the secret. */
  refused(provider: string, secret: string, request: WebhookRequest, why?: RegExp, now?: Date): Promise<void>;
}

/** The helpers for a test file whose requests go to `url` (with `headers`) and are checked at `now` unless a call says otherwise. */
export function webhookKit(defaults: { now: Date; url: string; headers?: Record<string, string> }): WebhookKit {
  const verdict = async (provider: string, secret: string, request: WebhookRequest, now = defaults.now): Promise<Verdict> => {
    const scheme = schemeOf(provider);
    assert.ok(scheme, `the table has ${provider}`);
    return await scheme.verify(secret, request, { now, fetchCertificate: () => Promise.reject(new Error('no certificate in this test')) });
  };
  return {
    request(headers, body, extra = {}) {
      const lower = Object.fromEntries(Object.entries({ ...defaults.headers, ...headers }).map(([name, value]) => [name.toLowerCase(), value]));
      return { method: 'POST', url: defaults.url, ...extra, headers: lower, body: Buffer.isBuffer(body) ? body : Buffer.from(body) };
    },
    verdict,
    async accepted(provider, secret, request, now) {
      const result = await verdict(provider, secret, request, now);
      assert.deepEqual(result, { ok: true }, `${provider} should accept: ${JSON.stringify(result)}`);
    },
    async refused(provider, secret, request, why, now) {
      const result = await verdict(provider, secret, request, now);
      assert.equal(result.ok, false, `${provider} should refuse`);
      if (result.ok) return;
      if (why) assert.match(result.reason, why);
      // The reason may be logged: it never carries the secret (checked where the secret is long
      // enough not to turn up in plain words by chance).
      if (secret.length >= 8) assert.ok(!result.reason.includes(secret), 'a reason never shows the secret');
    },
  };
}
