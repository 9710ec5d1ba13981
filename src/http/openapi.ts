// OpenAPI 3.1 at GET /openapi.json, generated from the same schemas that validate and serialize.
import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { ErrorBody } from '../core/schema.js';

type Doc = { paths?: Record<string, Record<string, { parameters?: unknown[]; security?: unknown[] }>> };

export async function registerOpenApi(app: FastifyInstance, baseUrl: () => string): Promise<void> {
  // Shared schemas are named components of the document, under their $id.
  app.addSchema(ErrorBody);
  await app.register(swagger, {
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'edgeplane management API',
        version: '2',
        description:
          'JSON over HTTPS. Every operation but this document needs `Authorization: Bearer <token>` and `Service-Version: 2`. Errors: docs/errors.md.',
      },
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'an API key token' } },
        parameters: {
          ServiceVersion: {
            name: 'Service-Version',
            in: 'header',
            required: true,
            schema: { type: 'string', enum: ['2'] },
            description: 'API version; Ngrok-Version is accepted as a synonym',
          },
        },
      },
      security: [{ bearer: [] }],
    },
    transformObject: (documentObject) => {
      const openapiObject = (documentObject as { openapiObject: object }).openapiObject;
      const doc = openapiObject as Doc & { servers?: unknown[] };
      doc.servers = [{ url: baseUrl() }];
      for (const [path, operations] of Object.entries(doc.paths ?? {})) {
        for (const operation of Object.values(operations)) {
          if (path === '/openapi.json') {
            operation.security = [];
            continue;
          }
          operation.parameters = [...(operation.parameters ?? []), { $ref: '#/components/parameters/ServiceVersion' }];
        }
      }
      return openapiObject;
    },
  });

  app.get('/openapi.json', {
    schema: { operationId: 'openapi.get', tags: ['Meta'], summary: 'This API as an OpenAPI 3.1 document', hide: false },
    config: { public: true },
    handler: async () => app.swagger(),
  });
}
