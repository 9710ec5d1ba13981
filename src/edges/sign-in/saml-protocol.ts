// SAML for the `saml` sign-in module, with samlify: the service provider a stored module describes,
// its metadata, the AuthnRequest that starts a sign-in, and every check of the identity provider's
// answer that samlify leaves to its caller (audience, destination, recipient, InResponseTo, replay,
// groups). samlify does the XML work: schema validation, signatures, issuer and time conditions.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import samlify from 'samlify';
import type { IdentityProviderInstance, ServiceProviderInstance } from 'samlify';
import type { SamlValue } from '../../edge-config/modules/sign-in-modules.js';
import type { Sealer } from '../../lib/crypto/sealer.js';

/** The largest SAMLResponse form body the ACS reads (base64 of the XML, so about 190 KiB of XML). */
export const MAX_SAML_RESPONSE_BODY_BYTES = 256 * 1024;
/** How far the identity provider's clock may be from ours, both ways, for NotBefore and NotOnOrAfter. */
export const CLOCK_DRIFT_MS = 60_000;
/** A response must be used within this long: SubjectConfirmationData NotOnOrAfter no further away. */
export const MAX_RESPONSE_LIFETIME_MS = 60 * 60 * 1000;

// Attribute names read, most specific first. Identity providers name them differently: plain
// names (samlify, Keycloak, Okta's defaults), the LDAP OIDs (Shibboleth), and the claim URIs of
// Microsoft Entra ID and AD FS.
export const EMAIL_ATTRIBUTES = [
  'email',
  'mail',
  'emailAddress',
  'urn:oid:0.9.2342.19200300.100.1.3',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
] as const;
export const GROUP_ATTRIBUTES = [
  'groups',
  'Groups',
  'memberOf',
  'urn:oid:1.3.6.1.4.1.5923.1.5.1.1',
  'http://schemas.microsoft.com/ws/2008/06/identity/claims/groups',
  'http://schemas.xmlsoap.org/claims/Group',
] as const;
export const NAME_ATTRIBUTES = [
  'displayName',
  'name',
  'urn:oid:2.16.840.1.113730.3.1.241',
  'http://schemas.microsoft.com/identity/claims/displayname',
] as const;
const EMAIL_NAMEID_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';

const { Constants, Extractor, SamlLib } = samlify;

/*
 * The schema check: xmllint (WebAssembly, with an in-memory file system: nothing is fetched)
 * against the SAML 2.0 schemas that @authenio/samlify-xmllint-wasm ships. Its own `validate` is
 * not used because it prints every failing document's errors, values quoted, to the console,
 * outside the logger; this one says only that the message is not valid. xmllint-wasm is loaded
 * from where that package finds it, as its dependency.
 */
const SCHEMA_FILES = [
  'saml-schema-protocol-2.0.xsd',
  'datatypes.dtd',
  'saml-schema-assertion-2.0.xsd',
  'xmldsig-core-schema.xsd',
  'XMLSchema.dtd',
  'xenc-schema.xsd',
] as const;
interface XmlLint {
  validateXML(options: {
    xml: { fileName: string; contents: string }[];
    extension: 'schema';
    schema: string[];
    preload: { fileName: string; contents: string }[];
  }): Promise<{ valid: boolean }>;
}
let schemaCheck: ((xml: string) => Promise<true>) | undefined;

function samlSchemaCheck(): (xml: string) => Promise<true> {
  if (schemaCheck) return schemaCheck;
  const wrapper = createRequire(import.meta.url).resolve('@authenio/samlify-xmllint-wasm');
  const xmllint = createRequire(wrapper)('xmllint-wasm') as XmlLint;
  const dir = path.join(path.dirname(wrapper), 'schemas');
  const [schema, ...preload] = SCHEMA_FILES.map((fileName) => ({ fileName, contents: readFileSync(path.join(dir, fileName), 'utf8') }));
  schemaCheck = async (xml) => {
    const result = await xmllint.validateXML({ xml: [{ fileName: 'message.xml', contents: xml }], extension: 'schema', schema: [schema!.contents], preload });
    if (!result.valid) throw new Error('ERR_EXCEPTION_VALIDATE_XML');
    return true;
  };
  return schemaCheck;
}
const POST_BINDING = Constants.namespace.binding.post;
const RSA_SHA256 = Constants.algorithms.signature.RSA_SHA256;

/** A SAML message that is refused: `reason` is safe to show the user and to log (it never quotes the message). */
export class SamlRefusal extends Error {
  constructor(
    readonly status: 400 | 403 | 409 | 503,
    readonly reason: string,
  ) {
    super(reason);
    this.name = 'SamlRefusal';
  }
}

const refuse = (reason: string) => new SamlRefusal(403, reason);

let configured = false;

/**
 * samlify's process-wide settings, once: the schema validator (samlify refuses every message
 * without one), and a DOM parser for which any warning is an error too, on top of samlify's own
 * fatal errors for entity references. DTDs are refused before parsing (`withoutDoctype`): xmldom
 * has no switch to turn them off.
 */
export function configureSamlify(): void {
  if (configured) return;
  samlify.setSchemaValidator({ validate: samlSchemaCheck() });
  const fail = (message: string) => {
    throw new Error(`XML parsing error: ${message}`);
  };
  samlify.setDOMParserOptions({ errorHandler: { warning: fail, error: fail, fatalError: fail } });
  configured = true;
}

/** SAML messages and metadata never have a DTD; one could declare entities for the parser to expand. */
const DTD = /<!DOCTYPE|<!ENTITY/i;

function withoutDoctype(xml: string): string {
  if (DTD.test(xml)) throw new SamlRefusal(400, 'the SAML message has a DTD, which SAML does not allow');
  return xml;
}

/** The identity provider the module's metadata describes (samlify parses it here). */
export function identityProvider(module: SamlValue): IdentityProviderInstance {
  configureSamlify();
  // The API checked the metadata's shape when the module was set; samlify reads it in full here.
  if (DTD.test(module.idp_metadata)) throw unusableMetadata();
  try {
    return samlify.IdentityProvider({ metadata: module.idp_metadata });
  } catch {
    throw unusableMetadata();
  }
}

const unusableMetadata = () => new SamlRefusal(409, "the module's idp_metadata cannot be used as an identity provider's metadata");

/**
 * The service provider a module describes, towards `idp`. AuthnRequests are signed exactly when
 * the identity provider's metadata asks for it (WantAuthnRequestsSigned): samlify requires the two
 * to agree, and an unsigned request is what an IdP that does not ask expects.
 */
export function serviceProvider(module: SamlValue, idp: IdentityProviderInstance, sealer: Sealer): ServiceProviderInstance {
  const signed = idp.entityMeta.isWantAuthnRequestsSigned();
  return samlify.ServiceProvider({
    ...serviceProviderSettings(module, signed),
    ...(signed && { privateKey: sealer.open(module.request_signing_key_sealed, 'saml.request_signing_key'), requestSignatureAlgorithm: RSA_SHA256 }),
  });
}

function serviceProviderSettings(module: SamlValue, signed: boolean) {
  return {
    entityID: module.entity_id,
    authnRequestsSigned: signed,
    wantAssertionsSigned: true,
    signingCert: module.request_signing_certificate_pem,
    nameIDFormat: [module.nameid_format],
    assertionConsumerService: [{ Binding: POST_BINDING, Location: module.assertion_consumer_service_url }],
    clockDrifts: [-CLOCK_DRIFT_MS, CLOCK_DRIFT_MS] as [number, number],
  };
}

/**
 * The service provider's metadata: its entity id, the ACS (HTTP-POST), the NameID format asked
 * for and the request signing certificate. No SingleLogoutService: single logout is not offered
 * (sessions are cookies on the edge's own names, which the API host cannot clear).
 */
export function serviceProviderMetadata(module: SamlValue): string {
  // The key is not needed for metadata: a service provider without it, signing as above.
  const signed = identityProvider(module).entityMeta.isWantAuthnRequestsSigned();
  return samlify.ServiceProvider(serviceProviderSettings(module, signed)).getMetadata();
}

/** A fresh AuthnRequest id: an xs:ID (an NCName, so it starts with `_`), 160 random bits. */
export const newRequestId = () => `_${randomBytes(20).toString('hex')}`;

/** The URL of an HTTP-Redirect AuthnRequest with id `requestId` (made before, as RelayState names it). */
export function authnRequestUrl(module: SamlValue, sealer: Sealer, requestId: string, relayState: string): string {
  const idp = identityProvider(module);
  const sp = serviceProvider(module, idp, sealer);
  sp.entitySetting.generateID = () => requestId;
  return sp.createLoginRequest(idp, 'redirect', { relayState, ...(module.force_authn && { forceAuthn: true }) }).context;
}

/** Who signed in, as the identity provider said. */
export interface SamlIdentity {
  nameId: string;
  email?: string;
  name?: string;
  groups: string[];
  /** The assertion's id: used once. */
  assertionId: string;
  /** Until when the response may be used (SubjectConfirmationData NotOnOrAfter). */
  usableUntil: number;
}

const values = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
const first = (v: string | string[] | undefined): string | undefined => values(v)[0];

/** The assertion samlify verified, taken again from the response: its fields are read from it alone (no wrapped assertion). */
function verifiedAssertion(xml: string, idp: IdentityProviderInstance): string {
  const [verified, assertion] = SamlLib.verifySignature(xml, { metadata: idp.entityMeta }) as [boolean, string | null];
  if (!verified || !assertion) throw refuse('the response carries no assertion signed by the identity provider');
  return assertion;
}

/** What the checks of a login response expect. */
export interface Expected {
  /** The AuthnRequest's id when the service provider started the sign-in; undefined for IdP-initiated. */
  requestId: string | undefined;
  now: Date;
}

/**
 * Reads and checks a login response (HTTP-POST binding, `SAMLResponse` as sent, base64). samlify
 * checks the schema, the status, the signature (of the response or the assertion, against the
 * IdP metadata's certificates), the issuer and the time conditions; then here: the audience is
 * this service provider, the Destination and the bearer SubjectConfirmationData's Recipient are
 * its ACS, NotOnOrAfter is set and near, InResponseTo is the request's (SP-initiated) or absent
 * (IdP-initiated, and then only when the module allows it), and the user is in an authorized
 * group when the module names groups.
 */
export async function readLoginResponse(module: SamlValue, sealer: Sealer, samlResponse: string, expected: Expected): Promise<SamlIdentity> {
  if (samlResponse.length > MAX_SAML_RESPONSE_BODY_BYTES) throw new SamlRefusal(400, 'the SAMLResponse is too large');
  if (!/^[A-Za-z0-9+/=\r\n]+$/.test(samlResponse)) throw new SamlRefusal(400, 'the SAMLResponse is not base64');
  withoutDoctype(Buffer.from(samlResponse, 'base64').toString('utf8'));
  const idp = identityProvider(module);
  const sp = serviceProvider(module, idp, sealer);
  let result: Awaited<ReturnType<ServiceProviderInstance['parseLoginResponse']>>;
  try {
    result = await sp.parseLoginResponse(idp, 'post', { body: { SAMLResponse: samlResponse } });
  } catch (error) {
    throw refuse(samlifyReason(error));
  }
  const assertion = verifiedAssertion(result.samlContent, idp);
  const extract = result.extract;
  const confirmation = Extractor.extract(assertion, [
    {
      key: 'data',
      localPath: ['Assertion', 'Subject', 'SubjectConfirmation', 'SubjectConfirmationData'],
      attributes: ['Recipient', 'NotOnOrAfter', 'InResponseTo'],
    },
    { key: 'id', localPath: ['Assertion'], attributes: ['ID'] },
  ]) as { data?: Record<string, string | undefined>; id?: string };
  const data = confirmation.data ?? {};
  const acs = module.assertion_consumer_service_url;

  if (!values(extract.audience as string | string[] | undefined).includes(module.entity_id))
    throw refuse('the assertion is not meant for this service provider (Audience)');
  const destination = extract.response?.destination as string | undefined;
  if (destination !== undefined && destination !== acs) throw refuse('the response was sent to another address (Destination)');
  if (data.recipient !== acs) throw refuse('the assertion is for another address (SubjectConfirmationData Recipient)');
  const usableUntil = Date.parse(data.notOnOrAfter ?? '');
  const now = expected.now.getTime();
  if (Number.isNaN(usableUntil)) throw refuse('the assertion has no SubjectConfirmationData NotOnOrAfter');
  if (now >= usableUntil + CLOCK_DRIFT_MS) throw refuse('the response has expired');
  if (usableUntil - now > MAX_RESPONSE_LIFETIME_MS) throw refuse('the response may be used for longer than an hour (SubjectConfirmationData NotOnOrAfter)');

  const inResponseTo = [data.inResponseTo, extract.response?.inResponseTo as string | undefined].filter((v) => v !== undefined && v !== '');
  if (expected.requestId === undefined) {
    if (!module.allow_idp_initiated) throw refuse('sign-ins started by the identity provider are not allowed (allow_idp_initiated is false)');
    if (inResponseTo.length > 0) throw refuse('the response answers a request this sign-in did not make (InResponseTo)');
  } else if (data.inResponseTo !== expected.requestId || inResponseTo.some((v) => v !== expected.requestId)) {
    throw refuse('the response does not answer this sign-in’s request (InResponseTo)');
  }

  const attributes = (extract.attributes ?? {}) as Record<string, string | string[]>;
  const nameId = first(extract.nameID as string | string[] | undefined);
  if (!nameId) throw refuse('the assertion names no subject (NameID)');
  const groups = [...new Set(GROUP_ATTRIBUTES.flatMap((name) => values(attributes[name])))];
  if (module.authorized_groups.length > 0 && !groups.some((g) => module.authorized_groups.includes(g)))
    throw refuse('the user is in none of the groups allowed to sign in');
  const email = EMAIL_ATTRIBUTES.map((name) => first(attributes[name])).find((v) => v !== undefined) ?? (nameIdIsEmail(assertion) ? nameId : undefined);
  const name = NAME_ATTRIBUTES.map((n) => first(attributes[n])).find((v) => v !== undefined);
  const assertionId = confirmation.id;
  if (!assertionId) throw refuse('the assertion has no ID');
  return { nameId, ...(email !== undefined && { email }), ...(name !== undefined && { name }), groups, assertionId, usableUntil };
}

function nameIdIsEmail(assertion: string): boolean {
  const found = Extractor.extract(assertion, [{ key: 'format', localPath: ['Assertion', 'Subject', 'NameID'], attributes: ['Format'] }]) as { format?: string };
  return found.format === EMAIL_NAMEID_FORMAT;
}

/** samlify's error codes, in words; anything else is a response that could not be read. */
function samlifyReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (message.includes('VERIFY_SIGNATURE') || message.includes('SIGNATURE'))
    return 'the response’s signature does not verify against the identity provider’s certificate';
  if (message.includes('ERR_UNMATCH_ISSUER')) return 'the response comes from another identity provider (Issuer)';
  if (message.includes('ERR_SUBJECT_UNCONFIRMED') || message.includes('ERR_EXPIRED_SESSION')) return 'the assertion is not valid at this time (Conditions)';
  if (message.includes('ERR_FAILED_STATUS')) return 'the identity provider did not sign the user in (Status)';
  if (message.includes('VALIDATE_XML') || message.includes('ERR_INVALID_XML') || message.includes('XML')) return 'the response is not valid SAML';
  return 'the response could not be read';
}

/**
 * Assertion ids already used, until they expire: a response is accepted once (per process; a
 * response replayed to another instance still needs the browser's state cookie on the edge, which
 * the first use clears). Bounded: past `max` ids in use, sign-ins are refused until some expire.
 */
export class UsedAssertions {
  private readonly until = new Map<string, number>();

  constructor(private readonly max = 100_000) {}

  /** Records `id` as used until `until` (ms); false when it was already used. */
  use(id: string, until: number, now: number): boolean {
    const seen = this.until.get(id);
    if (seen !== undefined && seen + CLOCK_DRIFT_MS > now) return false;
    if (this.until.size >= this.max) this.forgetExpired(now);
    if (this.until.size >= this.max) throw new SamlRefusal(503, 'too many sign-ins are in progress; try again in a few minutes');
    this.until.set(id, until);
    return true;
  }

  private forgetExpired(now: number): void {
    for (const [id, until] of this.until) if (until + CLOCK_DRIFT_MS <= now) this.until.delete(id);
  }
}

/**
 * What the edge host tells the ACS through RelayState, sealed with the master key and bound to the
 * service provider: the host to hand the user back to, the gate's sign-in (`state`, which its
 * state cookie on that host holds), and the AuthnRequest's id for InResponseTo. Sealed, so that
 * nobody can send a user's identity to a host of their choosing.
 */
export interface RelayState {
  host: string;
  state: string;
  requestId: string;
  expiresAt: number;
}

const relayStateBinding = (serviceProviderId: string) => `saml.relay_state\n${serviceProviderId}`;

export function sealRelayState(sealer: Sealer, serviceProviderId: string, relay: RelayState): string {
  return sealer.seal(JSON.stringify({ h: relay.host, s: relay.state, r: relay.requestId, e: relay.expiresAt }), relayStateBinding(serviceProviderId));
}

/** The RelayState the edge host sealed for this service provider; undefined for anything else (an IdP's own RelayState, a forgery, an expired one). */
export function openRelayState(sealer: Sealer, serviceProviderId: string, text: string, now: number): RelayState | undefined {
  let value: { h?: unknown; s?: unknown; r?: unknown; e?: unknown };
  try {
    value = JSON.parse(sealer.open(text, relayStateBinding(serviceProviderId))) as typeof value;
  } catch {
    return undefined;
  }
  if (typeof value.h !== 'string' || typeof value.s !== 'string' || typeof value.r !== 'string' || typeof value.e !== 'number') return undefined;
  if (value.e <= now) return undefined;
  return { host: value.h, state: value.s, requestId: value.r, expiresAt: value.e };
}
