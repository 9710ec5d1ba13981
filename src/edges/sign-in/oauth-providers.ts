// The OAuth providers of the `oauth` module, by their documented endpoints, and how each tells
// who a token belongs to. An operator setting (EDGEPLANE_OAUTH_PROVIDER_URLS) moves a provider
// to another host — GitHub Enterprise Server, a self-hosted GitLab, or a test's stand-in: each
// endpoint keeps its path under the new base (GitHub's API goes to `<base>/api/v3`, as on
// GitHub Enterprise Server).
import type { OAuthProvider } from '../../core/oauth-providers.js';
import type { Identity } from './session.js';

/** A user as a provider describes them: the identity, and GitHub's organizations and teams. */
export interface ProviderUser extends Identity {
  /** GitHub organizations' logins, lower case. */
  organizations?: string[];
  /** GitHub teams as `organization/team-slug`, lower case. */
  teams?: string[];
}

/** Reads a provider's JSON resource with the user's token (a 401 or 403 ends the session: see oauth.ts). */
export type ProviderGet = (url: string, headers?: Record<string, string>) => Promise<unknown>;

export interface OAuthProviderSpec {
  /** Names the provider in openid-client's server metadata. */
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  /** Asked for when the module names no scopes. */
  defaultScopes: string[];
  /** More scopes asked for when the module lists GitHub organizations or teams. */
  membershipScopes?: string[];
  /** Who the access token belongs to. `lists`: whether memberships are needed (GitHub). */
  identify(get: ProviderGet, clientId: string, lists: boolean): Promise<ProviderUser>;
}

const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);
const id = (value: unknown): string | undefined => (typeof value === 'number' ? String(value) : str(value));
const obj = (value: unknown): Record<string, unknown> => (value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {});

/** A user from the provider's fields, or an error naming what is missing (a provider answering garbage). */
function user(fields: { subject: unknown; email?: unknown; name?: unknown }, provider: string): ProviderUser {
  const subject = id(fields.subject);
  if (subject === undefined) throw new Error(`${provider} did not name the user`);
  const email = str(fields.email);
  const name = str(fields.name);
  return { subject, ...(email !== undefined && { email }), ...(name !== undefined && { name }) };
}

/** `url` moved under `base` (its origin and path prefix), when a base is set. */
function rebase(url: string, base: string | undefined): string {
  if (base === undefined) return url;
  const from = new URL(url);
  return `${base.replace(/\/+$/, '')}${from.pathname}${from.search}`;
}

async function githubUser(api: string, get: ProviderGet, lists: boolean): Promise<ProviderUser> {
  const headers = { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' };
  const profile = obj(await get(`${api}/user`, headers));
  const emails = await get(`${api}/user/emails?per_page=100`, headers);
  // The primary address, and only once verified: an unverified one proves nothing.
  const primary = Array.isArray(emails) ? emails.map(obj).find((e) => e.primary === true && e.verified === true) : undefined;
  const found = user({ subject: profile.id, email: primary?.email, name: profile.name ?? profile.login }, 'GitHub');
  if (!lists) return found;
  const [orgs, teams] = await Promise.all([get(`${api}/user/orgs?per_page=100`, headers), get(`${api}/user/teams?per_page=100`, headers)]);
  return {
    ...found,
    organizations: (Array.isArray(orgs) ? orgs : []).flatMap((o) => str(obj(o).login)?.toLowerCase() ?? []),
    teams: (Array.isArray(teams) ? teams : []).flatMap((t) => {
      const team = obj(t);
      const org = str(obj(team.organization).login);
      const slug = str(team.slug);
      return org && slug ? [`${org}/${slug}`.toLowerCase()] : [];
    }),
  };
}

/** The table: each provider's documented endpoints, moved under `base` when the operator set one. */
export function oauthProvider(name: OAuthProvider, base?: string): OAuthProviderSpec {
  const at = (url: string) => rebase(url, base);
  switch (name) {
    case 'github': {
      // GitHub Enterprise Server serves its REST API under /api/v3 of its own host.
      const api = base === undefined ? 'https://api.github.com' : `${base.replace(/\/+$/, '')}/api/v3`;
      return {
        issuer: base ?? 'https://github.com',
        authorizationEndpoint: at('https://github.com/login/oauth/authorize'),
        tokenEndpoint: at('https://github.com/login/oauth/access_token'),
        defaultScopes: ['read:user', 'user:email'],
        membershipScopes: ['read:org'],
        identify: (get, _clientId, lists) => githubUser(api, get, lists),
      };
    }
    case 'gitlab':
      return {
        issuer: base ?? 'https://gitlab.com',
        authorizationEndpoint: at('https://gitlab.com/oauth/authorize'),
        tokenEndpoint: at('https://gitlab.com/oauth/token'),
        defaultScopes: ['read_user'],
        identify: async (get) => {
          const u = obj(await get(at('https://gitlab.com/api/v4/user')));
          return user({ subject: u.id, email: u.email, name: u.name ?? u.username }, 'GitLab');
        },
      };
    case 'google':
      return {
        issuer: base ?? 'https://accounts.google.com',
        authorizationEndpoint: at('https://accounts.google.com/o/oauth2/v2/auth'),
        tokenEndpoint: at('https://oauth2.googleapis.com/token'),
        // Not `openid`: with it Google adds an ID token, which the `oidc` module is for.
        defaultScopes: ['https://www.googleapis.com/auth/userinfo.email', 'https://www.googleapis.com/auth/userinfo.profile'],
        identify: async (get) => {
          const u = obj(await get(at('https://www.googleapis.com/oauth2/v3/userinfo')));
          return user({ subject: u.sub, email: u.email_verified === false ? undefined : u.email, name: u.name }, 'Google');
        },
      };
    case 'microsoft':
      return {
        issuer: base ?? 'https://login.microsoftonline.com/common/v2.0',
        authorizationEndpoint: at('https://login.microsoftonline.com/common/oauth2/v2.0/authorize'),
        tokenEndpoint: at('https://login.microsoftonline.com/common/oauth2/v2.0/token'),
        defaultScopes: ['User.Read'],
        identify: async (get) => {
          const u = obj(await get(at('https://graph.microsoft.com/v1.0/me')));
          return user({ subject: u.id, email: u.mail ?? u.userPrincipalName, name: u.displayName }, 'Microsoft');
        },
      };
    case 'facebook':
      return {
        issuer: base ?? 'https://www.facebook.com',
        authorizationEndpoint: at('https://www.facebook.com/v19.0/dialog/oauth'),
        tokenEndpoint: at('https://graph.facebook.com/v19.0/oauth/access_token'),
        defaultScopes: ['email', 'public_profile'],
        identify: async (get) => {
          const u = obj(await get(at('https://graph.facebook.com/v19.0/me?fields=id,name,email')));
          return user({ subject: u.id, email: u.email, name: u.name }, 'Facebook');
        },
      };
    case 'linkedin':
      return {
        issuer: base ?? 'https://www.linkedin.com/oauth',
        authorizationEndpoint: at('https://www.linkedin.com/oauth/v2/authorization'),
        tokenEndpoint: at('https://www.linkedin.com/oauth/v2/accessToken'),
        // LinkedIn signs users in through its OpenID Connect product only; its userinfo names them.
        defaultScopes: ['profile', 'email'],
        identify: async (get) => {
          const u = obj(await get(at('https://api.linkedin.com/v2/userinfo')));
          return user({ subject: u.sub, email: u.email, name: u.name }, 'LinkedIn');
        },
      };
    case 'twitch':
      return {
        issuer: base ?? 'https://id.twitch.tv/oauth2',
        authorizationEndpoint: at('https://id.twitch.tv/oauth2/authorize'),
        tokenEndpoint: at('https://id.twitch.tv/oauth2/token'),
        defaultScopes: ['user:read:email'],
        identify: async (get, clientId) => {
          // Helix wants the application's id beside the user's token.
          const answer = obj(await get(at('https://api.twitch.tv/helix/users'), { 'client-id': clientId }));
          const u = obj(Array.isArray(answer.data) ? answer.data[0] : undefined);
          return user({ subject: u.id, email: u.email, name: u.display_name ?? u.login }, 'Twitch');
        },
      };
    case 'amazon':
      return {
        issuer: base ?? 'https://www.amazon.com',
        authorizationEndpoint: at('https://www.amazon.com/ap/oa'),
        tokenEndpoint: at('https://api.amazon.com/auth/o2/token'),
        defaultScopes: ['profile'],
        identify: async (get) => {
          const u = obj(await get(at('https://api.amazon.com/user/profile')));
          return user({ subject: u.user_id, email: u.email, name: u.name }, 'Amazon');
        },
      };
  }
}
