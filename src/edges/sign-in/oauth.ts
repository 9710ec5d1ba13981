// The `oauth` module's sign-in: the authorization code flow with PKCE against one of the table's
// providers (oauth-providers.ts), through openid-client; then the provider's API says who the
// user is, and the module's lists say whether they may sign in.
import * as client from 'openid-client';
import type { OAuthProvider } from '../../core/oauth-providers.js';
import type { OAuthProviderValue, OAuthValue } from '../../edge-config/modules/sign-in-modules.js';
import { EDGE_ERRORS } from '../errors.js';
import { IdpError, idpFailure } from './idp-http.js';
import { callbackUrl, type SignInContext, type SignInFailure, type SignInMethod, type SignInResult } from './method.js';
import { oauthProvider, type OAuthProviderSpec, type ProviderUser } from './oauth-providers.js';

export type IdpFetch = (url: string | URL, init?: { method?: string; headers?: Record<string, string> }) => Promise<Response>;

/** What the operator set for OAuth providers. */
export interface OAuthSettings {
  /** Providers moved to another base URL (GitHub Enterprise Server, a self-hosted GitLab). */
  providerUrls?: Partial<Record<OAuthProvider, string>>;
  /** The server's own OAuth application per provider, for modules whose client_id is null. */
  defaultClients?: Partial<Record<OAuthProvider, { clientId: string; clientSecret: string }>>;
}

/** The provider's token no longer works (revoked, expired): the session ends, the user signs in again. */
class TokenRefused extends Error {}

const failed = (error: SignInFailure['error'], why: string, detail?: string): SignInFailure => ({
  kind: 'failed',
  error,
  why,
  ...(detail !== undefined && { detail }),
});

/** The one provider a module names. */
function providerOf(module: OAuthValue): [OAuthProvider, OAuthProviderValue] {
  const [entry] = Object.entries(module.provider) as [OAuthProvider, OAuthProviderValue][];
  if (!entry) throw new Error('an oauth module without a provider');
  return entry;
}

const lower = (list: readonly string[] | undefined) => (list ?? []).map((s) => s.toLowerCase());

/**
 * Whether the module's lists let `user` in. No list set: anyone the provider signs in. Otherwise
 * matching any one list is enough: an address, an address's domain, a GitHub organization, or a
 * GitHub team (`organization/team-slug`).
 */
export function oauthAllows(value: OAuthProviderValue, user: ProviderUser): boolean {
  const lists = {
    addresses: lower(value.email_addresses),
    domains: lower(value.email_domains),
    organizations: lower(value.organizations),
    teams: lower(value.teams),
  };
  if (Object.values(lists).every((l) => l.length === 0)) return true;
  const email = user.email?.toLowerCase();
  if (email !== undefined && lists.addresses.includes(email)) return true;
  if (email !== undefined && lists.domains.includes(email.slice(email.lastIndexOf('@') + 1))) return true;
  if (user.organizations?.some((o) => lists.organizations.includes(o))) return true;
  return user.teams?.some((t) => lists.teams.includes(t)) ?? false;
}

const hasMembershipLists = (value: OAuthProviderValue) => (value.organizations?.length ?? 0) > 0 || (value.teams?.length ?? 0) > 0;

export function oauthMethod(settings: OAuthSettings, fetch: IdpFetch): SignInMethod<OAuthValue> {
  const specOf = (name: OAuthProvider) => oauthProvider(name, settings.providerUrls?.[name]);

  /** The route's client (its secret opened), or the server's default one; undefined when there is neither. */
  function clientOf(ctx: SignInContext<OAuthValue>, name: OAuthProvider, value: OAuthProviderValue) {
    if (value.client_id !== null && value.client_secret_sealed !== null)
      return { clientId: value.client_id, clientSecret: ctx.sealer.open(value.client_secret_sealed, 'oauth.client_secret') };
    return settings.defaultClients?.[name];
  }

  function configuration(spec: OAuthProviderSpec, clientId: string, clientSecret: string): client.Configuration {
    const config = new client.Configuration(
      { issuer: spec.issuer, authorization_endpoint: spec.authorizationEndpoint, token_endpoint: spec.tokenEndpoint },
      clientId,
      undefined,
      client.ClientSecretPost(clientSecret),
    );
    config[client.customFetch] = fetch as client.CustomFetch;
    // Only an operator's setting can point a provider at plain HTTP (a stand-in on loopback).
    if (spec.tokenEndpoint.startsWith('http:')) client.allowInsecureRequests(config);
    return config;
  }

  /** Who the token belongs to, by the provider's API. */
  function identify(spec: OAuthProviderSpec, clientId: string, token: string, lists: boolean): Promise<ProviderUser> {
    const get = async (url: string, headers: Record<string, string> = {}) => {
      const res = await fetch(url, { headers: { accept: 'application/json', 'user-agent': 'edgeplane', ...headers, authorization: `Bearer ${token}` } });
      if (res.status === 401) throw new TokenRefused(`${new URL(url).origin} refused the token`);
      if (!res.ok) throw new IdpError(EDGE_ERRORS.idpInvalid, `${new URL(url).origin}${new URL(url).pathname} answered ${res.status}`);
      try {
        return (await res.json()) as unknown;
      } catch {
        throw new IdpError(EDGE_ERRORS.idpInvalid, `${new URL(url).origin}${new URL(url).pathname} did not answer JSON`);
      }
    };
    return spec.identify(get, clientId, lists).catch((err: unknown) => {
      if (err instanceof TokenRefused || err instanceof IdpError) throw err;
      throw new IdpError(EDGE_ERRORS.idpInvalid, err instanceof Error ? err.message : 'the user could not be read');
    });
  }

  /** A failure of the provider's, classified; a refused token ends the session. */
  function failure(err: unknown): SignInFailure {
    if (err instanceof TokenRefused) return failed(EDGE_ERRORS.signInRequired, err.message);
    // The token endpoint's own OAuth error (a code used twice, a wrong secret): this sign-in fails.
    if (err instanceof client.ResponseBodyError && err.status < 500) return failed(EDGE_ERRORS.signInFailed, `token endpoint: ${err.error}`);
    const { error, why } = idpFailure(err);
    return failed(error, why);
  }

  return {
    name: 'oauth',

    async start(ctx, pending) {
      const [name, value] = providerOf(ctx.module);
      const app = clientOf(ctx, name, value);
      if (!app) return failed(EDGE_ERRORS.noOAuthApp, `no default OAuth client for ${name}`);
      const spec = specOf(name);
      const scopes = [...new Set([...spec.defaultScopes, ...(hasMembershipLists(value) ? (spec.membershipScopes ?? []) : []), ...value.scopes])];
      const url = client.buildAuthorizationUrl(configuration(spec, app.clientId, app.clientSecret), {
        redirect_uri: callbackUrl(ctx.host),
        scope: scopes.join(' '),
        state: pending.id,
        code_challenge: await client.calculatePKCECodeChallenge(pending.codeVerifier),
        code_challenge_method: 'S256',
      });
      return { kind: 'redirect', location: url.href };
    },

    async callback(ctx, pending, params): Promise<SignInResult> {
      const [name, value] = providerOf(ctx.module);
      const app = clientOf(ctx, name, value);
      if (!app) return failed(EDGE_ERRORS.noOAuthApp, `no default OAuth client for ${name}`);
      const spec = specOf(name);
      try {
        const config = configuration(spec, app.clientId, app.clientSecret);
        const tokens = await client.authorizationCodeGrant(config, new URL(`${callbackUrl(ctx.host)}?${params.toString()}`), {
          pkceCodeVerifier: pending.codeVerifier,
          expectedState: pending.id,
        });
        const user = await identify(spec, app.clientId, tokens.access_token, hasMembershipLists(value));
        if (!oauthAllows(value, user)) return failed(EDGE_ERRORS.signInRefused, `${name} user ${user.subject} is in none of the module's lists`);
        const identity = { subject: user.subject, ...(user.email && { email: user.email }), ...(user.name && { name: user.name }) };
        // The token is kept only when it is used again: the cookie stays small otherwise.
        return { kind: 'signed-in', identity, ...(ctx.module.auth_check_interval > 0 && { accessToken: tokens.access_token }) };
      } catch (err) {
        // The provider's own refusal (the user said no) comes back as an OAuth error on the callback.
        if (err instanceof client.AuthorizationResponseError) return failed(EDGE_ERRORS.signInFailed, `${name}: ${err.error}`, `(${name}: ${err.error})`);
        return failure(err);
      }
    },

    checkInterval: (module) => module.auth_check_interval,

    async recheck(ctx, session) {
      const [name, value] = providerOf(ctx.module);
      const app = clientOf(ctx, name, value);
      if (!app) return failed(EDGE_ERRORS.noOAuthApp, `no default OAuth client for ${name}`);
      if (session.accessToken === undefined) return failed(EDGE_ERRORS.signInRequired, 'the session kept no token to check with');
      try {
        const user = await identify(specOf(name), app.clientId, session.accessToken, hasMembershipLists(value));
        if (user.subject !== session.identity.subject) return failed(EDGE_ERRORS.signInRequired, 'the token names another user');
        return oauthAllows(value, user) ? 'ok' : failed(EDGE_ERRORS.signInRefused, `${name} user ${user.subject} is no longer in the module's lists`);
      } catch (err) {
        return failure(err);
      }
    },
  };
}
