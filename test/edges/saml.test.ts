// SAML sign-in at HTTPS edges, end to end: a browser-like client (a cookie jar per host, following
// redirects, submitting the identity provider's auto-posting form) goes through the public HTTPS
// listener, a real samlify identity provider on a local port run by the test, the ACS on the API
// host and the edge host's handoff, and reaches the upstream; and the refusals: a user outside
// authorized_groups, an altered response, a replayed response or handoff, an IdP-initiated
// sign-in the module does not allow. The service provider's metadata is read by the IdP from the
// API, as a real one would be.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, webcrypto } from 'node:crypto';
import { after, before, test } from 'node:test';
import samlify from 'samlify';
import { configureSamlify } from '../../src/edges/sign-in/saml-protocol.js';
import { x509 } from '../../src/lib/crypto/x509.js';
import { describeEachStore, type Api } from '../helpers/harness.js';
import { Browser, parseForm, type Page, type PostedForm } from './browser.js';
import { created, edgeWithRoute, request, routesRead, upstream } from './helpers.js';

const { Constants, SamlLib } = samlify;
const PERSISTENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent';

/** A self-signed RSA certificate and its key (PKCS#8 PEM), for the identity provider. */
async function rsaCertificate(commonName: string): Promise<{ cert: string; key: string }> {
  const algorithm = { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' } as const;
  const keys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as unknown as CryptoKeyPair;
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: `CN=${commonName}`,
    notBefore: new Date(Date.now() - 86_400_000),
    notAfter: new Date(Date.now() + 86_400_000),
    signingAlgorithm: algorithm,
    keys,
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey as webcrypto.CryptoKey));
  return { cert: certificate.toString('pem'), key: x509.PemConverter.encode(pkcs8, 'PRIVATE KEY') };
}

interface IdpUser {
  nameId: string;
  email: string;
  groups: string[];
}

const ATTRIBUTES = [
  { name: 'email', valueTag: 'email', nameFormat: 'urn:oasis:names:tc:SAML:2.0:attrname-format:basic', valueXsiType: 'xs:string' },
  { name: 'displayName', valueTag: 'displayName', nameFormat: 'urn:oasis:names:tc:SAML:2.0:attrname-format:basic', valueXsiType: 'xs:string' },
  { name: 'groups', valueTag: 'groups', nameFormat: 'urn:oasis:names:tc:SAML:2.0:attrname-format:basic', valueXsiType: 'xs:string' },
];

/**
 * A SAML identity provider on a local port: its SSO address (HTTP-Redirect) reads the AuthnRequest
 * with samlify, checks its signature, and answers a page whose form posts a signed response to
 * the ACS, for `user`. It knows the service provider from the metadata the API serves.
 */
class TestIdp {
  user: IdpUser = { nameId: 'user-1', email: 'ada@example.com', groups: ['eng'] };
  private sp: ReturnType<typeof samlify.ServiceProvider> | undefined;
  private readonly server: http.Server;
  private entity!: ReturnType<typeof samlify.IdentityProvider>;
  /** The AuthnRequests received, as samlify read them. */
  readonly requests: { id: string; forceAuthn: boolean; signed: boolean }[] = [];

  constructor(
    private readonly keys: { cert: string; key: string },
    private readonly wantsSignedRequests = true,
  ) {
    this.server = http.createServer((req, res) => {
      this.sso(req)
        .then((page) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page))
        .catch((err: Error) => res.writeHead(400, { 'content-type': 'text/plain' }).end(`idp: ${err.message}`));
    });
  }

  async start(): Promise<void> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    const port = (this.server.address() as AddressInfo).port;
    this.entity = samlify.IdentityProvider({
      entityID: `http://127.0.0.1:${port}/metadata`,
      privateKey: this.keys.key,
      signingCert: this.keys.cert,
      wantAuthnRequestsSigned: this.wantsSignedRequests,
      nameIDFormat: [PERSISTENT],
      singleSignOnService: [{ Binding: Constants.namespace.binding.redirect, Location: `http://127.0.0.1:${port}/sso` }],
      singleLogoutService: [{ Binding: Constants.namespace.binding.redirect, Location: `http://127.0.0.1:${port}/slo` }],
      loginResponseTemplate: {
        context: (SamlLib.defaultLoginResponseTemplate.context as string).replace('{AttributeStatement}', SamlLib.attributeStatementBuilder(ATTRIBUTES)),
        attributes: ATTRIBUTES,
      } as never,
    });
  }

  metadata(): string {
    return this.entity.getMetadata();
  }

  /** The service provider, from the metadata its module's metadata_url serves. */
  trust(spMetadata: string): void {
    this.sp = samlify.ServiceProvider({ metadata: spMetadata });
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async sso(req: http.IncomingMessage): Promise<string> {
    const url = new URL(req.url!, 'http://idp');
    const octetString = url.search
      .slice(1)
      .split('&')
      .filter((p) => !p.startsWith('Signature='))
      .join('&');
    const parsed = await this.entity.parseLoginRequest(this.sp!, 'redirect', { query: Object.fromEntries(url.searchParams), octetString });
    const id = parsed.extract.request!.id as string;
    this.requests.push({ id, forceAuthn: /ForceAuthn="true"/.test(parsed.samlContent), signed: url.searchParams.has('Signature') });
    const form = await this.response(id, url.searchParams.get('RelayState') ?? undefined);
    return `<!DOCTYPE html><html><body onload="document.forms[0].submit()"><form method="post" action="${form.action}">${Object.entries(form.fields)
      .map(([name, value]) => `<input type="hidden" name="${name}" value="${value}">`)
      .join('')}</form></body></html>`;
  }

  /** A signed login response for `user`, answering `inResponseTo` (none: one the IdP starts); `fields` replace the template's values. */
  async response(inResponseTo: string | undefined, relayState?: string, fields: Record<string, string> = {}, user = this.user): Promise<PostedForm> {
    const acs = this.sp!.entityMeta.getAssertionConsumerService('post') as string;
    const audience = this.sp!.entityMeta.getEntityID();
    const issuer = this.entity.entityMeta.getEntityID();
    const made = (await this.entity.createLoginResponse(
      this.sp!,
      { extract: { request: { id: inResponseTo ?? '' } } },
      'post',
      { email: user.email },
      {
        ...(relayState !== undefined && { relayState }),
        customTagReplacement: (withTags: string) => {
          // One AttributeValue per group, as identity providers send a multi-valued attribute.
          const template = withTags.replace(/<saml:AttributeValue([^>]*)>\{attrGroups\}<\/saml:AttributeValue>/, (_all, attributes: string) =>
            user.groups.map((g) => `<saml:AttributeValue${attributes}>${g}</saml:AttributeValue>`).join(''),
          );
          const now = new Date();
          const later = new Date(now.getTime() + 5 * 60_000).toISOString();
          const id = `_${randomBytes(16).toString('hex')}`;
          const context = SamlLib.replaceTagsByValue(template, {
            ID: id,
            AssertionID: `_${randomBytes(16).toString('hex')}`,
            Destination: acs,
            Audience: audience,
            SubjectRecipient: acs,
            Issuer: issuer,
            IssueInstant: now.toISOString(),
            StatusCode: Constants.StatusCode.Success,
            ConditionsNotBefore: now.toISOString(),
            ConditionsNotOnOrAfter: later,
            SubjectConfirmationDataNotOnOrAfter: later,
            NameIDFormat: PERSISTENT,
            NameID: user.nameId,
            InResponseTo: inResponseTo,
            AuthnStatement: '',
            attrEmail: user.email,
            attrDisplayName: `${user.nameId} (display)`,
            ...fields,
          });
          return { id, context };
        },
      },
    )) as { context: string; entityEndpoint: string; relayState?: string };
    return { action: made.entityEndpoint, fields: { SAMLResponse: made.context, ...(made.relayState !== undefined && { RelayState: made.relayState }) } };
  }
}

/** A request straight to an http:// address (the API, the IdP), outside the browser. */
function plainRequest(url: URL, method: string, headers: Record<string, string>, body?: string): Promise<Omit<Page, 'visited'>> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ url: url.toString(), status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The SAMLResponse's XML with `from` replaced by `to`, base64 again: a response altered after it was signed. */
function altered(form: PostedForm, from: string, to: string): PostedForm {
  const xml = Buffer.from(form.fields.SAMLResponse!, 'base64').toString('utf8');
  assert.ok(xml.includes(from), `the response holds ${from}`);
  return { ...form, fields: { ...form.fields, SAMLResponse: Buffer.from(xml.replace(from, to)).toString('base64') } };
}

let idpKeys: { cert: string; key: string };

before(async () => {
  configureSamlify();
  idpKeys = await rsaCertificate('test idp');
});

describeEachStore(
  'SAML sign-in at HTTPS edges',
  (h) => {
    const idps: TestIdp[] = [];
    // The IdP and the API are plain http: only the edge's CA is needed.
    const newBrowser = () => new Browser({ edgePort: h().agents!.httpsPort, cas: [h().agents!.caPem] });
    after(async () => {
      await Promise.all(idps.map((i) => i.close()));
    });

    /** An IdP, an upstream, and an edge whose route signs in with SAML against that IdP. */
    async function samlEdge(api: Api, saml: Record<string, unknown> = {}, idpWantsSignedRequests = true) {
      const idp = new TestIdp(idpKeys, idpWantsSignedRequests);
      idps.push(idp);
      await idp.start();
      const up = await upstream('app', (req) => ({ body: `app ${req.url} as ${String(req.headers['ngrok-auth-user-email'])}` }));
      after(() => up.close());
      const backend = await created(api, '/backends/static', { address: `127.0.0.1:${up.port}`, tls: { enabled: false } });
      const edge = await edgeWithRoute(api, { backend: { backend_id: backend.id }, saml: { idp_metadata: idp.metadata(), ...saml } });
      const module = (await api.get(`${edge.routes}/${edge.routeId}/saml`)).json as Record<string, string>;
      const metadata = await plainRequest(new URL(module.metadata_url!), 'GET', {});
      assert.equal(metadata.status, 200, metadata.text);
      idp.trust(metadata.text);
      await routesRead(h(), edge.host, 1);
      return { ...edge, idp, up, module, metadata };
    }

    test('the metadata address serves the service provider: entity id, ACS, NameID format, signing certificate', async () => {
      const api = await h().newAccount();
      const { module, metadata } = await samlEdge(api, { nameid_format: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress' });
      assert.match(String(metadata.headers['content-type']), /^application\/samlmetadata\+xml/);
      const sp = samlify.ServiceProvider({ metadata: metadata.text });
      assert.equal(sp.entityMeta.getEntityID(), module.entity_id);
      assert.equal(sp.entityMeta.getAssertionConsumerService('post'), module.assertion_consumer_service_url);
      assert.deepEqual([sp.entityMeta.getNameIDFormat()].flat(), ['urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress']);
      const pemBody = module.request_signing_certificate_pem!.replace(/-----[^-]+-----|\s/g, '');
      assert.equal(sp.entityMeta.getX509Certificate('signing'), pemBody);
      // The IdP asks for signed AuthnRequests, so the metadata says they are signed.
      assert.equal(sp.entityMeta.isAuthnRequestSigned(), true);
      assert.equal(sp.entityMeta.isWantAssertionsSigned(), true);
      assert.ok(module.metadata_url!.startsWith(`${h().baseUrl}/saml/sp_`), module.metadata_url);

      const unknown = await plainRequest(new URL(`${h().baseUrl}/saml/sp_0000000000000000000000000000/metadata`), 'GET', {});
      assert.equal(unknown.status, 404);
      const slo = await plainRequest(new URL(module.single_logout_url!), 'GET', {});
      assert.equal(slo.status, 501);
    });

    test('a browser signs in through the IdP and the ACS, and reaches the upstream at the address it asked for, then on its session alone', async () => {
      const api = await h().newAccount();
      const { host, idp, up } = await samlEdge(api, { force_authn: true });
      const browser = newBrowser();
      const page = await browser.get(`https://${host}/private/page?x=1`);
      assert.equal(page.status, 200, page.text);
      assert.equal(page.text, 'app /private/page?x=1 as ada@example.com');
      assert.equal(page.url, `https://${host}/private/page?x=1`);
      const path = page.visited
        .map((u) => new URL(u))
        .map((u) => `${u.protocol === 'https:' ? 'edge' : u.port === new URL(h().baseUrl).port ? 'api' : 'idp'}${u.pathname}`);
      assert.deepEqual(path, [
        'edge/private/page',
        'idp/sso',
        'api' + new URL(browser.lastForm!.action).pathname,
        'edge/_edgeplane/sign-in/handoff',
        'edge/private/page',
      ]);
      assert.equal(idp.requests.length, 1);
      assert.equal(idp.requests[0]!.forceAuthn, true);
      assert.equal(idp.requests[0]!.signed, true, 'the IdP asks for signed AuthnRequests; it checked the signature');
      const seen = up.received.at(-1)!.headers;
      assert.equal(seen['ngrok-auth-user-id'], 'user-1');
      assert.equal(seen['ngrok-auth-user-name'], 'user-1 (display)');
      // The gate's cookies never reach the upstream.
      assert.doesNotMatch(String(up.received.at(-1)!.headers.cookie ?? ''), /ngrok\./);

      const again = await browser.get(`https://${host}/other`);
      assert.equal(again.text, 'app /other as ada@example.com');
      assert.equal(idp.requests.length, 1, 'no second trip to the IdP');
    });

    test('a user in none of authorized_groups is refused at the ACS and never reaches the upstream', async () => {
      const api = await h().newAccount();
      const { host, idp, up } = await samlEdge(api, { authorized_groups: ['admins', 'ops'] });
      idp.user = { nameId: 'user-2', email: 'bob@example.com', groups: ['eng', 'sales'] };
      const page = await newBrowser().get(`https://${host}/`);
      assert.equal(page.status, 403);
      assert.match(page.text, /none of the groups allowed/);
      assert.equal(up.received.length, 0);

      idp.user = { nameId: 'user-3', email: 'cy@example.com', groups: ['sales', 'ops'] };
      const member = await newBrowser().get(`https://${host}/`);
      assert.equal(member.text, 'app / as cy@example.com');
    });

    test('a response altered after the IdP signed it is refused', async () => {
      const api = await h().newAccount();
      const { host, idp, up } = await samlEdge(api);
      const browser = newBrowser();
      // To the IdP's page, without submitting it: the form is taken and altered.
      const start = await request(h(), host, '/', { headers: { accept: 'text/html' } });
      assert.equal(start.status, 302);
      const idpPage = await plainRequest(new URL(start.headers.location!), 'GET', {});
      const form = parseForm(idpPage.text);
      const page = await browser.submit(altered(form, 'ada@example.com', 'eve@example.com'));
      assert.equal(page.status, 403);
      assert.match(page.text, /signature/);
      const unsigned = await browser.submit(altered(form, '<ds:SignatureValue>', '<ds:SignatureValue>AAAA'));
      assert.equal(unsigned.status, 403);
      assert.equal(up.received.length, 0);
      void idp;
    });

    test('a response or a handoff used once is refused the second time', async () => {
      const api = await h().newAccount();
      const { host } = await samlEdge(api);
      const browser = newBrowser();
      const page = await browser.get(`https://${host}/`);
      assert.equal(page.status, 200);
      const form = browser.lastForm!;
      const handoff = page.visited.find((u) => u.includes('/_edgeplane/sign-in/handoff'))!;

      const replayed = await plainRequest(
        new URL(form.action),
        'POST',
        { 'content-type': 'application/x-www-form-urlencoded' },
        new URLSearchParams(form.fields).toString(),
      );
      assert.equal(replayed.status, 403);
      assert.match(replayed.text, /used before/);

      // The handoff again (with or without a Cookie header): a token is good once.
      const url = new URL(handoff);
      for (const cookie of ['', undefined]) {
        const again = await request(h(), host, url.pathname + url.search, { headers: { accept: 'text/html', ...(cookie !== undefined && { cookie }) } });
        assert.equal(again.status, 400);
        assert.equal(again.headers['ngrok-error-code'], 'ERR_EP_INGRESS_722');
        assert.equal(again.headers['set-cookie']?.some((c) => c.includes('session=v1.')) ?? false, false);
      }
    });

    test('a sign-in the IdP starts is refused unless allow_idp_initiated, and then lands on the edge', async () => {
      const api = await h().newAccount();
      const refusedEdge = await samlEdge(api);
      const page = await newBrowser().submit(await refusedEdge.idp.response(undefined));
      assert.equal(page.status, 403);
      assert.match(page.text, /allow_idp_initiated/);

      const allowed = await samlEdge(api, { allow_idp_initiated: true });
      const browser = newBrowser();
      const landed = await browser.submit(await allowed.idp.response(undefined, 'https://somewhere.example/'));
      assert.equal(landed.status, 200, landed.text);
      assert.equal(landed.url, `https://${allowed.host}/`);
      assert.equal(landed.text, 'app / as ada@example.com');
      // A response that answers a request is not an IdP-initiated one.
      const answering = await newBrowser().submit(await allowed.idp.response('_made-up-request-id'));
      assert.equal(answering.status, 403);
      assert.match(answering.text, /InResponseTo/);
    });

    test('with an IdP that does not ask for signed AuthnRequests, they are sent unsigned and the metadata says so', async () => {
      const api = await h().newAccount();
      const { host, idp, metadata } = await samlEdge(api, {}, false);
      assert.equal(samlify.ServiceProvider({ metadata: metadata.text }).entityMeta.isAuthnRequestSigned(), false);
      const page = await newBrowser().get(`https://${host}/`);
      assert.equal(page.text, 'app / as ada@example.com');
      assert.equal(idp.requests[0]!.signed, false);
    });

    test('the ACS refuses a response with a DTD, a body over its limit, and a request without a SAMLResponse, without reading further', async () => {
      const api = await h().newAccount();
      const { module } = await samlEdge(api);
      const acs = new URL(module.assertion_consumer_service_url!);
      const post = (body: string) => plainRequest(acs, 'POST', { 'content-type': 'application/x-www-form-urlencoded' }, body);
      const entities =
        '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol">&x;</samlp:Response>';
      const dtd = await post(new URLSearchParams({ SAMLResponse: Buffer.from(entities).toString('base64') }).toString());
      assert.equal(dtd.status, 400);
      assert.match(dtd.text, /DTD/);
      assert.doesNotMatch(dtd.text, /root:/);
      const large = await post(new URLSearchParams({ SAMLResponse: 'A'.repeat(300 * 1024) }).toString());
      assert.equal(large.status, 413);
      const none = await post('RelayState=x');
      assert.equal(none.status, 400);
      assert.match(none.text, /no SAMLResponse/);
      const notBase64 = await post(new URLSearchParams({ SAMLResponse: '<xml/>' }).toString());
      assert.equal(notBase64.status, 400);
      const unknown = await plainRequest(
        new URL(acs.toString().replace(/sp_\w+/, 'sp_0000000000000000000000000000')),
        'POST',
        { 'content-type': 'application/x-www-form-urlencoded' },
        'SAMLResponse=AAAA',
      );
      assert.equal(unknown.status, 404);
    });

    test('a handoff is good only in the browser that started the sign-in (its state cookie on the edge host)', async () => {
      const api = await h().newAccount();
      const { host, up } = await samlEdge(api);
      // The sign-in begins in one browser; its state cookie stays there.
      const start = await request(h(), host, '/', { headers: { accept: 'text/html' } });
      assert.equal(start.status, 302);
      assert.ok(start.headers['set-cookie']?.some((c) => c.startsWith('edgeplane.sign-in=v1.')));
      const form = parseForm((await plainRequest(new URL(start.headers.location!), 'GET', {})).text);
      const acs = await plainRequest(
        new URL(form.action),
        'POST',
        { 'content-type': 'application/x-www-form-urlencoded' },
        new URLSearchParams(form.fields).toString(),
      );
      assert.equal(acs.status, 303);
      const handoff = new URL(acs.headers.location!);
      assert.equal(handoff.host, host);
      // Another browser (no state cookie) with the token: refused, and no session.
      const stolen = await request(h(), host, handoff.pathname + handoff.search, { headers: { accept: 'text/html' } });
      assert.equal(stolen.status, 400);
      assert.equal(stolen.headers['ngrok-error-code'], 'ERR_EP_INGRESS_722');
      assert.equal(stolen.headers['set-cookie']?.some((c) => c.includes('session=v1.')) ?? false, false);
      assert.equal(up.received.length, 0);
    });

    test('the ACS refuses a signed response for another audience or recipient, expired, or usable for too long', async () => {
      const api = await h().newAccount();
      const { idp } = await samlEdge(api, { allow_idp_initiated: true });
      const post = async (fields: Record<string, string>) => {
        const form = await idp.response(undefined, undefined, fields);
        return plainRequest(new URL(form.action), 'POST', { 'content-type': 'application/x-www-form-urlencoded' }, new URLSearchParams(form.fields).toString());
      };
      const minutes = (n: number) => new Date(Date.now() + n * 60_000).toISOString();
      const cases: [Record<string, string>, RegExp][] = [
        [{ Audience: 'https://another-sp.example/metadata' }, /Audience/],
        [{ SubjectRecipient: 'https://another-sp.example/acs' }, /Recipient/],
        [{ Destination: 'https://another-sp.example/acs' }, /Destination/],
        [
          { ConditionsNotBefore: minutes(-20), ConditionsNotOnOrAfter: minutes(-10), SubjectConfirmationDataNotOnOrAfter: minutes(-10) },
          /not valid at this time/,
        ],
        [{ SubjectConfirmationDataNotOnOrAfter: minutes(-10) }, /expired/],
        [{ ConditionsNotOnOrAfter: minutes(180), SubjectConfirmationDataNotOnOrAfter: minutes(180) }, /longer than an hour/],
      ];
      for (const [fields, reason] of cases) {
        const answer = await post(fields);
        assert.equal(answer.status, 403, JSON.stringify(fields));
        assert.match(answer.text, reason, JSON.stringify(fields));
      }
      assert.equal((await post({})).status, 303, 'the same response unaltered is taken');
    });
  },
  { agents: {}, acrossInstances: true },
);
