// What a sign-in method (OAuth, OIDC, SAML) is to the gate (gate.ts): the gate owns the session
// cookies, the state of sign-ins under way, the reserved paths and the answers; a method knows
// its identity provider — where to send the browser, how to read the provider's answer, whether
// the user may sign in, and whether they still may (auth_check_interval).
import type { Logger } from 'pino';
import type { OAuthValue, OidcValue, SamlValue } from '../../edge-config/modules/sign-in-modules.js';
import type { HttpsRoute } from '../edge-config.js';
import type { IngressError } from '../errors.js';
import type { Sealer } from '../../lib/crypto/sealer.js';
import type { Identity, PendingSignIn, Session, SignInCookies, SignInMethodName } from './session.js';

/**
 * The paths under this prefix on an edge's host are the edge's own when the edge has a route
 * that signs users in: they never reach an upstream.
 */
export const SIGN_IN_PATH = '/_edgeplane/sign-in';
/** Where OAuth and OIDC providers send the browser back (`redirect_uri`), one per host: the `state` parameter names the route. */
export const CALLBACK_PATH = `${SIGN_IN_PATH}/callback`;
/** Where the API host sends the browser with a handoff token (`?route=<route id>&token=…`). */
export const HANDOFF_PATH = `${SIGN_IN_PATH}/handoff`;
/** Ends the session of the route serving `?route=<route id>`, or of the edge's sign-in route. */
export const SIGN_OUT_PATH = `${SIGN_IN_PATH}/sign-out`;

/** The callback address registered with OAuth and OIDC providers for an edge host. */
export const callbackUrl = (host: string) => `https://${host}${CALLBACK_PATH}`;

/** Where the API host sends a browser to end a sign-in it took: the edge host's handoff path. */
export const handoffUrl = (host: string, routeId: string, token: string) =>
  `https://${host}${HANDOFF_PATH}?${new URLSearchParams({ route: routeId, token }).toString()}`;

/** What the gate gives a method for one request. */
export interface SignInContext<M> {
  route: HttpsRoute;
  /** The route's module of this method, as stored (secrets sealed). */
  module: M;
  /** The edge host the request came to, lower case. */
  host: string;
  /** Milliseconds one request to the identity provider may take; past it the sign-in fails. */
  timeoutMs: number;
  /** Opens the module's sealed secrets (`oauth.client_secret`, `oidc.client_secret`, `saml.request_signing_key`). */
  sealer: Sealer;
  /** The session cookies and handoff tokens (its `now` is the session clock). */
  cookies: SignInCookies;
  log: Logger;
}

/** Why a sign-in (or a check) did not succeed: the answer's error, and a reason for the log. Neither holds a secret. */
export interface SignInFailure {
  kind: 'failed';
  error: IngressError;
  /** For the log only. */
  why: string;
  /** Shown to the user after the error's message. */
  detail?: string;
}

/** Where a sign-in begins: a redirect to the provider, or a page (an auto-posting form of SAML's POST binding). */
export type SignInStep = { kind: 'redirect'; location: string } | { kind: 'page'; status: number; contentType: string; body: string };

export type SignInResult = { kind: 'signed-in'; identity: Identity; accessToken?: string } | SignInFailure;

export interface SignInMethod<M> {
  readonly name: SignInMethodName;
  /** The browser's way to the provider for the sign-in `pending` (its id is the `state`, with its nonce and PKCE verifier). */
  start(ctx: SignInContext<M>, pending: PendingSignIn): Promise<SignInStep | SignInFailure>;
  /** The provider's answer at CALLBACK_PATH (OAuth, OIDC): who signed in. SAML's answer goes to the API host, which hands off. */
  callback?(ctx: SignInContext<M>, pending: PendingSignIn, params: URLSearchParams): Promise<SignInResult>;
  /** Whether an identity handed off (HANDOFF_PATH) may sign in on this route; a failure when not. */
  authorize?(ctx: SignInContext<M>, identity: Identity): SignInFailure | undefined;
  /** How often the provider is asked again (seconds, 0 for never), and the asking: 'ok', or why the session ends. */
  checkInterval?(module: M): number;
  recheck?(ctx: SignInContext<M>, session: Session): Promise<'ok' | SignInFailure>;
}

/** The methods the gate knows, by module name; a route whose method is missing is refused (ERR_EP_INGRESS_727). */
export interface SignInMethods {
  oauth?: SignInMethod<OAuthValue>;
  oidc?: SignInMethod<OidcValue>;
  saml?: SignInMethod<SamlValue>;
}
