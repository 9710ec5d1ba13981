// The OpenAPI document: a valid OpenAPI 3.1 document that covers every route with its
// success and error responses, generated from the same schemas the server validates with.
// openapi-statuses.test.ts checks the statuses against what the server answers.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describeEachStore } from '../helpers/harness.js';

type Schema = { properties?: Record<string, unknown>; $ref?: string };
type Operation = {
  operationId?: string;
  responses?: Record<string, { content?: Record<string, { schema?: Schema }>; headers?: Record<string, unknown> }>;
  security?: unknown[];
};

/** A schema, or the component its local $ref names. */
function resolve(doc: { components?: { schemas?: Record<string, Schema> } }, schema: Schema | undefined): Schema | undefined {
  const ref = schema?.$ref;
  if (!ref) return schema;
  assert.match(ref, /^#\/components\/schemas\//, `a local component: ${ref}`);
  return doc.components?.schemas?.[ref.slice('#/components/schemas/'.length)];
}

describeEachStore('OpenAPI document', (h) => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const doc = (await (await h().newAccount()).get('/openapi.json', { noVersion: true })).json;
    const result = await new Validator().validate(doc);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.servers[0].url, h().baseUrl);
  });

  it('covers every route with an operation id, its success response and its error responses', async () => {
    const doc = (await (await h().newAccount()).get('/openapi.json', { noVersion: true })).json;
    const routes: string[] = [];
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, Operation>>)) {
      for (const [method, op] of Object.entries(methods)) {
        routes.push(`${method.toUpperCase()} ${path}`);
        assert.ok(op.operationId, `${method} ${path} has an operationId`);
        const statuses = Object.keys(op.responses ?? {});
        assert.ok(
          statuses.some((s) => /^2\d\d$/.test(s)),
          `${method} ${path} declares its success`,
        );
        if (path === '/openapi.json') {
          assert.deepEqual(statuses, ['200'], 'the public document is never refused, limited or failed by the store');
          continue;
        }
        // What every authenticated operation can answer; 404 where the path names a resource.
        const every = ['400', '401', '403', '429', '500', '503', ...(path.includes('{') ? ['404'] : [])];
        // What reading a body can answer: a GET refuses one unread; a DELETE reads it to refuse it.
        const byBody = method === 'get' ? [] : method === 'delete' ? ['408', '413'] : ['408', '413', '415'];
        for (const status of [...every, ...byBody]) {
          const body = resolve(doc, op.responses?.[status]?.content?.['application/json']?.schema);
          assert.ok(body?.properties?.error_code, `${method} ${path} declares ${status} with the error body`);
        }
        for (const status of ['413', '415', '408']) {
          if (!byBody.includes(status)) assert.ok(!statuses.includes(status), `${method} ${path} does not declare ${status}: it never reads a body as JSON`);
        }
        assert.ok(!statuses.includes('405'), `${method} ${path}: 405 is a path's answer, not an operation's`);
        if (method !== 'get') assert.ok(statuses.includes('409'), `${method} ${path} declares 409`);
        // The headers that always come with these errors.
        const headers = (status: string) => Object.keys(op.responses?.[status]?.headers ?? {});
        assert.deepEqual(
          headers('429'),
          ['Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy'],
          `${method} ${path} 429`,
        );
        assert.deepEqual(headers('503'), ['Retry-After'], `${method} ${path} 503`);
        assert.deepEqual(headers('401'), ['WWW-Authenticate'], `${method} ${path} 401`);
      }
    }
    const operationIds = Object.values(doc.paths as Record<string, Record<string, Operation>>).flatMap((m) => Object.values(m).map((o) => o.operationId));
    assert.equal(new Set(operationIds).size, operationIds.length, 'operation ids are unique');

    // Every resource the server registers has its operations in the document.
    const routesOf = (d: { path: string; operations?: readonly string[]; detach?: Record<string, unknown>; modules?: readonly { name: string }[] }) => {
      const p = d.path.replace(/:(\w+)/g, '{$1}');
      const all = { create: `POST ${p}`, list: `GET ${p}`, get: `GET ${p}/{id}`, update: `PATCH ${p}/{id}`, delete: `DELETE ${p}/{id}` } as Record<
        string,
        string
      >;
      const parts = [
        ...Object.keys(d.detach ?? {}).map((part) => `DELETE ${p}/{id}/${part}`),
        ...(d.modules ?? []).flatMap((m) => ['PUT', 'GET', 'DELETE'].map((method) => `${method} ${p}/{id}/${m.name}`)),
      ];
      return [...(d.operations ?? Object.keys(all)).map((o) => all[o]!), ...parts];
    };
    const expected = Object.values(h().deps.resources)
      .flatMap((r) => routesOf(r.definition))
      .concat('GET /openapi.json')
      // The commands of tunnel sessions, routed beside the generic routes (tunnel-session.commands.ts).
      .concat(['restart', 'stop', 'update'].map((command) => `POST /tunnel_sessions/{id}/${command}`));
    assert.deepEqual(routes.sort(), expected.sort());
  });

  it('never exposes a secret column in a response schema', async () => {
    const doc = JSON.stringify((await (await h().newAccount()).get('/openapi.json', { noVersion: true })).json);
    assert.ok(!doc.includes('secret_hash'));
  });
});
