// Plain Fastify routes for a resource service, typed through the TypeBox type provider. Routes
// only translate HTTP into service calls; they never touch the database.
import { Type, type Static, type TObject } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { EmptyBody, ID_MAX_LENGTH, ListEnvelope, ListQuery, NoQuery, VALIDATED_BY_HANDLER, errorResponses } from '../core/schema.js';
import { ALL_OPERATIONS, detachOperationId, moduleOperationId, operationId } from './definition.js';
import { errors } from '../core/errors.js';
import { moduleBody } from './module-body.js';
import type { PathIds, Resource, ResourceSchemas } from './resource.js';

const PathParam = Type.String({ maxLength: 200 });

/** "a" or "an" before a title, by its sound: "an API key", "an SSH CA", "a bot user". */
function withArticle(title: string): string {
  const spelledOut = /^[A-Z]{2}/.test(title) && 'FHLMNRSX'.includes(title[0]!);
  return `${/^[aeiouAEIOU]/.test(title) || spelledOut ? 'an' : 'a'} ${title}`;
}

/** The path parameters of a collection (the parent's, if any) and of one item (plus `id`). */
function pathSchemas(parentParam: string | undefined) {
  const collection = Type.Object(parentParam ? { [parentParam]: PathParam } : {});
  const item = Type.Object({ ...collection.properties, id: PathParam });
  return { collection, item };
}

const PathIdField = Type.Optional(
  Type.String({ maxLength: ID_MAX_LENGTH, description: 'the id in the path, as the official clients send it; any other is refused' }),
);

/**
 * Every official client sends the ids of the path in the body too: the resource's id in an
 * update, and the parent's (`edge_id`) in a create and an update of a kind under another. They
 * are accepted when they are the path's.
 */
function withPathIds(body: TObject, names: readonly string[]) {
  return Type.Object({ ...body.properties, ...Object.fromEntries(names.map((name) => [name, PathIdField])) }, { additionalProperties: false });
}

/** The body without the parent's id, which must be the path's when sent. */
function withoutParentId(body: unknown, parentParam: string | undefined, params: Record<string, string>): unknown {
  if (!parentParam) return body;
  const { [parentParam]: sent, ...rest } = body as Record<string, unknown>;
  if (sent !== undefined && sent !== null && sent !== params[parentParam])
    throw errors.moduleIdMismatch({ field: parentParam, sent: String(sent), path: params[parentParam] ?? '' });
  return rest;
}

export function registerResourceRoutes<S extends ResourceSchemas>(fastify: FastifyInstance, resource: Resource<S>): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const d = resource.definition;
  const operations = new Set(d.operations ?? ALL_OPERATIONS);
  const tags = [d.title];
  const parentParam = d.parent?.param;
  const params = pathSchemas(parentParam);
  const ids = (p: Record<string, string>): PathIds => ({ id: p.id, parentId: parentParam ? p[parentParam] : undefined });
  const config = { immutable: d.immutable, title: d.title };
  // 404: every operation here names a resource in its path or body, but a list of a top-level kind.
  const itemPath = `${d.path}/:id`;

  if (operations.has('create')) {
    app.post(d.path, {
      schema: {
        operationId: operationId(d.kind, 'create'),
        tags,
        summary: `Create ${withArticle(d.title)}`,
        params: params.collection,
        querystring: NoQuery,
        body: withPathIds(d.schemas.create, parentParam ? [parentParam] : []),
        response: { 201: d.schemas.resource, ...errorResponses('POST', 404, 409) },
      },
      config: {
        ...config,
        replay: {
          shownOnce: d.shownOnce ?? [],
          authorize: (request) => {
            const { body, params } = request as typeof request & { params: Record<string, string> };
            return resource.authorizeCreate(request.ctx, withoutParentId(body, parentParam, params) as Static<S['create']>, ids(params));
          },
        },
      },
      handler: async (request, reply) => {
        const body = withoutParentId(request.body, parentParam, request.params);
        return reply.code(201).send(await resource.create(request.ctx, body as Static<S['create']>, ids(request.params)));
      },
    });
  }

  if (operations.has('list')) {
    app.get(d.path, {
      schema: {
        operationId: operationId(d.kind, 'list'),
        tags,
        summary: `List ${d.title}s, newest first`,
        params: params.collection,
        querystring: ListQuery,
        response: { 200: ListEnvelope(d.listKey!, d.schemas.resource), ...errorResponses('GET', ...(parentParam ? [404 as const] : [])) },
      },
      // Not async: on SQLite the page is there at once (crud/resource.ts), and Fastify sends a value as it is.
      handler: (request) => resource.list(request.ctx, request.query, ids(request.params)),
    });
  }

  if (operations.has('get')) {
    app.get(itemPath, {
      schema: {
        operationId: operationId(d.kind, 'get'),
        tags,
        summary: `Get ${withArticle(d.title)}`,
        params: params.item,
        querystring: NoQuery,
        response: { 200: d.schemas.resource, ...errorResponses('GET', 404) },
      },
      // Not async: on SQLite the row is there at once (crud/resource.ts), and Fastify sends a value as it is.
      handler: (request) => resource.get(request.ctx, ids(request.params)),
    });
  }

  if (operations.has('update')) {
    app.patch(itemPath, {
      schema: {
        operationId: operationId(d.kind, 'update'),
        tags,
        summary: `Update ${withArticle(d.title)}`,
        params: params.item,
        querystring: NoQuery,
        body: withPathIds(d.schemas.update, ['id', ...(parentParam ? [parentParam] : [])]),
        response: { 200: d.schemas.resource, ...errorResponses('PATCH', 404, 409) },
      },
      config,
      handler: async (request) =>
        resource.update(request.ctx, ids(request.params), withoutParentId(request.body, parentParam, request.params) as Static<S['update']> & { id?: string }),
    });
  }

  for (const m of d.modules ?? []) {
    const modulePath = `${itemPath}/${m.name}`;
    const parse = moduleBody(m.request);
    const moduleIds = (p: Record<string, string>) => ({ id: p.id ?? '', ...(parentParam && { edge_id: p[parentParam] }) });
    app.put(modulePath, {
      schema: {
        operationId: moduleOperationId(d.kind, m.name, 'replace'),
        tags,
        summary: `Replace the ${m.title} module of ${withArticle(d.title)}`,
        description: 'The body is the module itself, or `{"id", "module"}` as the official TypeScript client wraps it.',
        params: params.item,
        querystring: NoQuery,
        // Checked by the handler (moduleBody), which also takes the wrapped form; shown here as the module.
        body: { ...m.request, [VALIDATED_BY_HANDLER]: true },
        response: { 200: m.response, ...errorResponses('PUT', 404, 409) },
      },
      config,
      handler: async (request) => resource.putModule(request.ctx, ids(request.params), m.name, parse(request.body, moduleIds(request.params))),
    });
    app.get(modulePath, {
      schema: {
        operationId: moduleOperationId(d.kind, m.name, 'get'),
        tags,
        summary: `Get the ${m.title} module of ${withArticle(d.title)}`,
        params: params.item,
        querystring: NoQuery,
        response: { 200: m.response, ...errorResponses('GET', 404) },
      },
      handler: async (request) => resource.getModule(request.ctx, ids(request.params), m.name),
    });
    app.delete(modulePath, {
      schema: {
        operationId: moduleOperationId(d.kind, m.name, 'delete'),
        tags,
        summary: `Delete the ${m.title} module of ${withArticle(d.title)}`,
        params: params.item,
        querystring: NoQuery,
        response: { 204: EmptyBody, ...errorResponses('DELETE', 404, 409) },
      },
      config,
      handler: async (request, reply) => {
        await resource.deleteModule(request.ctx, ids(request.params), m.name);
        return reply.code(204).send(null);
      },
    });
  }

  for (const part of Object.keys(d.detach ?? {})) {
    app.delete(`${itemPath}/${part}`, {
      schema: {
        operationId: detachOperationId(d.kind, part),
        tags,
        summary: `Detach the ${part.replaceAll('_', ' ')} of ${withArticle(d.title)}`,
        params: params.item,
        querystring: NoQuery,
        response: { 204: EmptyBody, ...errorResponses('DELETE', 404, 409) },
      },
      config,
      handler: async (request, reply) => {
        await resource.detach(request.ctx, ids(request.params), part);
        return reply.code(204).send(null);
      },
    });
  }

  if (operations.has('delete')) {
    app.delete(itemPath, {
      schema: {
        operationId: operationId(d.kind, 'delete'),
        tags,
        summary: `Delete ${withArticle(d.title)}`,
        params: params.item,
        querystring: NoQuery,
        response: { 204: EmptyBody, ...errorResponses('DELETE', 404, 409) },
      },
      config,
      handler: async (request, reply) => {
        await resource.remove(request.ctx, ids(request.params));
        return reply.code(204).send(null);
      },
    });
  }
}
