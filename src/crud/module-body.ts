// The body of a module replace (PUT). Existing clients send it in two shapes, and both are
// accepted: the module itself (the Go and Python clients), or the TypeScript client's wrapper
// `{"id": <edge id>, "module": {…}}` (`{"edge_id", "id", "module"}` for route modules), whose ids
// must be the ones in the path. Either way the module is validated against its schema.
import type { TObject } from '@sinclair/typebox';
import { errors } from '../core/errors.js';
import { bodyValidator } from '../core/validation.js';

/** The ids in the module's path: the edge's (`id`), and the route's for route modules. */
export interface ModulePath {
  id: string;
  edge_id?: string;
}

const WRAPPER_KEYS = new Set(['id', 'edge_id', 'module']);

function isWrapped(body: unknown): body is { id?: unknown; edge_id?: unknown; module: unknown } {
  if (body === null || typeof body !== 'object' || Array.isArray(body) || !Object.hasOwn(body, 'module')) return false;
  return Object.keys(body).every((key) => WRAPPER_KEYS.has(key));
}

/** A parser for one module kind's PUT body: the module, bare or unwrapped, validated. */
export function moduleBody<T>(schema: TObject): (body: unknown, path: ModulePath) => T {
  const validate = bodyValidator<T>(schema);
  // A module with a field called `module` would make the two shapes ambiguous.
  if (Object.hasOwn(schema.properties, 'module')) throw new Error('a module schema cannot have a field named module');
  return (body, path) => {
    if (!isWrapped(body)) return validate(body);
    // In the route module wrapper, `id` is the route's and `edge_id` the edge's; in the edge
    // module wrapper, `id` is the edge's. The path names them the same way.
    for (const field of ['id', 'edge_id'] as const) {
      const sent = body[field];
      if (sent === undefined || sent === null) continue;
      const expected = path[field];
      if (sent !== expected) throw errors.moduleIdMismatch({ field, sent: typeof sent === 'string' ? sent : JSON.stringify(sent), path: expected ?? '(none)' });
    }
    return validate(body.module, 'module.');
  };
}
