// The sign-in modules of HTTPS edge routes and endpoint configurations: OAuth, OIDC and SAML.
// A route signs its users in one way (each excludes the other two), and one route of an edge at
// most has one (the route kind checks that). Client secrets and the SAML signing key are sealed
// with the master key and never shown.
import { randomBytes, webcrypto } from 'node:crypto';
import { Type, type Static, type TObject, type TProperties, type TSchema } from '@sinclair/typebox';
import { errors } from '../../core/errors.js';
import { OAUTH_PROVIDERS, type OAuthProvider } from '../../core/oauth-providers.js';
import { newId } from '../../core/ids.js';
import { BoundedString } from '../../core/schema.js';
import { defineModule } from '../../crud/modules.js';
import type { Sealer } from '../../lib/crypto/sealer.js';
import { x509 } from '../../lib/crypto/x509.js';
import { isToken } from '../../lib/http/syntax.js';
import { withoutCredentials } from '../../lib/http/url.js';
import { edgeModuleErrors } from './edge-module.errors.js';
import { Enabled } from './edge-modules.js';

const Strings = (maxLength: number, maxItems: number, description: string) =>
  Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength }), { maxItems, description: `${description}; at most ${maxItems}` }));
const DAY_SECONDS = 24 * 60 * 60;

/** Each list item passes `test`, or the 400 names it (`oauth.provider.github.email_domains[2]`). */
function checkEach(field: string, items: readonly string[], test: (item: string) => boolean, problem: string): string[] {
  items.forEach((item, i) => {
    if (!test(item)) throw errors.invalidField({ field: `${field}[${i}]`, problem: `${problem}; got '${item.slice(0, 80)}'` });
  });
  return [...items];
}

// Sign-in modules (OAuth, OIDC, SAML): the session fields they share

/** The sign-in modules, by name. */
export const SIGN_IN_MODULES = ['oauth', 'oidc', 'saml'] as const;
type AuthModule = (typeof SIGN_IN_MODULES)[number];
/** One route signs its users in one way. */
const othersThan = (name: AuthModule) => SIGN_IN_MODULES.filter((other) => other !== name);

const MAX_SESSION_SECONDS = 30 * DAY_SECONDS;
const Seconds = (description: string, max = MAX_SESSION_SECONDS) =>
  Type.Optional(Type.Integer({ minimum: 0, maximum: max, description: `${description}; seconds, at most ${max}, 0 for none (default 0)` }));
const DEFAULT_COOKIE_PREFIX = 'edgeplane.';

const SessionRequest = {
  enabled: Enabled,
  options_passthrough: Type.Optional(Type.Boolean({ description: 'let CORS preflight OPTIONS requests through unauthenticated (default false)' })),
  cookie_prefix: Type.Optional(
    Type.String({ maxLength: 64, description: `prefix of the session cookies' names, a cookie-name token (default ${DEFAULT_COOKIE_PREFIX})` }),
  ),
  inactivity_timeout: Seconds('a session ends after this long without a request'),
  maximum_duration: Seconds('a session ends this long after sign-in'),
} satisfies TProperties;
const SessionResponse = {
  enabled: Type.Boolean(),
  options_passthrough: Type.Boolean(),
  cookie_prefix: Type.String(),
  inactivity_timeout: Type.Integer(),
  maximum_duration: Type.Integer(),
} satisfies TProperties;
type SessionBody = Partial<Record<'enabled' | 'options_passthrough', boolean> & Record<'inactivity_timeout' | 'maximum_duration', number>> & {
  cookie_prefix?: string;
};
type Session = Static<TObject<typeof SessionResponse>>;

function sessionOf(module: AuthModule, body: SessionBody): Session {
  const cookiePrefix = body.cookie_prefix ?? DEFAULT_COOKIE_PREFIX;
  if (!isToken(cookiePrefix))
    throw errors.invalidField({ field: `${module}.cookie_prefix`, problem: "must be a cookie-name token (letters, digits and !#$%&'*+-.^_`|~)" });
  return {
    enabled: body.enabled ?? true,
    options_passthrough: body.options_passthrough ?? false,
    cookie_prefix: cookiePrefix,
    inactivity_timeout: body.inactivity_timeout ?? 0,
    maximum_duration: body.maximum_duration ?? 0,
  };
}

const sessionToApi = (value: Session): Session => ({
  enabled: value.enabled,
  options_passthrough: value.options_passthrough,
  cookie_prefix: value.cookie_prefix,
  inactivity_timeout: value.inactivity_timeout,
  maximum_duration: value.maximum_duration,
});

// RFC 6749 §3.3 scope-token: printable ASCII but space, '"' and '\'.
const SCOPE = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
const Scopes = Strings(256, 64, 'scopes to request');
const checkScopes = (field: string, scopes: readonly string[] = []) => checkEach(field, scopes, (s) => SCOPE.test(s), 'must be an OAuth scope token');

// ---------------------------------------------------------------------------------------------
// OAuth

/** Lists only GitHub has: who may sign in by team or organization membership. */
const GITHUB_LISTS = ['teams', 'organizations'] as const;

// Loose on purpose: the identity provider has the last word; these catch typing mistakes only.
const DOMAIN = /^[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$/;
const isEmail = (s: string) => {
  const at = s.lastIndexOf('@');
  return at > 0 && !/[\s@]/.test(s.slice(0, at)) && DOMAIN.test(s.slice(at + 1));
};

function oauthProviderRequest(provider: OAuthProvider) {
  return Type.Object(
    {
      client_id: Type.Optional(
        Type.String({ minLength: 1, maxLength: 255, description: 'your OAuth application; with client_secret, or neither for the managed one' }),
      ),
      client_secret: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'stored sealed and never shown' })),
      scopes: Scopes,
      email_addresses: Strings(254, 1024, 'addresses allowed to sign in'),
      email_domains: Strings(253, 256, 'domains whose addresses may sign in'),
      ...(provider === 'github' && Object.fromEntries(GITHUB_LISTS.map((list) => [list, Strings(256, 256, `GitHub ${list} whose members may sign in`)]))),
    },
    { additionalProperties: false },
  );
}

function oauthProviderResponse(provider: OAuthProvider) {
  return Type.Object({
    client_id: Type.Union([Type.String(), Type.Null()]),
    client_secret: Type.Null({ description: 'never shown' }),
    scopes: Type.Array(Type.String()),
    email_addresses: Type.Array(Type.String()),
    email_domains: Type.Array(Type.String()),
    ...(provider === 'github' && Object.fromEntries(GITHUB_LISTS.map((list) => [list, Type.Array(Type.String())]))),
  });
}

/** One optional field per provider, each of the provider's own shape. */
const perProvider = (make: (provider: OAuthProvider) => TSchema) => Object.fromEntries(OAUTH_PROVIDERS.map((p) => [p, Type.Optional(make(p))]));

const OAuthRequest = Type.Object(
  {
    ...SessionRequest,
    provider: Type.Object(perProvider(oauthProviderRequest), { additionalProperties: false, description: 'exactly one identity provider' }),
    auth_check_interval: Seconds('how often the provider is asked whether the user may still sign in', DAY_SECONDS),
  },
  { additionalProperties: false },
);

type OAuthProviderBody = { client_id?: string; client_secret?: string } & Partial<
  Record<'scopes' | 'email_addresses' | 'email_domains' | 'teams' | 'organizations', string[]>
>;
const OAuthProviderValue = Type.Object({
  client_id: Type.Union([Type.String(), Type.Null()]),
  client_secret_sealed: Type.Union([Type.String(), Type.Null()]),
  scopes: Type.Array(Type.String()),
  email_addresses: Type.Array(Type.String()),
  email_domains: Type.Array(Type.String()),
  teams: Type.Optional(Type.Array(Type.String())),
  organizations: Type.Optional(Type.Array(Type.String())),
});
export type OAuthProviderValue = Static<typeof OAuthProviderValue>;
/** What is stored: the session, and the one provider named, its client secret sealed. */
const OAuthValue = Type.Object({
  ...SessionResponse,
  auth_check_interval: Type.Integer(),
  provider: Type.Object(Object.fromEntries(OAUTH_PROVIDERS.map((p) => [p, Type.Optional(OAuthProviderValue)])), { additionalProperties: false }),
});
export type OAuthValue = Session & { auth_check_interval: number; provider: Partial<Record<OAuthProvider, OAuthProviderValue>> };

function oauthProviderValue(sealer: Sealer, provider: OAuthProvider, body: OAuthProviderBody): OAuthProviderValue {
  if ((body.client_id === undefined) !== (body.client_secret === undefined)) throw edgeModuleErrors.oauthClientPair({ provider });
  const field = `oauth.provider.${provider}`;
  return {
    client_id: body.client_id ?? null,
    client_secret_sealed: body.client_secret === undefined ? null : sealer.seal(body.client_secret, 'oauth.client_secret'),
    scopes: checkScopes(`${field}.scopes`, body.scopes),
    email_addresses: checkEach(`${field}.email_addresses`, body.email_addresses ?? [], isEmail, 'must be an email address'),
    email_domains: checkEach(`${field}.email_domains`, body.email_domains ?? [], (d) => DOMAIN.test(d), 'must be a domain name'),
    ...(provider === 'github' && Object.fromEntries(GITHUB_LISTS.map((list) => [list, [...(body[list] ?? [])]]))),
  };
}

/** The response of a provider: what was stored, the secret never. */
const oauthProviderToApi = ({ client_secret_sealed: _never, ...shown }: OAuthProviderValue) => ({ ...shown, client_secret: null });

/** OAuth sign-in; `client_secret` is sealed with `sealer` and never shown. */
export function oauthModule(sealer: Sealer) {
  return defineModule({
    name: 'oauth',
    title: 'OAuth',
    request: OAuthRequest,
    stored: OAuthValue,
    response: Type.Object({
      ...SessionResponse,
      provider: Type.Object(perProvider(oauthProviderResponse)),
      auth_check_interval: Type.Integer(),
    }),
    parse: (sent) => {
      const body = sent as SessionBody & { provider: Partial<Record<OAuthProvider, OAuthProviderBody>>; auth_check_interval?: number };
      const named = OAUTH_PROVIDERS.filter((p) => body.provider[p] !== undefined);
      if (named.length !== 1) throw edgeModuleErrors.oauthProviderCount({ count: named.length, supported: OAUTH_PROVIDERS });
      const provider = named[0]!;
      const value: OAuthValue = {
        ...sessionOf('oauth', body),
        auth_check_interval: body.auth_check_interval ?? 0,
        provider: { [provider]: oauthProviderValue(sealer, provider, body.provider[provider]!) },
      };
      return { value, refs: [] };
    },
    toApi: (value) => ({
      ...sessionToApi(value),
      provider: Object.fromEntries(Object.entries(value.provider).map(([name, p]) => [name, oauthProviderToApi(p!)])),
      auth_check_interval: value.auth_check_interval,
    }),
    excludes: othersThan('oauth'),
  });
}

// ---------------------------------------------------------------------------------------------
// OIDC

const OidcRequest = Type.Object(
  {
    ...SessionRequest,
    issuer: Type.String({ maxLength: 2048, description: "the identity provider's issuer, an https URL" }),
    client_id: Type.String({ minLength: 1, maxLength: 255 }),
    client_secret: Type.String({ minLength: 1, maxLength: 1024, description: 'stored sealed and never shown' }),
    scopes: Scopes,
  },
  { additionalProperties: false },
);
const OidcValue = Type.Object({
  ...SessionResponse,
  issuer: Type.String(),
  client_id: Type.String(),
  client_secret_sealed: Type.String(),
  scopes: Type.Array(Type.String()),
});

export type OidcValue = Static<typeof OidcValue>;

function checkIssuer(issuer: string): string {
  const url = URL.canParse(issuer) ? new URL(issuer) : undefined;
  if (url?.protocol !== 'https:' || url.username !== '' || url.password !== '')
    throw errors.invalidField({ field: 'oidc.issuer', problem: `must be an https URL without credentials; got '${withoutCredentials(issuer).slice(0, 80)}'` });
  return issuer;
}

/** OpenID Connect sign-in; `client_secret` is sealed with `sealer` and never shown. */
export function oidcModule(sealer: Sealer) {
  return defineModule({
    name: 'oidc',
    title: 'OIDC',
    request: OidcRequest,
    stored: OidcValue,
    response: Type.Object({
      ...SessionResponse,
      issuer: Type.String(),
      client_id: Type.String(),
      client_secret: Type.Null({ description: 'never shown' }),
      scopes: Type.Array(Type.String()),
    }),
    parse: (body) => {
      const value = {
        ...sessionOf('oidc', body),
        issuer: checkIssuer(body.issuer),
        client_id: body.client_id,
        client_secret_sealed: sealer.seal(body.client_secret, 'oidc.client_secret'),
        scopes: checkScopes('oidc.scopes', body.scopes),
      };
      return { value, refs: [] };
    },
    toApi: (value) => ({ ...sessionToApi(value), issuer: value.issuer, client_id: value.client_id, client_secret: null, scopes: value.scopes }),
    excludes: othersThan('oidc'),
  });
}

// ---------------------------------------------------------------------------------------------
// SAML

export const MAX_IDP_METADATA_BYTES = 256 * 1024;
const DEFAULT_NAMEID_FORMAT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent';

/*
 * A structural check of IdP metadata, written by hand because no XML parser is a dependency and
 * this needs little of one: the root element is an EntityDescriptor (any namespace prefix) that
 * has an IDPSSODescriptor. Start tags are found with indexOf and one sticky, bounded name match
 * per '<', skipping comments, CDATA and processing instructions, so it is linear in the input.
 * A DOCTYPE is refused: metadata has none, and one could declare entities for whoever parses it
 * next. The edge parses the document fully when it loads it.
 */
const SKIPPED: readonly (readonly [string, string])[] = [
  ['<!--', '-->'],
  ['<![CDATA[', ']]>'],
  ['<?', '?>'],
];
const TAG_NAME = /[A-Za-z_][\w.:-]{0,255}/y;
const localName = (qualified: string) => qualified.slice(qualified.lastIndexOf(':') + 1);

/** The names of the start tags of an XML text, in order. */
function* startTags(xml: string): Generator<string> {
  for (let at = xml.indexOf('<'); at !== -1; at = xml.indexOf('<', at + 1)) {
    const skipped = SKIPPED.find(([open]) => xml.startsWith(open, at));
    if (skipped) {
      const end = xml.indexOf(skipped[1], at + skipped[0].length);
      if (end === -1) return;
      at = end;
      continue;
    }
    TAG_NAME.lastIndex = at + 1;
    const name = TAG_NAME.exec(xml)?.[0];
    if (name !== undefined) yield name;
  }
}

function checkIdpMetadata(xml: string): string {
  const invalid = (reason: string) => edgeModuleErrors.samlMetadataInvalid({ reason });
  if (xml.includes('<!DOCTYPE')) throw invalid('has a DOCTYPE, which SAML metadata does not use');
  const tags = startTags(xml);
  const root = tags.next();
  if (root.done || localName(root.value) !== 'EntityDescriptor') throw invalid('must be an XML document whose root element is an EntityDescriptor');
  if (!xml.includes(`</${root.value}`)) throw invalid(`has no end tag of its ${root.value} (is it cut short?)`);
  for (const name of tags) if (localName(name) === 'IDPSSODescriptor') return xml;
  throw invalid('has no IDPSSODescriptor: it describes no identity provider');
}

/**
 * The request signing certificate: self-signed, RSA 2048 with SHA-256, valid ten years; its key as
 * PKCS#8 PEM. RSA rather than ECDSA: samlify signs HTTP-Redirect AuthnRequests with node-rsa
 * (RSA only), and RSA-SHA256 is the one algorithm every identity provider verifies.
 */
const SIGNING_ALGORITHM = { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' } as const;

async function selfSignedCertificate(commonName: string): Promise<{ certificatePem: string; keyPem: string }> {
  const keys = (await webcrypto.subtle.generateKey(SIGNING_ALGORITHM, true, ['sign', 'verify'])) as unknown as CryptoKeyPair;
  const now = Date.now();
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomBytes(16).toString('hex').replace(/^./, '4'),
    name: `CN=${commonName}`,
    notBefore: new Date(now - DAY_SECONDS * 1000),
    notAfter: new Date(now + 3650 * DAY_SECONDS * 1000),
    signingAlgorithm: SIGNING_ALGORITHM,
    keys,
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey as webcrypto.CryptoKey));
  return { certificatePem: certificate.toString('pem'), keyPem: x509.PemConverter.encode(pkcs8, 'PRIVATE KEY') };
}

const SamlRequest = Type.Object(
  {
    ...SessionRequest,
    idp_metadata: BoundedString(MAX_IDP_METADATA_BYTES, { description: "the identity provider's SAML metadata XML (an EntityDescriptor), at most 256 KiB" }),
    force_authn: Type.Optional(Type.Boolean({ description: 'ask the identity provider to sign the user in again every time (default false)' })),
    allow_idp_initiated: Type.Optional(Type.Boolean({ description: 'accept sign-ins the identity provider starts (default false)' })),
    authorized_groups: Strings(256, 256, 'groups whose members may sign in (none: everyone the IdP signs in)'),
    nameid_format: Type.Optional(Type.String({ maxLength: 256, description: `the NameID format asked for, a URI (default ${DEFAULT_NAMEID_FORMAT})` })),
  },
  { additionalProperties: false },
);
/** What the service provider (this route) is to the identity provider, made at parse. */
const SamlProvider = {
  entity_id: Type.String(),
  assertion_consumer_service_url: Type.String(),
  single_logout_url: Type.String(),
  metadata_url: Type.String(),
  request_signing_certificate_pem: Type.String(),
};
const SamlShown = {
  ...SessionResponse,
  idp_metadata: Type.String(),
  force_authn: Type.Boolean(),
  allow_idp_initiated: Type.Boolean(),
  authorized_groups: Type.Array(Type.String()),
  nameid_format: Type.String(),
  ...SamlProvider,
};
const SamlValue = Type.Object({ ...SamlShown, request_signing_key_sealed: Type.String(), service_provider_id: Type.String() });
export type SamlValue = Static<typeof SamlValue>;
/** What parse makes before `finish` adds the certificate and its sealed key. */
type ParsedSaml = Omit<SamlValue, 'request_signing_certificate_pem' | 'request_signing_key_sealed'>;

function checkNameIdFormat(format: string): string {
  if (!URL.canParse(format))
    throw errors.invalidField({
      field: 'saml.nameid_format',
      problem: `must be a URI (urn:oasis:names:tc:SAML:…); got '${withoutCredentials(format).slice(0, 80)}'`,
    });
  return format;
}

/** The service provider's id and addresses, made at parse. */
function serviceProviderAddresses(baseUrl: string) {
  const id = newId('sp');
  const base = `${baseUrl}/saml/${id}`;
  return {
    service_provider_id: id,
    entity_id: `${base}/metadata`,
    assertion_consumer_service_url: `${base}/acs`,
    single_logout_url: `${base}/slo`,
    metadata_url: `${base}/metadata`,
  };
}

/**
 * SAML sign-in. Each parse makes a new service provider (id, addresses, signing certificate), so
 * replacing the module means registering it with the identity provider again.
 */
export function samlModule(sealer: Sealer) {
  return defineModule({
    name: 'saml',
    title: 'SAML',
    request: SamlRequest,
    stored: SamlValue,
    response: Type.Object(SamlShown),
    parse: (body, ctx) => {
      const value: ParsedSaml = {
        ...sessionOf('saml', body),
        idp_metadata: checkIdpMetadata(body.idp_metadata),
        force_authn: body.force_authn ?? false,
        allow_idp_initiated: body.allow_idp_initiated ?? false,
        authorized_groups: [...(body.authorized_groups ?? [])],
        nameid_format: checkNameIdFormat(body.nameid_format ?? DEFAULT_NAMEID_FORMAT),
        ...serviceProviderAddresses(ctx.baseUrl),
      };
      return { value, refs: [] };
    },
    // The signing certificate and its key, made once the body is known to be good; the key sealed.
    finish: async (value: ParsedSaml): Promise<SamlValue> => {
      const { certificatePem, keyPem } = await selfSignedCertificate(`edgeplane SAML ${value.service_provider_id}`);
      return { ...value, request_signing_certificate_pem: certificatePem, request_signing_key_sealed: sealer.seal(keyPem, 'saml.request_signing_key') };
    },
    toApi: ({ request_signing_key_sealed: _never, service_provider_id: _id, ...shown }) => shown,
    excludes: othersThan('saml'),
  });
}
