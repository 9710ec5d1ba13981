// Module replace bodies: bare (Go, Python clients) or wrapped (TypeScript client), ids matched
// against the path, the module validated either way.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../src/core/errors.js';
import { Body } from '../../src/core/schema.js';
import { moduleBody } from '../../src/crud/module-body.js';

const Backend = Body({ enabled: Type.Optional(Type.Boolean()), backend_id: Type.String() });
const parse = moduleBody<{ enabled?: boolean; backend_id: string }>(Backend);
const edge = { id: 'edghts_2abcdefghijklmnopqrstuvwxyz' };
const route = { edge_id: edge.id, id: 'edghtsrt_2abcdefghijklmnopqrstuvwxy' };

function refused(fn: () => unknown, code: string, includes?: string): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof ApiError, String(error));
    assert.equal(error.errorCode, code, error.message);
    if (includes) assert.ok(error.message.includes(includes), error.message);
    return true;
  });
}

describe('module bodies', () => {
  it('accepts the module itself (Go and Python clients)', () => {
    assert.deepEqual(parse({ enabled: true, backend_id: 'bkdtg_1' }, edge), { enabled: true, backend_id: 'bkdtg_1' });
  });

  it("accepts the TypeScript client's {id, module} for an edge module", () => {
    assert.deepEqual(parse({ id: edge.id, module: { backend_id: 'bkdtg_1' } }, edge), { backend_id: 'bkdtg_1' });
  });

  it('accepts {edge_id, id, module} for a route module', () => {
    assert.deepEqual(parse({ edge_id: route.edge_id, id: route.id, module: { enabled: false, backend_id: 'b' } }, route), { enabled: false, backend_id: 'b' });
  });

  it('accepts a wrapper without ids', () => {
    assert.deepEqual(parse({ module: { backend_id: 'b' } }, edge), { backend_id: 'b' });
  });

  it("refuses a wrapper whose id is not the path's, naming both, with ERR_EP_256", () => {
    refused(() => parse({ id: 'edghts_other', module: { backend_id: 'b' } }, edge), 'ERR_EP_256', 'edghts_other');
    refused(() => parse({ id: 'edghts_other', module: { backend_id: 'b' } }, edge), 'ERR_EP_256', edge.id);
  });

  it("refuses a route wrapper whose edge_id is not the path's", () => {
    refused(() => parse({ edge_id: 'edghts_other', id: route.id, module: { backend_id: 'b' } }, route), 'ERR_EP_256', 'edge_id');
  });

  it('refuses an unknown field inside a wrapped module, naming it under module.', () => {
    refused(() => parse({ id: edge.id, module: { backend_id: 'b', colour: 'red' } }, edge), 'ERR_EP_214', "'module.colour'");
  });

  it('refuses an unknown field in a bare module', () => {
    refused(() => parse({ backend_id: 'b', colour: 'red' }, edge), 'ERR_EP_214', "'colour'");
  });

  it('treats a body with other keys beside module as bare, so the extra keys are refused', () => {
    refused(() => parse({ id: edge.id, module: { backend_id: 'b' }, backend_id: 'b' }, edge), 'ERR_EP_214', "'id'");
  });

  it('refuses a wrapped module of the wrong type or missing a required field', () => {
    refused(() => parse({ id: edge.id, module: 'x' }, edge), 'ERR_EP_215', "'module'");
    refused(() => parse({ id: edge.id, module: { enabled: true } }, edge), 'ERR_EP_215', "'module.backend_id'");
  });

  it('refuses a module schema with a field named module, which would be ambiguous', () => {
    assert.throws(() => moduleBody(Body({ module: Type.String() })), /named module/);
  });
});
