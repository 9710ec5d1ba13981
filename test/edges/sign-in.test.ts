// Sign-in at HTTPS edges, end to end through the public listener: a browser signs in against a
// real OpenID provider and a GitHub stand-in, and reaches the upstream with its identity; the
// sessions' cookies are refused when forged, tampered with, another route's, expired or idle;
// the providers' failures are error pages, fast; no secret reaches the logs.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import https from 'node:https';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { after, before, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { HANDOFF_TTL_MS, SignInCookies } from '../../src/edges/sign-in/session.js';
import type { SignInSettings } from '../../src/edges/sign-in/sign-in.js';
import { Sealer } from '../../src/lib/crypto/sealer.js';
import { describeEachStore, type Api } from '../helpers/harness.js';
import { Browser, type Page } from './browser.js';
import { agent, created, online, request, routesRead, upstream } from './helpers.js';
import { startGithubStandIn, startOidcIdp, type GithubStandIn, type GithubUser, type OidcIdp } from './identity-providers.js';

const OIDC_SECRET = `oidc-secret-${randomBytes(8).toString('hex')}`;
const GITHUB_SECRET = `gh-secret-${randomBytes(8).toString('hex')}`;
const SESSION = 'edgeplane.session';
const TIMEOUT_MS = 1500;

/** Edge hosts, registered with the OpenID provider up front (its clients are fixed at start); each test takes its own. */
const hosts = Array.from({ length: 60 }, () => `s${randomBytes(4).toString('hex')}.edgeplane.app`);

/** The session clock: tests move it on instead of sleeping. */
let clockOffsetMs = 0;
const signIn: SignInSettings = { now: () => Date.now() + clockOffsetMs };
let idp: OidcIdp;
let github: GithubStandIn;

before(async () => {
  idp = await startOidcIdp({
    clients: [{ client_id: 'edge-client', client_secret: OIDC_SECRET, redirect_uris: hosts.map((h) => `https://${h}/_edgeplane/sign-in/callback`) }],
    users: { alice: { email: 'alice@example.com', name: 'Alice Example' }, bob: { email: 'bob@example.org', name: 'Bob' } },
  });
  github = await startGithubStandIn({ id: 'gh-client', secret: GITHUB_SECRET });
  signIn.identityCa = idp.caPem;
  signIn.providerUrls = { github: github.url };
});

after(async () => {
  await idp?.close();
  await github?.close();
});

const ghUser = (login: string, more: Partial<GithubUser> = {}): GithubUser => ({
  id: 1000 + Math.floor(Math.random() * 1e6),
  login,
  name: `${login} (GitHub)`,
  email: `${login}@example.com`,
  organizations: [],
  teams: [],
  ...more,
});

test('the OAuth settings: providers moved to another base, the server’s own applications; a bad entry is a problem that shows no secret', () => {
  const config = loadConfig({
    oauthProviderUrls: 'github=https://github.example.com/, gitlab=http://127.0.0.1:8929',
    oauthDefaultClients: 'google=app.apps.googleusercontent.com:s3cret:with-colon',
  });
  assert.deepEqual(config.ingress.signIn, {
    providerUrls: { github: 'https://github.example.com', gitlab: 'http://127.0.0.1:8929' },
    defaultClients: { google: { clientId: 'app.apps.googleusercontent.com', clientSecret: 's3cret:with-colon' } },
  });
  assert.equal(loadConfig({}).ingress.signIn, undefined);
  assert.throws(
    () => loadConfig({ oauthProviderUrls: 'bitbucket=https://x.example', oauthDefaultClients: 'github=only-an-id-hunter2' }),
    (err: ConfigError) => {
      assert.equal(err.problems.length, 2, err.message);
      assert.match(err.message, /provider one of github, facebook/);
      assert.doesNotMatch(err.message, /hunter2/);
      return true;
    },
  );
});

test('session cookies: handoff tokens open once, for their route, in time; a session too large for a cookie drops its token, then its groups; four sign-ins at once at most', () => {
  let now = Date.now();
  const cookies = new SignInCookies(new Sealer(randomBytes(32)), () => now);
  const settings = { cookie_prefix: 'ep.', inactivity_timeout: 0, maximum_duration: 0 };
  const identity = { subject: 'u1', email: 'u1@example.com' };

  const token = cookies.sealHandoff('route-a', { method: 'saml', identity, state: 'route-a.x' });
  assert.equal(cookies.openHandoff('route-b', token), undefined, 'another route’s');
  assert.deepEqual(cookies.openHandoff('route-a', token), { method: 'saml', identity, state: 'route-a.x' });
  assert.equal(cookies.openHandoff('route-a', token), undefined, 'used once');
  const late = cookies.sealHandoff('route-a', { method: 'saml', identity });
  now += HANDOFF_TTL_MS;
  assert.equal(cookies.openHandoff('route-a', late), undefined, 'expired');

  const valueOf = (setCookie: string) => new Map([[setCookie.slice(0, setCookie.indexOf('=')), setCookie.slice(setCookie.indexOf('=') + 1).split(';')[0]!]]);
  const big = cookies.newSession('route-a', 'oauth', { ...identity, groups: Array.from({ length: 200 }, (_, i) => `group-${i}`) }, 't'.repeat(3000));
  const withGroups = cookies.readSession('route-a', settings, valueOf(cookies.sessionCookie(settings, big)));
  assert.ok(withGroups.kind === 'valid' && withGroups.session.accessToken === undefined && withGroups.session.identity.groups?.length === 200);
  const huge = cookies.newSession('route-a', 'oauth', { ...identity, groups: Array.from({ length: 400 }, (_, i) => `group-${i}`) }, 't'.repeat(3000));
  const cookie = cookies.sessionCookie(settings, huge);
  assert.ok(cookie.length < 4096, `${cookie.length} bytes`);
  const smallest = cookies.readSession('route-a', settings, valueOf(cookie));
  assert.ok(smallest.kind === 'valid' && smallest.session.identity.groups === undefined && smallest.session.identity.email === 'u1@example.com');

  let jar = new Map<string, string>();
  const started = [];
  for (let i = 0; i < 5; i++) {
    const { pending, cookie: state } = cookies.startSignIn('route-a', settings, jar, 'oidc', `/tab/${i}`);
    started.push(pending);
    jar = valueOf(state);
  }
  assert.equal(cookies.finishSignIn('route-a', settings, jar, started[0]!.id).pending, undefined, 'the oldest of five is dropped');
  assert.equal(cookies.finishSignIn('route-a', settings, jar, started[4]!.id).pending?.returnTo, '/tab/4');
  assert.equal(cookies.finishSignIn('route-b', settings, jar, started[3]!.id).pending, undefined, 'another route’s state cookie');
});

describeEachStore(
  'sign-in at HTTPS edges',
  (h) => {
    const browser = () => new Browser({ edgePort: h().agents!.httpsPort, cas: [h().agents!.caPem, idp.caPem] });
    const oidc = (more: Record<string, unknown> = {}) => ({ oidc: { issuer: idp.issuer, client_id: 'edge-client', client_secret: OIDC_SECRET, ...more } });

    /** An edge on a host of the pool with one route `/` to `port` with the sign-in `module`. */
    async function signInEdge(api: Api, module: Record<string, unknown>, port: number): Promise<{ host: string; routeId: string }> {
      const host = hosts.pop()!;
      await created(api, '/reserved_domains', { domain: host });
      const edge = await created(api, '/edges/https', { hostports: [`${host}:443`] });
      const backend = await created(api, '/backends/static', { address: `127.0.0.1:${port}`, tls: { enabled: false } });
      const route = await created(api, `/edges/https/${edge.id}/routes`, {
        match_type: 'path_prefix',
        match: '/',
        backend: { backend_id: backend.id },
        ...module,
      });
      await routesRead(h(), host, 1);
      return { host, routeId: route.id };
    }

    /** A browser's visit that the OpenID provider stops at its login page, and the login as `user`. */
    async function signInOidc(b: Browser, host: string, path: string, user: string): Promise<Page> {
      const login = await b.get(`https://${host}${path}`);
      assert.equal(login.status, 200, login.text);
      const uid = /data-uid="([^"]+)"/.exec(login.text)?.[1];
      assert.ok(uid, `the provider's login page: ${login.text.slice(0, 200)}`);
      return b.get(idp.loginUrl(uid, user));
    }

    /** A request as an API client: no HTML wanted, the given cookie. */
    const apiCall = (host: string, path: string, cookie?: string) =>
      request(h(), host, path, { headers: { accept: 'application/json', ...(cookie !== undefined && { cookie: `${SESSION}=${cookie}` }) } });

    /** The first bytes answered to a WebSocket upgrade. */
    async function upgrade(host: string, cookie?: string): Promise<string> {
      const socket = tls.connect({ host: '127.0.0.1', port: h().agents!.httpsPort, servername: host, ca: h().agents!.caPem });
      await once(socket, 'secureConnect');
      socket.write(
        `GET /ws HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n` +
          `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\n${cookie ? `Cookie: ${SESSION}=${cookie}\r\n` : ''}\r\n`,
      );
      const chunks: Buffer[] = [];
      socket.on('data', (c: Buffer) => chunks.push(c));
      await once(socket, 'close');
      return Buffer.concat(chunks).toString();
    }

    test('OIDC: a browser is sent to the provider, signs in, and reaches the upstream with its identity; API clients and upgrades without a session get 401', async () => {
      const api = await h().newAccount();
      const up = await upstream('app');
      try {
        const { host } = await signInEdge(api, oidc(), up.port);

        const refused = await apiCall(host, '/data');
        assert.equal(refused.status, 401);
        assert.equal(refused.headers['ngrok-error-code'], 'ERR_EP_INGRESS_720');
        assert.match(await upgrade(host), /^HTTP\/1\.1 401 /);
        assert.equal(up.received.length, 0, 'nothing reached the upstream');

        const b = browser();
        const page = await signInOidc(b, host, '/app/page?x=1', 'alice');
        assert.equal(page.status, 200, page.text);
        assert.equal(page.text, 'app /app/page?x=1', 'back where the browser began');
        assert.ok(
          page.visited.some((u) => u.startsWith(`https://${host}/_edgeplane/sign-in/callback?`)),
          'through the edge host’s callback',
        );
        const seen = up.received.at(-1)!;
        assert.equal(seen.headers['ngrok-auth-user-email'], 'alice@example.com');
        assert.equal(seen.headers['ngrok-auth-user-id'], 'alice');
        assert.equal(seen.headers['ngrok-auth-user-name'], 'Alice Example');
        assert.ok(!String(seen.headers.cookie ?? '').includes(SESSION), 'the session cookie stays at the edge');

        const cookie = b.cookie(host, SESSION)!;
        assert.ok(cookie, 'a session cookie');
        const spoofed = await request(h(), host, '/again', {
          headers: { cookie: `${SESSION}=${cookie}; theirs=1`, 'ngrok-auth-user-email': 'mallory@evil.test', 'ngrok-auth-user-id': 'root' },
        });
        assert.equal(spoofed.status, 200);
        const last = up.received.at(-1)!;
        assert.equal(last.headers['ngrok-auth-user-email'], 'alice@example.com', 'the client’s identity headers are dropped');
        assert.equal(last.headers['ngrok-auth-user-id'], 'alice');
        assert.equal(last.headers.cookie, 'theirs=1', 'the upstream’s own cookies go on');
        // With the session an upgrade passes the gate (a static address takes no upgrade: 502, not 401).
        assert.match(await upgrade(host, cookie), /^HTTP\/1\.1 502 /);
      } finally {
        await up.close();
      }
    });

    test('a cookie is refused on another route, tampered with, or forged; a used state is refused (no replay)', async () => {
      const api = await h().newAccount();
      const up = await upstream('app');
      try {
        const a = await signInEdge(api, oidc(), up.port);
        const other = await signInEdge(api, oidc(), up.port);
        const b = browser();
        assert.equal((await signInOidc(b, a.host, '/', 'alice')).status, 200);
        const cookie = b.cookie(a.host, SESSION)!;
        assert.equal((await apiCall(a.host, '/', cookie)).status, 200);

        assert.equal((await apiCall(other.host, '/', cookie)).status, 401, 'route A’s cookie on route B');
        const flipped = cookie.slice(0, 20) + (cookie[20] === 'A' ? 'B' : 'A') + cookie.slice(21);
        assert.equal((await apiCall(a.host, '/', flipped)).status, 401, 'tampered');
        assert.equal((await apiCall(a.host, '/', `v1.${randomBytes(80).toString('base64url')}`)).status, 401, 'forged');
        const refusals = h().logs.filter((l) => l.msg === 'edge: session cookie refused' && l.why === 'invalid');
        assert.ok(refusals.length >= 3);

        // The callback, caught on its way: used once it signs in, used again it is refused.
        const fresh = browser();
        const login = await fresh.get(`https://${a.host}/`);
        const uid = /data-uid="([^"]+)"/.exec(login.text)![1]!;
        const stateCookie = fresh.cookie(a.host, 'edgeplane.sign-in');
        assert.ok(stateCookie, 'the sign-in cookie, named with the default cookie_prefix');
        const toCallback = await fresh.get(idp.loginUrl(uid, 'alice'), { stopAt: /\/_edgeplane\/sign-in\/callback/ });
        const callback = new URL(toCallback.headers.location!, toCallback.url).href;
        assert.equal((await fresh.get(callback)).status, 200);
        const replay = browser();
        replay.setCookie(a.host, 'edgeplane.sign-in', stateCookie);
        const replayed = await replay.get(callback, { follow: false });
        assert.equal(replayed.status, 400, replayed.text);
        assert.equal(replayed.headers['ngrok-error-code'], 'ERR_EP_INGRESS_722');
        assert.equal(replay.cookie(a.host, SESSION), undefined, 'no session from a replay');
        const forgedState = await replay.get(`https://${a.host}/_edgeplane/sign-in/callback?code=x&state=${a.routeId}.nope`, { follow: false });
        assert.equal(forgedState.status, 400);
      } finally {
        await up.close();
      }
    });

    test('maximum_duration and inactivity_timeout end sessions by the session clock', async () => {
      const api = await h().newAccount();
      const up = await upstream('app');
      try {
        const capped = await signInEdge(api, oidc({ maximum_duration: 3600 }), up.port);
        const idle = await signInEdge(api, oidc({ inactivity_timeout: 600 }), up.port);
        const b = browser();
        assert.equal((await signInOidc(b, capped.host, '/', 'alice')).status, 200);
        // Signed in at the provider already: the second route's sign-in needs no login.
        assert.equal((await b.get(`https://${idle.host}/`)).status, 200);
        try {
          clockOffsetMs = 3599_000;
          assert.equal((await apiCall(capped.host, '/', b.cookie(capped.host, SESSION))).status, 200);
          clockOffsetMs = 3601_000;
          assert.equal((await apiCall(capped.host, '/', b.cookie(capped.host, SESSION))).status, 401, 'past maximum_duration');
          assert.ok(h().logs.some((l) => l.msg === 'edge: session cookie refused' && l.why === 'expired'));

          // Each request moves the last-seen time on (a new cookie): active use keeps the session.
          for (const at of [300, 600, 900]) {
            clockOffsetMs = at * 1000;
            const page = await b.get(`https://${idle.host}/`);
            assert.equal(page.status, 200);
            assert.ok(page.visited.length === 1, `at ${at} s: no new sign-in`);
          }
          clockOffsetMs = 1502_000;
          assert.equal((await apiCall(idle.host, '/', b.cookie(idle.host, SESSION))).status, 401, 'idle past inactivity_timeout');
          assert.ok(h().logs.some((l) => l.msg === 'edge: session cookie refused' && l.why === 'inactive'));
        } finally {
          clockOffsetMs = 0;
        }
      } finally {
        await up.close();
      }
    });

    test('options_passthrough lets OPTIONS through without a session', async () => {
      const api = await h().newAccount();
      const up = await upstream('app');
      try {
        const open = await signInEdge(api, oidc({ options_passthrough: true }), up.port);
        const closed = await signInEdge(api, oidc(), up.port);
        const preflight = { method: 'OPTIONS', headers: { origin: 'https://web.example', 'access-control-request-method': 'PUT' } };
        assert.equal((await request(h(), open.host, '/api', preflight)).status, 200);
        assert.equal(up.received.at(-1)?.headers['ngrok-auth-user-id'], undefined);
        assert.equal((await request(h(), closed.host, '/api', preflight)).status, 401);
        assert.equal((await request(h(), open.host, '/api', { headers: { accept: 'application/json' } })).status, 401, 'other methods still sign in');
      } finally {
        await up.close();
      }
    });

    test('the identity provider down, silent or answering garbage: an error page within the timeout, and no session', async () => {
      const api = await h().newAccount();
      const closedPort = await new Promise<number>((resolve) => {
        const s = net.createServer().listen(0, '127.0.0.1', () => {
          const port = (s.address() as AddressInfo).port;
          s.close(() => resolve(port));
        });
      });
      const silent = net.createServer(() => {}).listen(0, '127.0.0.1');
      const garbage = https.createServer(idp.tls, (_req, res) => res.end('<html>not a discovery document')).listen(0, '127.0.0.1');
      await Promise.all([once(silent, 'listening'), once(garbage, 'listening')]);
      try {
        const cases: [string, number, string][] = [
          [`https://127.0.0.1:${closedPort}`, 502, 'ERR_EP_INGRESS_723'],
          [`https://127.0.0.1:${(silent.address() as AddressInfo).port}`, 504, 'ERR_EP_INGRESS_724'],
          [`https://127.0.0.1:${(garbage.address() as AddressInfo).port}`, 502, 'ERR_EP_INGRESS_725'],
        ];
        for (const [issuer, status, code] of cases) {
          const { host } = await signInEdge(api, oidc({ issuer }), 1);
          const b = browser();
          const started = performance.now();
          const page = await b.get(`https://${host}/`);
          const took = performance.now() - started;
          assert.equal(page.status, status, `${issuer}: ${page.text}`);
          assert.equal(page.headers['ngrok-error-code'], code);
          assert.match(String(page.headers['content-type']), /text\/html/);
          assert.ok(took < TIMEOUT_MS + 1000, `${issuer}: answered in ${Math.round(took)} ms`);
          assert.deepEqual([...(b.jar.get(host)?.keys() ?? [])], [], 'no session, no state');
        }
      } finally {
        silent.close();
        garbage.closeAllConnections();
        garbage.close();
      }
    });

    test('OAuth (GitHub stand-in): organization and team members pass; others, and addresses not listed, are refused; the auth check ends a session', async () => {
      const api = await h().newAccount();
      const up = await upstream('app');
      try {
        const github_ = (lists: Record<string, unknown>, more: Record<string, unknown> = {}) => ({
          oauth: { provider: { github: { client_id: 'gh-client', client_secret: GITHUB_SECRET, ...lists } }, ...more },
        });
        const orgs = await signInEdge(api, github_({ organizations: ['Acme'], teams: ['other/devs'] }, { auth_check_interval: 60 }), up.port);
        const emails = await signInEdge(api, github_({ email_addresses: ['allowed@example.com'] }), up.port);

        const member = ghUser('ann', { organizations: ['acme'] });
        github.signInAs(member);
        const b = browser();
        const page = await b.get(`https://${orgs.host}/repo`);
        assert.equal(page.status, 200, page.text);
        assert.equal(page.text, 'app /repo');
        assert.equal(up.received.at(-1)!.headers['ngrok-auth-user-email'], 'ann@example.com');
        assert.equal(up.received.at(-1)!.headers['ngrok-auth-user-id'], String(member.id));

        github.signInAs(ghUser('dev', { teams: ['other/devs'] }));
        assert.equal((await browser().get(`https://${orgs.host}/`)).status, 200, 'a member of a listed team');

        github.signInAs(ghUser('outsider', { organizations: ['elsewhere'] }));
        const outsider = browser();
        const refused = await outsider.get(`https://${orgs.host}/`);
        assert.equal(refused.status, 403);
        assert.equal(refused.headers['ngrok-error-code'], 'ERR_EP_INGRESS_721');
        assert.equal(outsider.cookie(orgs.host, SESSION), undefined);

        github.signInAs(ghUser('bob'));
        const wrong = await browser().get(`https://${emails.host}/`);
        assert.equal(wrong.status, 403, 'an address not listed');
        github.signInAs(ghUser('allowed'));
        assert.equal((await browser().get(`https://${emails.host}/`)).status, 200, 'the address listed');

        // auth_check_interval: once it is due, GitHub is asked again; out of the organization, the session ends.
        const cookie = b.cookie(orgs.host, SESSION)!;
        try {
          clockOffsetMs = 30_000;
          assert.equal((await apiCall(orgs.host, '/', cookie)).status, 200);
          member.organizations = [];
          clockOffsetMs = 61_000;
          const ended = await apiCall(orgs.host, '/', cookie);
          assert.equal(ended.status, 403);
          assert.match(String(ended.headers['set-cookie']), /edgeplane\.session=;.*Max-Age=0/);
        } finally {
          clockOffsetMs = 0;
        }
      } finally {
        await up.close();
      }
    });

    test('an agent endpoint binding OAuth and IP options (the real agent SDK) is protected as configured', async () => {
      const api = await h().newAccount();
      const up = await upstream('agent-app');
      const session = await agent(h(), api);
      try {
        const [open, blocked] = [hosts.pop()!, hosts.pop()!];
        for (const host of [open, blocked]) await created(api, '/reserved_domains', { domain: host });
        const oauthEndpoint = () => session.httpEndpoint().oauth('github', ['ann@example.com'], null, null, 'gh-client', GITHUB_SECRET);
        await online(h(), await oauthEndpoint().domain(open).allowCidr('127.0.0.1/32').listenAndForward(`http://127.0.0.1:${up.port}`));
        await online(h(), await oauthEndpoint().domain(blocked).denyCidr('127.0.0.0/8').listenAndForward(`http://127.0.0.1:${up.port}`));

        github.signInAs(ghUser('ann'));
        const page = await browser().get(`https://${open}/private?x=1`);
        assert.equal(page.status, 200, page.text);
        assert.equal(page.text, 'agent-app /private?x=1');
        assert.equal(up.received.at(-1)!.headers['ngrok-auth-user-email'], 'ann@example.com');

        const noSession = await request(h(), open, '/private', { headers: { accept: 'application/json' } });
        assert.equal(noSession.status, 401);
        assert.equal(noSession.headers['ngrok-error-code'], 'ERR_EP_INGRESS_720');
        github.signInAs(ghUser('eve'));
        const eve = await browser().get(`https://${open}/private`);
        assert.equal(eve.status, 403, 'an address the agent did not allow');
        assert.equal(eve.headers['ngrok-error-code'], 'ERR_EP_INGRESS_721');

        const refused = await browser().get(`https://${blocked}/`);
        assert.equal(refused.status, 403, 'the agent denied this address: refused before any sign-in');
        assert.equal(refused.headers['ngrok-error-code'], 'ERR_EP_INGRESS_702');
        assert.deepEqual(refused.visited, [`https://${blocked}/`]);
        assert.equal(up.received.length, 1, 'only the signed-in, allowed request reached the agent');
      } finally {
        await session.close();
        await up.close();
      }
    });

    test('OAuth without a client_id needs the server’s own application: none here, a clear error page', async () => {
      const api = await h().newAccount();
      const { host } = await signInEdge(api, { oauth: { provider: { github: {} } } }, 1);
      const page = await browser().get(`https://${host}/`);
      assert.equal(page.status, 501);
      assert.equal(page.headers['ngrok-error-code'], 'ERR_EP_INGRESS_726');
      assert.match(page.text, /own OAuth application/);
    });

    test('no secret reaches the logs: client secrets, access tokens, cookies', () => {
      const logs = JSON.stringify(h().logs);
      for (const secret of [OIDC_SECRET, GITHUB_SECRET, ...github.tokens]) assert.ok(!logs.includes(secret), 'a secret in the logs');
      assert.ok(!/v1\.[A-Za-z0-9_-]{40,}/.test(logs), 'a sealed cookie in the logs');
      assert.ok(
        h().logs.some((l) => l.msg === 'edge: signed in'),
        'sign-ins are logged',
      );
    });
  },
  { agents: { heartbeatIntervalMs: 1000 }, edgeTuning: { identityProviderTimeoutMs: TIMEOUT_MS }, signIn, acrossInstances: true },
);
