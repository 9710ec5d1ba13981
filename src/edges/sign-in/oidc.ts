// The `oidc` module's sign-in, through openid-client: the provider found by discovery from its
// issuer, the authorization code flow with PKCE, state and nonce, and the ID token checked
// (signature, issuer, audience, expiry, nonce) before anyone is signed in.
import * as client from 'openid-client';
import type { OidcValue } from '../../edge-config/modules/sign-in-modules.js';
import { EDGE_ERRORS } from '../errors.js';
import { idpFailure } from './idp-http.js';
import { callbackUrl, type SignInContext, type SignInFailure, type SignInMethod, type SignInResult } from './method.js';
import type { IdpFetch } from './oauth.js';
import type { Identity } from './session.js';

/** How long a provider's discovered metadata is used before it is read again. */
const DISCOVERY_TTL_MS = 60 * 60_000;

const failed = (error: SignInFailure['error'], why: string, detail?: string): SignInFailure => ({
  kind: 'failed',
  error,
  why,
  ...(detail !== undefined && { detail }),
});

const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

function identityOf(claims: Record<string, unknown>): Identity {
  const email = str(claims.email);
  const name = str(claims.name) ?? str(claims.preferred_username);
  const groups = Array.isArray(claims.groups) ? claims.groups.filter((g): g is string => typeof g === 'string') : undefined;
  return {
    subject: String(claims.sub),
    ...(email !== undefined && claims.email_verified !== false && { email }),
    ...(name !== undefined && { name }),
    ...(groups && groups.length > 0 && { groups }),
  };
}

export function oidcMethod(fetch: IdpFetch): SignInMethod<OidcValue> {
  /** Discovered configurations by issuer and client; a failed discovery is not kept. */
  const discovered = new Map<string, { config: Promise<client.Configuration>; at: number }>();

  function configuration(ctx: SignInContext<OidcValue>): Promise<client.Configuration> {
    const { issuer, client_id: clientId, client_secret_sealed: sealed } = ctx.module;
    const key = `${issuer}\n${clientId}\n${sealed}`;
    const now = Date.now();
    const kept = discovered.get(key);
    if (kept && now - kept.at < DISCOVERY_TTL_MS) return kept.config;
    const secret = ctx.sealer.open(sealed, 'oidc.client_secret');
    const config = client
      .discovery(new URL(issuer), clientId, undefined, client.ClientSecretBasic(secret), { [client.customFetch]: fetch as client.CustomFetch })
      .then((found) => {
        // Basic unless the provider takes only client_secret_post (an absent list means Basic: OIDC Discovery §3).
        const methods = found.serverMetadata().token_endpoint_auth_methods_supported;
        if (!methods || methods.includes('client_secret_basic') || !methods.includes('client_secret_post')) return found;
        const post = new client.Configuration(found.serverMetadata(), clientId, undefined, client.ClientSecretPost(secret));
        post[client.customFetch] = fetch as client.CustomFetch;
        return post;
      });
    config.catch(() => discovered.delete(key));
    discovered.set(key, { config, at: now });
    while (discovered.size > 1000) discovered.delete(discovered.keys().next().value!);
    return config;
  }

  return {
    name: 'oidc',

    async start(ctx, pending) {
      try {
        const config = await configuration(ctx);
        const url = client.buildAuthorizationUrl(config, {
          redirect_uri: callbackUrl(ctx.host),
          scope: [...new Set(['openid', 'email', 'profile', ...ctx.module.scopes])].join(' '),
          state: pending.id,
          nonce: pending.nonce,
          code_challenge: await client.calculatePKCECodeChallenge(pending.codeVerifier),
          code_challenge_method: 'S256',
        });
        return { kind: 'redirect', location: url.href };
      } catch (err) {
        const { error, why } = idpFailure(err);
        return failed(error, why);
      }
    },

    async callback(ctx, pending, params): Promise<SignInResult> {
      try {
        const config = await configuration(ctx);
        const tokens = await client.authorizationCodeGrant(config, new URL(`${callbackUrl(ctx.host)}?${params.toString()}`), {
          pkceCodeVerifier: pending.codeVerifier,
          expectedState: pending.id,
          expectedNonce: pending.nonce,
          idTokenExpected: true,
        });
        const claims = tokens.claims();
        if (!claims) return failed(EDGE_ERRORS.idpInvalid, 'no ID token');
        let identity = identityOf(claims);
        // Some providers put the address in userinfo only.
        if (identity.email === undefined && config.serverMetadata().userinfo_endpoint)
          identity = { ...identityOf({ ...(await client.fetchUserInfo(config, tokens.access_token, claims.sub)), ...claims }), ...identity };
        return { kind: 'signed-in', identity };
      } catch (err) {
        if (err instanceof client.AuthorizationResponseError) return failed(EDGE_ERRORS.signInFailed, `provider: ${err.error}`, `(${err.error})`);
        if (err instanceof client.ResponseBodyError && err.status < 500) return failed(EDGE_ERRORS.signInFailed, `token endpoint: ${err.error}`);
        const { error, why } = idpFailure(err);
        return failed(error, why);
      }
    },
  };
}
