// The identity providers the sign-in tests sign in against: a real OpenID provider (oidc-provider,
// over HTTPS with a test CA, with a login the test drives by URL), and a stand-in for GitHub's
// OAuth and REST API (node:http) with users, organizations and teams the test sets.
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import { makeChain } from '../helpers/certs.js';

export interface OidcUser {
  email: string;
  name: string;
}

export interface OidcIdp {
  issuer: string;
  caPem: string;
  /** The provider's certificate and key, for other test servers the edge is to trust. */
  tls: { cert: string; key: string };
  /** Where a browser sent to log in signs in as `user` (`uid` from the interaction URL). */
  loginUrl(uid: string, user: string): string;
  close(): Promise<void>;
}

/**
 * An OpenID provider. Its interaction is the test's: the login page answers 200 naming the
 * interaction, `/interaction/<uid>/login?user=<id>` signs that user in, and consent is given at once.
 */
export async function startOidcIdp(options: {
  clients: { client_id: string; client_secret: string; redirect_uris: string[] }[];
  users: Record<string, OidcUser>;
}): Promise<OidcIdp> {
  const chain = await makeChain({ names: ['localhost'], ips: ['127.0.0.1'] });
  let handle: (req: http.IncomingMessage, res: http.ServerResponse) => void = () => {};
  const server = https.createServer({ cert: chain.chainPem, key: chain.leaf.keyPem }, (req, res) => handle(req, res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const issuer = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const provider = new Provider(issuer, {
    clients: options.clients,
    findAccount: (_ctx: unknown, id: string) => {
      const user = options.users[id];
      return user && { accountId: id, claims: () => ({ sub: id, email: user.email, email_verified: true, name: user.name }) };
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    features: { devInteractions: { enabled: false } },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    jwks: { keys: [{ ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig' }] },
  });
  const serve = provider.callback();
  handle = (req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    const login = /^\/interaction\/([^/]+)\/login$/.exec(url.pathname);
    const page = /^\/interaction\/([^/]+)$/.exec(url.pathname);
    const work = async () => {
      if (login) {
        await provider.interactionFinished(req, res, { login: { accountId: url.searchParams.get('user') ?? '' } }, { mergeWithLastSubmission: false });
      } else if (page) {
        const details = await provider.interactionDetails(req, res);
        if (details.prompt.name === 'login') {
          res.writeHead(200, { 'content-type': 'text/html' });
          return void res.end(`<!DOCTYPE html><title>log in</title><p data-uid="${details.uid}">log in</p>`);
        }
        const grant = details.grantId
          ? await provider.Grant.find(details.grantId)
          : new provider.Grant({ accountId: details.session!.accountId, clientId: details.params.client_id });
        if (details.prompt.details.missingOIDCScope) grant!.addOIDCScope(details.prompt.details.missingOIDCScope.join(' '));
        if (details.prompt.details.missingOIDCClaims) grant!.addOIDCClaims(details.prompt.details.missingOIDCClaims);
        await provider.interactionFinished(req, res, { consent: { grantId: await grant!.save() } }, { mergeWithLastSubmission: true });
      } else serve(req, res);
    };
    work().catch((err: unknown) => {
      res.writeHead(500);
      res.end(String(err));
    });
  };
  return {
    issuer,
    caPem: chain.root.certPem,
    tls: { cert: chain.chainPem, key: chain.leaf.keyPem },
    loginUrl: (uid, user) => `${issuer}/interaction/${uid}/login?user=${encodeURIComponent(user)}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface GithubUser {
  id: number;
  login: string;
  name: string;
  email: string;
  organizations: string[];
  /** `organization/team-slug` */
  teams: string[];
}

export interface GithubStandIn {
  url: string;
  /** Who the next authorization signs in. */
  signInAs(user: GithubUser): void;
  /** Access tokens issued so far (none may show in a log). */
  tokens: string[];
  /** Tokens revoked: the API answers 401 to them. */
  revoked: Set<string>;
  close(): Promise<void>;
}

/** GitHub's OAuth endpoints and the REST API calls sign-in makes, under the paths GitHub Enterprise Server uses. */
export async function startGithubStandIn(client: { id: string; secret: string }): Promise<GithubStandIn> {
  let next: GithubUser | undefined;
  const codes = new Map<string, { user: GithubUser; challenge: string; redirectUri: string }>();
  const byToken = new Map<string, GithubUser>();
  const tokens: string[] = [];
  const revoked = new Set<string>();
  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (url.pathname === '/login/oauth/authorize') {
        if (!next || url.searchParams.get('client_id') !== client.id || url.searchParams.get('code_challenge_method') !== 'S256')
          return json(res, 400, { error: 'bad request' });
        const code = randomBytes(16).toString('hex');
        const redirectUri = url.searchParams.get('redirect_uri')!;
        codes.set(code, { user: next, challenge: url.searchParams.get('code_challenge')!, redirectUri });
        const back = new URL(redirectUri);
        back.searchParams.set('code', code);
        back.searchParams.set('state', url.searchParams.get('state') ?? '');
        res.writeHead(302, { location: back.href });
        return void res.end();
      }
      if (url.pathname === '/login/oauth/access_token' && req.method === 'POST') {
        const form = new URLSearchParams(Buffer.concat(chunks).toString());
        const grant = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        const verifier = form.get('code_verifier') ?? '';
        if (form.get('client_id') !== client.id || form.get('client_secret') !== client.secret) return json(res, 401, { error: 'invalid_client' });
        if (!grant || createHash('sha256').update(verifier).digest('base64url') !== grant.challenge || form.get('redirect_uri') !== grant.redirectUri)
          return json(res, 400, { error: 'invalid_grant' });
        const token = `gho_${randomBytes(16).toString('hex')}`;
        tokens.push(token);
        byToken.set(token, grant.user);
        return json(res, 200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email,read:org' });
      }
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
      const user = revoked.has(token) ? undefined : byToken.get(token);
      if (!user) return json(res, 401, { message: 'Bad credentials' });
      switch (url.pathname) {
        case '/api/v3/user':
          return json(res, 200, { id: user.id, login: user.login, name: user.name });
        case '/api/v3/user/emails':
          return json(res, 200, [{ email: user.email, primary: true, verified: true }]);
        case '/api/v3/user/orgs':
          return json(
            res,
            200,
            user.organizations.map((login) => ({ login })),
          );
        case '/api/v3/user/teams':
          return json(
            res,
            200,
            user.teams.map((t) => ({ slug: t.split('/')[1], organization: { login: t.split('/')[0] } })),
          );
        default:
          return json(res, 404, { message: 'Not Found' });
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    signInAs: (user) => {
      next = user;
    },
    tokens,
    revoked,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
