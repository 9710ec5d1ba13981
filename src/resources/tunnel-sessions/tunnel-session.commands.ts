// The commands of a tunnel session: POST /tunnel_sessions/{id}/restart, /stop and /update. A
// session held by this instance gets the command at once (SessionCommands, the data plane's);
// one held by another live instance gets it queued in the store, and that instance sends it at
// its next sync (src/tunnels/live-records.ts). Each answers 204, as the public API does.
//
// Routed here rather than by the generic routes (src/crud/routes.ts), which know the five
// operations and the parts and modules of a resource, not actions.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { RequestContext } from '../../core/context.js';
import { errors } from '../../core/errors.js';
import { hasPrefix, newId } from '../../core/ids.js';
import { EmptyBody, IdParams, NoQuery, errorResponses } from '../../core/schema.js';
import { rfc3339 } from '../../core/time.js';
import { observeMutation } from '../../db/observers.js';
import { MUTATION_OBSERVERS } from '../mutation-observers.js';
import { readOnlyMayOnlyRead } from '../../crud/authorization.js';
import { scopedRead, scopedTx } from '../../db/scoped.js';
import { ForeignKeyViolation, type Store } from '../../db/store.js';
import type { SessionCommand, SessionCommands } from '../../core/live-agents.js';
import { tunnelSessionErrors } from './tunnel-session.errors.js';
import { TUNNEL_SESSION_PREFIX } from './tunnel-session.resource.js';
import { TunnelSessionCommandBody, TunnelSessionUpdateBody } from './tunnel-session.schema.js';

/** Commands that may wait for one session at once; the holder takes them every few seconds. */
export const MAX_QUEUED_COMMANDS = 10;

/** SessionCommands of a process that holds no session: everything is queued for the instance that holds it. */
export const noSessionsHere: SessionCommands = { send: () => Promise.resolve({ outcome: 'not_here' }) };

const TITLE = 'tunnel session';

interface Deps {
  store: Store;
  sessionCommands: SessionCommands;
}

/** What the command is called in operation ids and messages. */
const verb = (command: SessionCommand) => command.kind;

/**
 * Sends `command` to the session `id` of the caller's account, or queues it for the instance
 * that holds it. 404 for an id that is no live session of the account.
 */
export async function runSessionCommand(deps: Deps, ctx: RequestContext, id: string, command: SessionCommand): Promise<void> {
  if (!hasPrefix(id, TUNNEL_SESSION_PREFIX)) throw errors.invalidPathId({ value: id, title: TITLE, prefix: TUNNEL_SESSION_PREFIX });
  const live = await scopedRead(deps.store, ctx.scope, (db) => db.find('live_tunnel_sessions', id));
  if (!live) throw errors.notFound({ title: TITLE, id });
  readOnlyMayOnlyRead(ctx, 'update');
  const operation = `tunnel_session.${verb(command)}`;

  const result = await deps.sessionCommands.send(id, command);
  if (result.outcome === 'refused') throw tunnelSessionErrors.agentRefusedCommand({ command: verb(command), id, error: result.error });
  if (result.outcome === 'failed') throw tunnelSessionErrors.agentCommandFailed({ command: verb(command), id, reason: result.reason });
  if (result.outcome === 'sent') {
    // The agent has it: a failure to record that must not invite a retry (a second restart).
    await scopedTx(deps.store, ctx.scope, (db) => observeMutation(MUTATION_OBSERVERS, db, ctx, { operation, resourceId: id })).catch(() => undefined);
    return;
  }

  try {
    await scopedTx(deps.store, ctx.scope, async (db) => {
      // Locked: the session is not deleted before the command is queued, and queuers of one session take turns.
      const session = await db.find('agent_sessions', id, 'update');
      if (!session || session.lease_expires_at <= ctx.now.toISOString()) throw errors.notFound({ title: TITLE, id });
      const waiting = await db.select('agent_session_commands', { session_id: id });
      if (waiting.length >= MAX_QUEUED_COMMANDS) throw tunnelSessionErrors.tooManyQueuedCommands({ id, max: MAX_QUEUED_COMMANDS });
      await db.insert('agent_session_commands', { id: newId('cmd'), session_id: id, command: JSON.stringify(command), created_at: rfc3339(ctx.now) });
      await observeMutation(MUTATION_OBSERVERS, db, ctx, { operation, resourceId: id });
    });
  } catch (error) {
    // The session's row went between the read and the insert: it ended.
    if (error instanceof ForeignKeyViolation) throw errors.notFound({ title: TITLE, id });
    throw error;
  }
}

export function registerTunnelSessionCommands(fastify: FastifyInstance, deps: Deps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['tunnel session'];
  const response = { 204: EmptyBody, ...errorResponses('POST', 404, 409) };
  const pathIdOf = (sent: string | undefined, path: string) => {
    if (sent !== undefined && sent !== path) throw errors.idMismatch({ sent, path });
  };

  for (const kind of ['restart', 'stop'] as const) {
    app.post(`/tunnel_sessions/:id/${kind}`, {
      config: { bareIdBody: true },
      schema: {
        operationId: `tunnel_session.${kind}`,
        tags,
        summary: kind === 'restart' ? 'Restart the agent of a tunnel session' : 'Stop the agent of a tunnel session',
        params: IdParams,
        querystring: NoQuery,
        body: TunnelSessionCommandBody,
        response,
      },
      handler: async (request, reply) => {
        pathIdOf(request.body?.id, request.params.id);
        await runSessionCommand(deps, request.ctx, request.params.id, { kind });
        return reply.code(204).send(null);
      },
    });
  }

  app.post('/tunnel_sessions/:id/update', {
    schema: {
      operationId: 'tunnel_session.update',
      tags,
      summary: 'Update the agent of a tunnel session',
      params: IdParams,
      querystring: NoQuery,
      body: TunnelSessionUpdateBody,
      response,
    },
    handler: async (request, reply) => {
      const body = request.body ?? {};
      pathIdOf(body.id, request.params.id);
      const command = { kind: 'update', version: body.version ?? '', permitMajorVersion: body.permit_major_version ?? false } as const;
      await runSessionCommand(deps, request.ctx, request.params.id, command);
      return reply.code(204).send(null);
    },
  });
}
