// The OpenAPI document: a valid OpenAPI 3.1 document that covers every route with its
// success and error responses, generated from the same schemas the server validates with.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describeEachStore } from '../helpers/harness.js';

type Operation = { operationId?: string; responses?: Record<string, { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> }>; security?: unknown[] };

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
        assert.ok(statuses.some((s) => /^2\d\d$/.test(s)), `${method} ${path} declares its success`);
        if (path === '/openapi.json') continue;
        for (const status of ['400', '401', '403', '404', '500', '503']) {
          const body = op.responses?.[status]?.content?.['application/json']?.schema;
          assert.ok(body?.properties?.error_code, `${method} ${path} declares ${status} with the error body`);
        }
        if (method !== 'get') assert.ok(statuses.includes('409'), `${method} ${path} declares 409`);
      }
    }
    const operationIds = Object.values(doc.paths as Record<string, Record<string, Operation>>).flatMap((m) => Object.values(m).map((o) => o.operationId));
    assert.equal(new Set(operationIds).size, operationIds.length, 'operation ids are unique');

    // Every resource the server registers has its five operations in the document.
    const expected = Object.values(h().deps.resources).map((r) => r.definition.path).flatMap((p) => [`POST ${p}`, `GET ${p}`, `GET ${p}/{id}`, `PATCH ${p}/{id}`, `DELETE ${p}/{id}`]).concat('GET /openapi.json');
    assert.deepEqual(routes.sort(), expected.sort());
  });

  it('never exposes a secret column in a response schema', async () => {
    const doc = JSON.stringify((await (await h().newAccount()).get('/openapi.json', { noVersion: true })).json);
    assert.ok(!doc.includes('secret_hash'));
  });
});
