// The service provider side of the `saml` sign-in module, on the API host, at the addresses the
// module shows (`${base URL}/saml/${sp_id}/…`): its metadata, the assertion consumer service
// (ACS) that reads the identity provider's answer and hands the user back to the edge host, and
// the single logout address, which says that single logout is not offered. No API key: browsers
// and identity providers call these. The module is found by its service provider id across
// accounts (the id is random and unguessable; nothing of the account is shown).
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../core/time.js';
import { hasPrefix } from '../core/ids.js';
import { readAcrossAccounts, type CrossAccountReader } from '../db/cross-account.js';
import type { Database } from '../db/schema.js';
import { samlModule, type SamlValue } from '../edge-config/modules/sign-in-modules.js';
import type { Sealer } from '../lib/crypto/sealer.js';
import { handoffUrl } from '../edges/sign-in/method.js';
import { ownerOfState, SignInCookies, type Identity } from '../edges/sign-in/session.js';
import {
  MAX_SAML_RESPONSE_BODY_BYTES,
  openRelayState,
  readLoginResponse,
  SamlRefusal,
  serviceProviderMetadata,
  UsedAssertions,
} from '../edges/sign-in/saml-protocol.js';

export interface SamlDeps {
  acrossAccounts: CrossAccountReader;
  sealer: Sealer;
  clock: Clock;
}

/** A `saml` module found by its service provider id: the route (or endpoint configuration) that has it. */
interface FoundModule {
  ownerId: string;
  accountId: string;
  module: SamlValue;
}

/**
 * The `saml` module whose service provider id is `id`, in any account. Module values are JSON
 * text with no index on the id, so the rows are narrowed with LIKE and then checked exactly.
 */
async function findModule(across: CrossAccountReader, sealer: Sealer, id: string): Promise<FoundModule | undefined> {
  if (!hasPrefix(id, 'sp')) return undefined;
  const rows = await readAcrossAccounts(across, (reader) =>
    reader
      .selectFrom('modules')
      .select(['owner_id', 'account_id', 'value'])
      .where('name', '=', 'saml')
      .where('value', 'like', `%"service_provider_id":"${id}"%`)
      .execute(),
  );
  const definition = samlModule(sealer);
  for (const row of rows) {
    const module = definition.read(JSON.parse(row.value));
    if (module.service_provider_id === id) return { ownerId: row.owner_id, accountId: row.account_id, module };
  }
  return undefined;
}

/** The first name of the HTTPS edge whose route `routeId` is: where a sign-in the identity provider started ends. */
async function edgeHostOf(across: CrossAccountReader, found: FoundModule): Promise<string | undefined> {
  const row = await readAcrossAccounts(across, (reader: Kysely<Database>) =>
    reader
      .selectFrom('https_edge_routes as r')
      .innerJoin('edge_domains as d', 'd.edge_id', 'r.edge_id')
      .innerJoin('reserved_domains as n', 'n.id', 'd.reserved_domain_id')
      .select('n.domain')
      .where('r.id', '=', found.ownerId)
      .where('r.account_id', '=', found.accountId)
      .orderBy('d.position')
      .limit(1)
      .executeTakeFirst(),
  );
  return row?.domain;
}

/** A refusal as the browser shows it: plain text, never cached, never quoting the message. */
function refused(reply: FastifyReply, status: number, reason: string): FastifyReply {
  return reply.code(status).header('Cache-Control', 'no-store').type('text/plain; charset=utf-8').send(`SAML sign-in refused: ${reason}.\n`);
}

const route = { schema: { hide: true }, config: { public: true } } as const;

export function registerSaml(app: FastifyInstance, deps: SamlDeps): void {
  const cookies = new SignInCookies(deps.sealer, () => deps.clock.now().getTime());
  const used = new UsedAssertions();
  const notFound = (reply: FastifyReply) => refused(reply, 404, 'no SAML service provider has this address');

  // In a scope of their own: the ACS takes HTML forms (application/x-www-form-urlencoded), which
  // no other operation does, with a body limit of its own.
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: MAX_SAML_RESPONSE_BODY_BYTES }, (_request, body, done) =>
      done(null, new URLSearchParams(body as string)),
    );

    scope.get<{ Params: { sp_id: string } }>('/saml/:sp_id/metadata', route, async (request, reply) => {
      const found = await findModule(deps.acrossAccounts, deps.sealer, request.params.sp_id);
      if (!found) return notFound(reply);
      let xml: string;
      try {
        xml = serviceProviderMetadata(found.module);
      } catch (error) {
        if (!(error instanceof SamlRefusal)) throw error;
        return refused(reply, error.status, error.reason);
      }
      return reply.header('Cache-Control', 'no-cache').type('application/samlmetadata+xml; charset=utf-8').send(xml);
    });

    scope.post<{ Params: { sp_id: string }; Body: URLSearchParams | undefined }>('/saml/:sp_id/acs', route, async (request, reply) => {
      const found = await findModule(deps.acrossAccounts, deps.sealer, request.params.sp_id);
      if (!found) return notFound(reply);
      if (!found.module.enabled) return refused(reply, 403, 'sign-in with this service provider is disabled');
      const form = request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
      const samlResponse = form.get('SAMLResponse');
      if (!samlResponse) return refused(reply, 400, 'the request has no SAMLResponse (HTTP-POST binding)');
      const now = deps.clock.now().getTime();
      const relayText = form.get('RelayState');
      // A RelayState this service provider did not seal is an identity provider's own (IdP-initiated).
      const relay = relayText ? openRelayState(deps.sealer, found.module.service_provider_id, relayText, now) : undefined;
      if (relay && ownerOfState(relay.state) !== found.ownerId) return refused(reply, 400, 'the RelayState belongs to another route');
      try {
        const identity = await readLoginResponse(found.module, deps.sealer, samlResponse, { requestId: relay?.requestId, now: new Date(now) });
        if (!used.use(identity.assertionId, identity.usableUntil, now)) return refused(reply, 403, 'this response was used before');
        const host = relay?.host ?? (await edgeHostOf(deps.acrossAccounts, found));
        if (!host) return refused(reply, 409, 'the service provider belongs to no HTTPS edge route with a name to return to');
        const handed: Identity = {
          subject: identity.nameId,
          ...(identity.email !== undefined && { email: identity.email }),
          ...(identity.name !== undefined && { name: identity.name }),
          ...(identity.groups.length > 0 && { groups: identity.groups }),
        };
        const token = cookies.sealHandoff(found.ownerId, { method: 'saml', identity: handed, ...(relay && { state: relay.state }) });
        request.log.info({ sp_id: found.module.service_provider_id, route_id: found.ownerId, idp_initiated: !relay }, 'saml: sign-in handed to the edge');
        return reply.header('Cache-Control', 'no-store').redirect(handoffUrl(host, found.ownerId, token), 303);
      } catch (error) {
        if (!(error instanceof SamlRefusal)) throw error;
        request.log.info({ sp_id: found.module.service_provider_id, route_id: found.ownerId, reason: error.reason }, 'saml: response refused');
        return refused(reply, error.status, error.reason);
      }
    });

    // Single logout is not offered: a session is a cookie on the edge's own names, which this host
    // cannot clear. The address answers so, rather than 404, for an identity provider that tries.
    const noLogout = async (request: { params: { sp_id: string } }, reply: FastifyReply) => {
      const found = await findModule(deps.acrossAccounts, deps.sealer, request.params.sp_id);
      if (!found) return notFound(reply);
      return refused(
        reply,
        501,
        'single logout is not supported; sessions end at the module’s inactivity_timeout or maximum_duration, or at the edge’s sign-out path',
      );
    };
    scope.get<{ Params: { sp_id: string } }>('/saml/:sp_id/slo', route, noLogout);
    scope.post<{ Params: { sp_id: string } }>('/saml/:sp_id/slo', route, noLogout);
  });
}
