// Fastify's schema compiler: the project's Ajv instances (src/core/validation.ts) for every part.
import type { FastifySchemaCompiler } from 'fastify';
import { VALIDATED_BY_HANDLER } from '../core/schema.js';
import { compileValidator } from '../core/validation.js';

const checkedByHandler = () => true;

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (schema as Record<string, unknown>)[VALIDATED_BY_HANDLER]
    ? checkedByHandler
    : compileValidator(schema as object, (httpPart ?? 'body') as 'body' | 'querystring' | 'params' | 'headers');
