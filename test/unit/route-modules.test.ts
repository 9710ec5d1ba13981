import assert from 'node:assert/strict';
import { createPrivateKey, generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import { throwsApiError } from '../helpers/assertions.js';
import { Value } from '@sinclair/typebox/value';
import type { ApiError } from '../../src/core/errors.js';
import { moduleBody } from '../../src/crud/module-body.js';
import type { ModuleDefinition } from '../../src/crud/modules.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the tests read values of many module kinds by field
type ModuleValue = any;
import { Sealer } from '../../src/lib/crypto/sealer.js';
import {
  MAX_WEBHOOK_SECRET_LENGTH,
  WEBHOOK_PROVIDERS,
  circuitBreakerModule,
  compressionModule,
  requestHeadersModule,
  responseHeadersModule,
  userAgentFilterModule,
  webhookVerificationModule,
  websocketTcpConverterModule,
} from '../../src/edge-config/modules/route-modules.js';
import { MAX_IDP_METADATA_BYTES, oauthModule, oidcModule, samlModule } from '../../src/edge-config/modules/sign-in-modules.js';

const sealer = new Sealer(randomBytes(32));
const ctx = { baseUrl: 'https://api.test' } as never;
const view = { ref: (id: string) => ({ id, uri: `https://api.test/${id}` }) };
const oauth = oauthModule(sealer);
const oidc = oidcModule(sealer);
const saml = samlModule(sealer);
const webhook = webhookVerificationModule('webhook_verification');

// Compiling a schema is slow: one body parser per module.
const parsers = new Map<ModuleDefinition, (body: unknown, path: { id: string }) => unknown>();
const validated = (def: ModuleDefinition, body: unknown) => {
  if (!parsers.has(def)) parsers.set(def, moduleBody(def.request));
  return parsers.get(def)!(body, { id: 'edghtsrt_1' });
};

/** The body validated against the module's schema and parsed: where every refusal happens. */
function parsed(def: ModuleDefinition, body: unknown): ModuleValue {
  const { value, refs } = def.parse(validated(def, body) as never, ctx);
  assert.deepEqual(refs, []);
  return value;
}

/**
 * A module PUT as the core does it: the body validated against the module's schema, parsed,
 * stored as JSON and read back, then shown; the response must fit the response schema.
 */
async function put(def: ModuleDefinition, body: unknown): Promise<{ stored: ModuleValue; shown: Record<string, unknown> }> {
  const value = parsed(def, body);
  // Read back as the core reads it: checked against the module's stored schema.
  const stored = def.read(JSON.parse(JSON.stringify(def.finish ? await def.finish(value, ctx) : value))) as ModuleValue;
  const shown = def.toApi(stored, view);
  assert.ok(Value.Check(def.response, shown), `${def.name} response fits its schema: ${[...Value.Errors(def.response, shown)].map((e) => e.path)}`);
  return { stored, shown };
}

/** Runs `fn`, expects a 400 ApiError with `code`, returns it for more checks. */
function fails(fn: () => unknown, code: number): ApiError {
  const error = throwsApiError(fn, code);
  assert.equal(error.status, 400);
  return error;
}
const refused = (def: ModuleDefinition, body: unknown, code: number) => fails(() => parsed(def, body), code);

const BAD_FIELD = 215;
const UNKNOWN_FIELD = 214;

const SENDGRID_KEY = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
const IDP_METADATA = `<?xml version="1.0" encoding="UTF-8"?>
<!-- exported from the IdP; <EntitiesDescriptor> in a comment is not the root -->
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.example.com">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.example.com/sso"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>
`;
const OIDC = { issuer: 'https://accounts.example.com', client_id: 'client-1', client_secret: 'oidc-plaintext-secret' };

/** Each module with the smallest body it takes. */
const MINIMAL: [ModuleDefinition, Record<string, unknown>][] = [
  [requestHeadersModule, {}],
  [responseHeadersModule, {}],
  [compressionModule, {}],
  [websocketTcpConverterModule, {}],
  [circuitBreakerModule, {}],
  [webhook, { provider: 'github', secret: 's' }],
  [oauth, { provider: { google: {} } }],
  [oidc, OIDC],
  [saml, { idp_metadata: IDP_METADATA }],
  [userAgentFilterModule, {}],
];

describe('every route module', () => {
  it('has a distinct name', async () => {
    assert.deepEqual(
      MINIMAL.map(([def]) => def.name),
      [
        'request_headers',
        'response_headers',
        'compression',
        'websocket_tcp_converter',
        'circuit_breaker',
        'webhook_verification',
        'oauth',
        'oidc',
        'saml',
        'user_agent_filter',
      ],
    );
  });

  it('is enabled unless enabled is false, and echoes it', async () => {
    for (const [def, body] of MINIMAL) {
      assert.equal((await put(def, body)).shown.enabled, true, def.name);
      assert.equal((await put(def, { ...body, enabled: false })).shown.enabled, false, def.name);
    }
  });

  it('refuses unknown fields and a non-boolean enabled', async () => {
    for (const [def, body] of MINIMAL) {
      assert.match(refused(def, { ...body, nope: 1 }, UNKNOWN_FIELD).message, /'nope'/, def.name);
      refused(def, { ...body, enabled: 'yes' }, BAD_FIELD);
    }
  });

  it('accepts the TypeScript client wrapper form', async () => {
    assert.equal((await put(compressionModule, { id: 'edghtsrt_1', module: { enabled: false } })).shown.enabled, false);
  });

  it('names no resources and has request schemas that refuse additional properties', async () => {
    for (const [def] of MINIMAL) assert.equal(def.request.additionalProperties, false, def.name);
  });

  it('excludes the other sign-in modules on one route', async () => {
    assert.deepEqual(oauth.excludes, ['oidc', 'saml']);
    assert.deepEqual(oidc.excludes, ['oauth', 'saml']);
    assert.deepEqual(saml.excludes, ['oauth', 'oidc']);
  });
});

describe('request_headers and response_headers', () => {
  it('default to nothing added or removed', async () => {
    assert.deepEqual((await put(requestHeadersModule, {})).shown, { enabled: true, add: {}, remove: [] });
    assert.deepEqual((await put(responseHeadersModule, { add: {} })).shown, { enabled: true, add: {}, remove: [] });
  });

  it('lower-case the names added and keep the names removed as sent', async () => {
    const { stored, shown } = await put(requestHeadersModule, {
      add: { 'X-Edge': 'yes', 'Cache-Control': 'no-store, max-age=0\tx' },
      remove: ['X-Powered-By'],
    });
    assert.deepEqual(shown, { enabled: true, add: { 'x-edge': 'yes', 'cache-control': 'no-store, max-age=0\tx' }, remove: ['X-Powered-By'] });
    assert.deepEqual(stored.add, shown.add);
  });

  it('keep a header named __proto__ as a header', async () => {
    assert.deepEqual(
      (await put(requestHeadersModule, JSON.parse('{"add": {"__proto__": "x", "X-B": "y"}}'))).shown.add,
      JSON.parse('{"__proto__": "x", "x-b": "y"}'),
    );
  });

  it('refuse names that are not RFC 9110 tokens', async () => {
    assert.match(refused(requestHeadersModule, { add: { 'bad name': 'x' } }, 6518).message, /bad name/);
    refused(responseHeadersModule, { remove: ['ok', 'bad name'] }, 6518);
    refused(responseHeadersModule, { remove: [''] }, 6518);
    refused(requestHeadersModule, { add: { 'x:y': 'x' } }, 6518);
  });

  it('refuse values with CR, LF or NUL', async () => {
    for (const bad of ['a\rb', 'a\nb', 'a\u0000b']) refused(responseHeadersModule, { add: { 'x-a': bad } }, 6519);
  });

  it('refuse two names equal after lower-casing', async () => {
    assert.match(refused(requestHeadersModule, { add: { 'X-A': '1', 'x-a': '2' } }, 6520).message, /x-a/);
  });

  it('take at most 50 entries of each (as backends do), and values of at most 4096 bytes', async () => {
    const names = (n: number) => Array.from({ length: n }, (_, i) => `x-h${i}`);
    await put(requestHeadersModule, { add: Object.fromEntries(names(50).map((n) => [n, 'v'])), remove: names(50) });
    refused(requestHeadersModule, { add: Object.fromEntries(names(51).map((n) => [n, 'v'])) }, BAD_FIELD);
    refused(requestHeadersModule, { remove: names(51) }, BAD_FIELD);
    await put(requestHeadersModule, { add: { 'x-a': 'v'.repeat(4096) } });
    refused(requestHeadersModule, { add: { 'x-a': 'v'.repeat(4097) } }, BAD_FIELD);
    refused(requestHeadersModule, { add: { ['x'.repeat(257)]: 'v' } }, BAD_FIELD);
  });
});

describe('compression and websocket_tcp_converter', () => {
  it('store and show only enabled', async () => {
    for (const def of [compressionModule, websocketTcpConverterModule]) {
      assert.deepEqual(await put(def, {}), { stored: { enabled: true }, shown: { enabled: true } });
      assert.deepEqual((await put(def, { enabled: false })).shown, { enabled: false });
    }
  });
});

describe('circuit_breaker', () => {
  it('fills in the defaults', async () => {
    assert.deepEqual((await put(circuitBreakerModule, {})).shown, {
      enabled: true,
      tripped_duration: 10,
      rolling_window: 10,
      num_buckets: 10,
      volume_threshold: 20,
      error_threshold_percentage: 0.5,
    });
  });

  it('keeps the values sent', async () => {
    const body = { tripped_duration: 30, rolling_window: 60, num_buckets: 128, volume_threshold: 0, error_threshold_percentage: 1 };
    assert.deepEqual((await put(circuitBreakerModule, body)).shown, { enabled: true, ...body });
    assert.equal((await put(circuitBreakerModule, { error_threshold_percentage: 0 })).shown.error_threshold_percentage, 0);
  });

  it('refuses an error threshold outside 0.0 to 1.0, saying it is a fraction', async () => {
    assert.match(refused(circuitBreakerModule, { error_threshold_percentage: 2 }, 7011).message, /fraction from 0\.0 to 1\.0/);
    refused(circuitBreakerModule, { error_threshold_percentage: -0.1 }, 7011);
  });

  it('refuses counts and durations out of range or not whole', async () => {
    for (const body of [
      { tripped_duration: 0 },
      { rolling_window: 0 },
      { rolling_window: 1.5 },
      { num_buckets: 0 },
      { num_buckets: 129 },
      { volume_threshold: -1 },
      { tripped_duration: 86_401 },
    ])
      refused(circuitBreakerModule, body, BAD_FIELD);
  });
});

describe('webhook_verification', () => {
  it('knows the 69 providers', async () => {
    assert.equal(WEBHOOK_PROVIDERS.length, 69);
    assert.equal(new Set(WEBHOOK_PROVIDERS).size, 69);
    for (const provider of WEBHOOK_PROVIDERS) {
      const body = provider === 'sns' ? { provider } : { provider, secret: provider === 'sendgrid' ? SENDGRID_KEY : 'whsec_1' };
      assert.equal((await put(webhook, body)).shown.provider, provider);
    }
  });

  it('matches the provider case-insensitively and keeps it, and the secret, as sent', async () => {
    assert.deepEqual((await put(webhook, { provider: 'TWILIO', secret: 'tw-secret' })).shown, { enabled: true, provider: 'TWILIO', secret: 'tw-secret' });
    assert.equal((await put(webhook, { provider: 'Sns' })).shown.secret, '');
  });

  it('refuses a missing provider (7029) and an unknown one (7030), listing the supported', async () => {
    refused(webhook, { secret: 's' }, 7029);
    refused(webhook, { provider: '', secret: 's' }, 7029);
    const unknown = refused(webhook, { provider: 'nope', secret: 's' }, 7030);
    assert.match(unknown.message, /'nope'/);
    assert.match(unknown.message, /github/);
    assert.match(unknown.message, /zoom/);
  });

  it('requires a secret except for sns, which takes none', async () => {
    assert.match(refused(webhook, { provider: 'stripe' }, 7027).message, /requires a secret/);
    refused(webhook, { provider: 'stripe', secret: '' }, 7027);
    assert.match(refused(webhook, { provider: 'sns', secret: 's' }, 7026).message, /SNS webhook verification does not accept a secret/);
    await put(webhook, { provider: 'sns', secret: '' });
  });

  it('takes secrets of at most 4096 characters', async () => {
    await put(webhook, { provider: 'slack', secret: 's'.repeat(MAX_WEBHOOK_SECRET_LENGTH) });
    refused(webhook, { provider: 'slack', secret: 's'.repeat(MAX_WEBHOOK_SECRET_LENGTH + 1) }, 7154);
  });

  it('takes only an ECDSA public key as the sendgrid secret', async () => {
    assert.equal((await put(webhook, { provider: 'SendGrid', secret: SENDGRID_KEY })).shown.secret, SENDGRID_KEY);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    for (const secret of [rsa, 'not-a-key', Buffer.from('x'.repeat(91)).toString('base64')]) refused(webhook, { provider: 'sendgrid', secret }, 7028);
  });

  it('names the module it is in its messages', async () => {
    const validation = webhookVerificationModule('webhook_validation');
    assert.equal(validation.name, 'webhook_validation');
    assert.match(fails(() => validation.parse({ secret: 's' }, ctx), 7029).message, /^webhook_validation\.provider/);
  });
});

describe('oauth', () => {
  const githubBody = {
    provider: {
      github: {
        client_id: 'gh-client',
        client_secret: 'gh-plaintext-secret',
        scopes: ['read:org', 'user:email'],
        email_addresses: ['a@example.com'],
        email_domains: ['example.com'],
        teams: ['acme/ops'],
        organizations: ['acme'],
      },
    },
    options_passthrough: true,
    cookie_prefix: 'acme.',
    inactivity_timeout: 600,
    maximum_duration: 3600,
    auth_check_interval: 300,
  };

  it('stores the client secret sealed and never shows it', async () => {
    const { stored, shown } = await put(oauth, githubBody);
    assert.ok(!JSON.stringify(stored).includes('gh-plaintext-secret'), 'no plaintext in what is stored');
    assert.equal(sealer.open(stored.provider.github.client_secret_sealed, 'oauth.client_secret'), 'gh-plaintext-secret');
    assert.ok(!JSON.stringify(shown).includes('gh-plaintext-secret') && !JSON.stringify(shown).includes('v1:'), 'nothing of it shown');
    assert.deepEqual(shown, { ...githubBody, enabled: true, provider: { github: { ...githubBody.provider.github, client_secret: null } } });
  });

  it('uses the managed application with no client_id and client_secret, and fills in the defaults', async () => {
    assert.deepEqual((await put(oauth, { provider: { google: {} } })).shown, {
      enabled: true,
      options_passthrough: false,
      cookie_prefix: 'edgeplane.',
      inactivity_timeout: 0,
      maximum_duration: 0,
      auth_check_interval: 0,
      provider: { google: { client_id: null, client_secret: null, scopes: [], email_addresses: [], email_domains: [] } },
    });
    assert.deepEqual((await put(oauth, { provider: { github: {} } })).shown.provider, {
      github: { client_id: null, client_secret: null, scopes: [], email_addresses: [], email_domains: [], teams: [], organizations: [] },
    });
  });

  it('takes exactly one provider', async () => {
    assert.match(refused(oauth, { provider: {} }, 7031).message, /0 were given/);
    refused(oauth, { provider: { google: {}, github: {} } }, 7031);
    refused(oauth, {}, BAD_FIELD);
    refused(oauth, { provider: { myspace: {} } }, UNKNOWN_FIELD);
  });

  it('takes client_id and client_secret together or neither', async () => {
    assert.match(refused(oauth, { provider: { gitlab: { client_id: 'x' } } }, 7032).message, /oauth\.provider\.gitlab/);
    refused(oauth, { provider: { amazon: { client_secret: 'x' } } }, 7032);
  });

  it('takes teams and organizations for github only', async () => {
    refused(oauth, { provider: { google: { teams: ['a'] } } }, UNKNOWN_FIELD);
    refused(oauth, { provider: { microsoft: { organizations: ['a'] } } }, UNKNOWN_FIELD);
  });

  it('refuses malformed addresses, domains, scopes, cookie prefixes and durations', async () => {
    const provider = (fields: Record<string, unknown>) => ({ provider: { facebook: fields } });
    assert.match(refused(oauth, provider({ email_addresses: ['ok@example.com', 'no-at-sign'] }), BAD_FIELD).message, /email_addresses\[1\]/);
    refused(oauth, provider({ email_addresses: ['a b@example.com'] }), BAD_FIELD);
    refused(oauth, provider({ email_domains: ['-example.com'] }), BAD_FIELD);
    refused(oauth, provider({ email_domains: ['exa mple.com'] }), BAD_FIELD);
    refused(oauth, provider({ scopes: ['user email'] }), BAD_FIELD);
    refused(oauth, provider({ email_addresses: Array.from({ length: 1025 }, (_, i) => `u${i}@example.com`) }), BAD_FIELD);
    refused(oauth, { ...provider({}), cookie_prefix: 'has space' }, BAD_FIELD);
    refused(oauth, { ...provider({}), cookie_prefix: 'x'.repeat(65) }, BAD_FIELD);
    refused(oauth, { ...provider({}), inactivity_timeout: -1 }, BAD_FIELD);
    refused(oauth, { ...provider({}), maximum_duration: 1.5 }, BAD_FIELD);
    refused(oauth, { ...provider({}), auth_check_interval: 86_401 }, BAD_FIELD);
  });
});

describe('oidc', () => {
  it('stores the client secret sealed and never shows it', async () => {
    const { stored, shown } = await put(oidc, { ...OIDC, scopes: ['openid', 'email'] });
    assert.ok(!JSON.stringify(stored).includes(OIDC.client_secret));
    assert.equal(sealer.open(stored.client_secret_sealed, 'oidc.client_secret'), OIDC.client_secret);
    assert.throws(() => sealer.open(stored.client_secret_sealed, 'oauth.client_secret'), 'bound to its use');
    assert.ok(!JSON.stringify(shown).includes(OIDC.client_secret));
    assert.deepEqual(shown, {
      enabled: true,
      options_passthrough: false,
      cookie_prefix: 'edgeplane.',
      inactivity_timeout: 0,
      maximum_duration: 0,
      issuer: OIDC.issuer,
      client_id: OIDC.client_id,
      client_secret: null,
      scopes: ['openid', 'email'],
    });
  });

  it('requires an https issuer, a client_id and a client_secret', async () => {
    for (const issuer of ['http://accounts.example.com', 'accounts.example.com', 'https://user:pw@accounts.example.com'])
      assert.match(refused(oidc, { ...OIDC, issuer }, BAD_FIELD).message, /oidc\.issuer/);
    for (const field of ['issuer', 'client_id', 'client_secret'] as const) {
      const { [field]: _dropped, ...rest } = OIDC;
      assert.match(refused(oidc, rest, BAD_FIELD).message, new RegExp(`'${field}' is required`));
    }
    refused(oidc, { ...OIDC, client_secret: '' }, BAD_FIELD);
  });
});

describe('saml', () => {
  it('makes a service provider under the base URL with a certificate whose key is sealed', async () => {
    const { stored, shown } = await put(saml, { idp_metadata: IDP_METADATA, authorized_groups: ['admins'], force_authn: true });
    const base = /^https:\/\/api\.test\/saml\/(sp_[0-9A-Za-z]{27})\//.exec(shown.entity_id as string)?.[0];
    assert.ok(base, String(shown.entity_id));
    assert.equal(shown.metadata_url, `${base}metadata`);
    assert.equal(shown.assertion_consumer_service_url, `${base}acs`);
    assert.equal(shown.single_logout_url, `${base}slo`);
    assert.deepEqual(
      { ...shown, entity_id: 0, metadata_url: 0, assertion_consumer_service_url: 0, single_logout_url: 0, request_signing_certificate_pem: 0 },
      {
        enabled: true,
        options_passthrough: false,
        cookie_prefix: 'edgeplane.',
        inactivity_timeout: 0,
        maximum_duration: 0,
        idp_metadata: IDP_METADATA,
        force_authn: true,
        allow_idp_initiated: false,
        authorized_groups: ['admins'],
        nameid_format: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
        entity_id: 0,
        metadata_url: 0,
        assertion_consumer_service_url: 0,
        single_logout_url: 0,
        request_signing_certificate_pem: 0,
      },
    );

    const certificate = new X509Certificate(shown.request_signing_certificate_pem as string);
    assert.ok(certificate.verify(certificate.publicKey), 'self-signed');
    // RSA 2048: samlify signs HTTP-Redirect AuthnRequests with RSA only.
    assert.equal(certificate.publicKey.asymmetricKeyType, 'rsa');
    assert.equal(certificate.publicKey.asymmetricKeyDetails?.modulusLength, 2048);
    assert.match(certificate.subject, /CN=edgeplane SAML sp_/);
    assert.ok(new Date(certificate.validTo) > new Date(Date.now() + 365 * 24 * 3600 * 1000));
    const key = sealer.open(stored.request_signing_key_sealed, 'saml.request_signing_key');
    assert.ok(certificate.checkPrivateKey(createPrivateKey(key)), 'the sealed key is the certificate key');
    assert.ok(!JSON.stringify(stored).includes('PRIVATE KEY') && !JSON.stringify(shown).includes('PRIVATE KEY'));
    assert.ok(!('request_signing_key_sealed' in shown));
  });

  it('makes a new service provider each time', async () => {
    const [a, b] = [(await put(saml, { idp_metadata: IDP_METADATA })).shown, (await put(saml, { idp_metadata: IDP_METADATA })).shown];
    assert.notEqual(a.entity_id, b.entity_id);
    assert.notEqual(a.request_signing_certificate_pem, b.request_signing_certificate_pem);
  });

  it('takes un-prefixed metadata and a nameid_format URI', async () => {
    const plain = '<EntityDescriptor entityID="x"><IDPSSODescriptor/></EntityDescriptor>';
    const format = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
    assert.equal((await put(saml, { idp_metadata: plain, nameid_format: format })).shown.nameid_format, format);
    refused(saml, { idp_metadata: plain, nameid_format: 'email address' }, BAD_FIELD);
  });

  it('refuses what is not IdP metadata', async () => {
    const refusals: [string, RegExp][] = [
      ['hello', /root element is an EntityDescriptor/],
      ['<EntitiesDescriptor><EntityDescriptor><IDPSSODescriptor/></EntityDescriptor></EntitiesDescriptor>', /root element/],
      ['<md:EntityDescriptor><md:SPSSODescriptor/></md:EntityDescriptor>', /no IDPSSODescriptor/],
      ['<EntityDescriptor><!-- <IDPSSODescriptor/> --></EntityDescriptor>', /no IDPSSODescriptor/],
      ['<EntityDescriptor><![CDATA[<IDPSSODescriptor/>]]></EntityDescriptor>', /no IDPSSODescriptor/],
      ['<EntityDescriptor><IDPSSODescriptor>', /no end tag/],
      ['<!DOCTYPE x [<!ENTITY a "b">]><EntityDescriptor><IDPSSODescriptor/></EntityDescriptor>', /DOCTYPE/],
    ];
    for (const [idp_metadata, reason] of refusals) assert.match(refused(saml, { idp_metadata }, 7033).message, reason, idp_metadata);
    refused(saml, {}, BAD_FIELD);
  });

  it('takes at most 256 KiB of metadata, checked in time linear in its size', async () => {
    const padding = (n: number) => `<!--${'x'.repeat(n)}-->`;
    const wrap = (inner: string) => `<EntityDescriptor><IDPSSODescriptor/>${inner}</EntityDescriptor>`;
    const fits = wrap(padding(MAX_IDP_METADATA_BYTES - wrap(padding(0)).length));
    assert.equal(fits.length, MAX_IDP_METADATA_BYTES);
    await put(saml, { idp_metadata: fits });
    refused(saml, { idp_metadata: `${fits} ` }, BAD_FIELD);
    // Many '<' and long names: each is looked at once, with a bounded name match.
    const started = performance.now();
    for (const hostile of ['<'.repeat(250_000), `<EntityDescriptor>${'<a'.repeat(120_000)}`, `<EntityDescriptor>${`<${'a'.repeat(1000)}`.repeat(250)}`])
      refused(saml, { idp_metadata: hostile }, 7033);
    assert.ok(performance.now() - started < 2000, 'checked quickly');
  });
});

describe('user_agent_filter', () => {
  it('defaults to empty lists and keeps the patterns as sent', async () => {
    assert.deepEqual((await put(userAgentFilterModule, {})).shown, { enabled: true, allow: [], deny: [] });
    const body = { allow: ['^curl/', '(?i)googlebot', 'Mozilla/5\\.0 \\(Windows'], deny: ['(?iU)bad.*bot', '\\p{L}+bot'] };
    assert.deepEqual((await put(userAgentFilterModule, body)).shown, { enabled: true, ...body });
  });

  it('refuses a pattern that does not compile, naming the list, the index and the reason', async () => {
    const error = refused(userAgentFilterModule, { deny: ['^ok$', '[unclosed'] }, 2090);
    assert.match(error.message, /user_agent_filter\.deny\[1\] is not a valid regular expression/);
    refused(userAgentFilterModule, { allow: ['\\q'] }, 2090);
    refused(userAgentFilterModule, { allow: ['(?x)abc'] }, 2090);
  });

  it('refuses a pattern that could take exponential time', async () => {
    for (const pattern of ['(a+)+$', '(.*a){20}', '([a-z]*)*x']) {
      const error = refused(userAgentFilterModule, { allow: [pattern] }, 2090);
      assert.match(error.message, /user_agent_filter\.allow\[0\] could take exponential time/, pattern);
    }
  });

  it('takes at most 32 patterns of at most 1024 characters', async () => {
    await put(userAgentFilterModule, { allow: Array.from({ length: 32 }, (_, i) => `bot${i}`) });
    refused(userAgentFilterModule, { deny: Array.from({ length: 33 }, (_, i) => `bot${i}`) }, BAD_FIELD);
    refused(userAgentFilterModule, { deny: ['a'.repeat(1025)] }, BAD_FIELD);
  });
});
