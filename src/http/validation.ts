// Fastify's schema compiler: the project's Ajv instances (src/core/validation.ts) for every part.
import type { FastifySchemaCompiler } from 'fastify';
import { compileValidator } from '../core/validation.js';

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  compileValidator(schema as object, (httpPart ?? 'body') as 'body' | 'querystring' | 'params' | 'headers');
