// Every webhook provider the API accepts, end to end: its webhook_verification module set on a
// route through the API, then a request signed as the provider signs it sent through the public
// HTTPS listener (it reaches the upstream whole) and one with a wrong signature (refused, never
// reaching the upstream). The requests are the unit tests' (test/unit/webhook-signers.ts), signed
// there by each provider's documented scheme, never by the table under test; here they show that
// nothing between the client and the scheme (the listener, the Host, the URL the edge rebuilds, the
// body read) changes what was signed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WEBHOOK_PROVIDERS } from '../../src/edge-config/modules/route-modules.js';
import type { WebhookRequest } from '../../src/edges/webhooks/scheme.js';
import { describeEachStore, type Api, type Harness } from '../helpers/harness.js';
import { JSON_BODY, alCases, mzCases } from '../unit/webhook-signers.js';
import { created, edgesRead, edgeWithRoute, put, request, upstream } from './helpers.js';

/** One provider's pair of requests for the route's host, signed at `at` (seconds). */
interface Signed {
  provider: string;
  secret: string;
  requests(at: number): { right: WebhookRequest; wrong: WebhookRequest };
}

/** The a–l cases give headers; the request is built as the unit test builds it (names lower-cased). */
function fromAl(host: string): Signed[] {
  return alCases(host).map((c) => {
    const build = (secret: string, at: number): WebhookRequest => {
      const body = (c.body ?? (() => JSON_BODY))(at);
      const headers = Object.fromEntries(Object.entries(c.sign(secret, body, at)).map(([name, value]) => [name.toLowerCase(), value]));
      return { method: 'POST', url: c.url ?? `https://${host}/webhooks/in?route=1`, headers, body: Buffer.from(body) };
    };
    return {
      provider: c.provider,
      secret: c.secret,
      requests: (at) => ({ right: build(c.secret, at), wrong: build(c.otherSecret ?? `${c.secret}x`, at) }),
    };
  });
}

const MZ_BODY = '{"event":"thing.created","id":"evt_1","data":{"name":"Zoë","amount":1200}}';

function fromMz(host: string): Signed[] {
  return mzCases(host).map((c) => ({
    provider: c.provider,
    secret: c.secret,
    requests: (at) => ({ right: c.sign(MZ_BODY, at, 'right'), wrong: c.sign(MZ_BODY, at, 'wrong') }),
  }));
}

// SNS is not sent end to end: AWS signs with a certificate the edge fetches itself, only over HTTPS
// from sns.<region>.amazonaws.com(.cn) with Node's trusted CAs, which no test can serve. Its scheme
// (the signed fields, the certificate, the allowed hosts) and the fetcher (against a TLS server
// posing as that host) are tested in test/unit/webhooks-a-l.test.ts ("AWS SNS", "the SNS
// certificate fetcher").
const NOT_END_TO_END = ['sns'];

/** How many edges share the providers. */
const LANES = 4;

/** Where `url` goes on the listener: its path and query as sent. */
const targetOf = (url: string): string => {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
};

/** The headers a request carries (a WebhookRequest's may list absent ones). */
const headersOf = (r: WebhookRequest): Record<string, string> =>
  Object.fromEntries(Object.entries(r.headers).filter((entry): entry is [string, string] => entry[1] !== undefined));

describeEachStore(
  'webhook verification of every provider, through the public HTTPS listener',
  (h) => {
    test('each provider: its signed request reaches the upstream whole, a wrong signature is refused before it', async () => {
      const api: Api = await h().newAccount();
      const covered: string[] = [];
      // A few edges side by side, each with one route and its own upstream, each taking its share of
      // the providers in turn: a change is read on the next poll (SQLite) whichever edge it is on.
      await Promise.all(
        Array.from({ length: LANES }, async (_, lane) => {
          const up = await upstream(`hooks-${lane}`);
          try {
            const backend = await created(api, '/backends/static', { address: `127.0.0.1:${up.port}`, tls: { enabled: false } });
            const { host, routes, routeId } = await edgeWithRoute(api, { backend: { backend_id: backend.id } });
            const signers = [...fromAl(host), ...fromMz(host)].filter((_signer, i) => i % LANES === lane);
            for (const signer of signers) {
              await setProvider(h(), api, { host, module: `${routes}/${routeId}/webhook_verification` }, signer);
              await sendBoth(h(), host, signer, up.received);
              covered.push(signer.provider);
            }
          } finally {
            await up.close();
          }
        }),
      );
      assert.deepEqual(
        [...covered, ...NOT_END_TO_END].sort(),
        [...WEBHOOK_PROVIDERS].sort(),
        'every provider the API accepts, once (SNS only in its unit test)',
      );
    });
  },
  { agents: { heartbeatIntervalMs: 1000 }, acrossInstances: true },
);

/** Replaces the route's module with `signer`'s provider and secret, and waits for the edges to read it. */
async function setProvider(h: Harness, api: Api, at: { host: string; module: string }, signer: Signed): Promise<void> {
  await put(api, at.module, { provider: signer.provider, secret: signer.secret });
  await edgesRead(
    h,
    () => {
      const module = h.agents!.edges.httpsEdge(at.host)?.routes[0]?.modules.webhookVerification;
      return module?.provider === signer.provider && module.secret === signer.secret;
    },
    `the ${signer.provider} webhook_verification module`,
  );
}

type Seen = Awaited<ReturnType<typeof upstream>>['received'];

/** The right request goes through whole; the wrong one is refused with the provider's status and reaches nothing. */
async function sendBoth(h: Harness, host: string, signer: Signed, received: Seen): Promise<void> {
  const { right, wrong } = signer.requests(Math.floor(Date.now() / 1000));
  const send = (r: WebhookRequest) => {
    assert.equal(new URL(r.url).host, host, `${signer.provider}: signed for the URL the edge sees`);
    return request(h, host, targetOf(r.url), { method: r.method, headers: headersOf(r), body: r.body });
  };
  const before = received.length;
  const good = await send(right);
  assert.equal(good.status, 200, `${signer.provider}: ${good.text}`);
  assert.equal(received.length, before + 1, `${signer.provider}: reached the upstream`);
  const seen = received.at(-1)!;
  assert.equal(seen.method, right.method, signer.provider);
  assert.equal(seen.url, targetOf(right.url), `${signer.provider}: the path and query as sent`);
  assert.equal(seen.body, right.body.toString(), `${signer.provider}: the body whole`);
  for (const [name, value] of Object.entries(headersOf(right))) assert.equal(seen.headers[name], value, `${signer.provider}: ${name} as signed`);

  const bad = await send(wrong);
  const status = signer.provider === 'xero' ? 401 : 403;
  assert.equal(bad.status, status, `${signer.provider}: a wrong signature is refused (${bad.text})`);
  assert.equal(bad.headers['ngrok-error-code'], 'ERR_EP_INGRESS_713', signer.provider);
  assert.ok(!bad.text.includes(signer.secret), `${signer.provider}: the refusal never shows the secret`);
  assert.equal(received.length, before + 1, `${signer.provider}: the refused request never reached the upstream`);
}
