// Plain Fastify routes for a resource defined with defineResource. Routes only translate HTTP
// into service calls; they never touch the database.
import type { FastifyInstance } from 'fastify';
import { EmptyBody, IdParams, ListEnvelope, ListQuery, NoQuery, errorResponses } from '../core/schema.js';
import type { BaseRow } from './store.js';
import type { Resource, ResourceSchemas } from './resource.js';

export function registerResourceRoutes<Row extends BaseRow, S extends ResourceSchemas>(app: FastifyInstance, resource: Resource<Row, S>): void {
  const d = resource.definition;
  const tags = [d.title];
  const writeConfig = { adminAction: d.adminOnlyWrites, immutable: d.immutable, title: d.title };
  const conflict = errorResponses(409);

  app.post(d.path, {
    schema: { operationId: `${d.kind}.create`, tags, summary: `Create a ${d.title}`, querystring: NoQuery, body: d.schemas.create, response: { 201: d.schemas.resource, ...conflict } },
    config: writeConfig,
    handler: async (request, reply) => reply.code(201).send(await resource.create(request.ctx, request.body as never)),
  });

  app.get(d.path, {
    schema: { operationId: `${d.kind}.list`, tags, summary: `List ${d.title}s, newest first`, querystring: ListQuery, response: { 200: ListEnvelope(d.listKey, d.schemas.resource), ...errorResponses() } },
    handler: async (request) => resource.list(request.ctx, request.query as never),
  });

  app.get(`${d.path}/:id`, {
    schema: { operationId: `${d.kind}.get`, tags, summary: `Get a ${d.title}`, params: IdParams, querystring: NoQuery, response: { 200: d.schemas.resource, ...errorResponses() } },
    handler: async (request) => resource.get(request.ctx, (request.params as { id: string }).id),
  });

  app.patch(`${d.path}/:id`, {
    schema: { operationId: `${d.kind}.update`, tags, summary: `Update a ${d.title}`, params: IdParams, querystring: NoQuery, body: d.schemas.update, response: { 200: d.schemas.resource, ...conflict } },
    config: writeConfig,
    handler: async (request) => resource.update(request.ctx, (request.params as { id: string }).id, request.body as never),
  });

  app.delete(`${d.path}/:id`, {
    schema: { operationId: `${d.kind}.delete`, tags, summary: `Delete a ${d.title}`, params: IdParams, querystring: NoQuery, response: { 204: EmptyBody, ...conflict } },
    config: writeConfig,
    handler: async (request, reply) => {
      await resource.remove(request.ctx, (request.params as { id: string }).id);
      return reply.code(204).send();
    },
  });
}
