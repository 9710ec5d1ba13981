// Module kinds declared with defineModule: a stored value is checked against the module's stored
// schema whenever it is read, and what every module kind's parse makes fits that schema, so the
// edges that read module values get the type the definition says.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import { defineModule } from '../../src/crud/modules.js';
import { backendModule, mutualTlsModule, policyModule, tlsTerminationModule, trafficPolicyModule } from '../../src/edge-config/modules/edge-modules.js';
import { routeModules } from '../../src/edge-config/modules/route-modules.js';
import { Sealer } from '../../src/lib/crypto/sealer.js';

const ctx = { baseUrl: 'https://api.test' } as never;

describe('defineModule', () => {
  const counter = defineModule({
    name: 'counter',
    title: 'counter',
    request: Type.Object({ start: Type.Integer() }),
    stored: Type.Object({ enabled: Type.Boolean(), start: Type.Integer({ minimum: 0 }) }),
    response: Type.Object({ start: Type.Integer() }),
    parse: (body) => ({ value: { enabled: true, start: body.start }, refs: [] }),
    toApi: (value) => ({ start: value.start }),
  });

  it('reads a value of the stored shape as it is', () => {
    const value = { enabled: true, start: 3 };
    assert.equal(counter.read(value), value);
  });

  it('refuses a value that is not of the stored shape, naming where', () => {
    assert.throws(() => counter.read({ enabled: 'yes', start: 3 }), /a counter module value does not have its stored shape: \/enabled must be boolean/);
    assert.throws(() => counter.read({ enabled: true }), /must have required property 'start'/);
    // What parse made from a request the request schema allowed, but the stored schema does not.
    assert.throws(() => counter.read(counter.parse({ start: -1 }, ctx).value), /\/start must be >= 0/);
  });
});

describe('the module kinds', () => {
  const sealer = new Sealer(randomBytes(32));
  const bodies: [name: string, body: unknown][] = [
    ['backend', { backend_id: 'bkdsc_1' }],
    ['ip_restriction', { ip_policy_ids: ['ipp_1'] }],
    ['circuit_breaker', {}],
    ['compression', { enabled: false }],
    ['request_headers', { add: { 'X-A': 'b' }, remove: ['x-c'] }],
    ['response_headers', {}],
    ['webhook_verification', { provider: 'github', secret: 's' }],
    ['oauth', { provider: { github: { client_id: 'id', client_secret: 'secret', teams: ['t'] } } }],
    ['oidc', { issuer: 'https://idp.test', client_id: 'id', client_secret: 'secret' }],
    ['websocket_tcp_converter', {}],
    ['user_agent_filter', { allow: ['^curl/'] }],
    ['policy', { inbound: [{ name: 'r', expressions: [], actions: [{ type: 'deny' }] }] }],
    ['traffic_policy', { value: '{"on_http_request": []}' }],
  ];

  it('every route module kind parses a good request into a value of its stored shape', async () => {
    const modules = new Map(routeModules(sealer).map((m) => [m.name, m]));
    for (const [name, body] of bodies) {
      const m = modules.get(name);
      assert.ok(m, `a route has the ${name} module`);
      const parsed = m.parse(body as never, ctx).value;
      const value = m.finish ? await m.finish(parsed, ctx) : parsed;
      assert.deepEqual(m.read(JSON.parse(JSON.stringify(value))), value, `${name} stores what it parsed`);
    }
  });

  it('the edge module kinds do too', () => {
    for (const [m, body] of [
      [backendModule, { backend_id: 'bkdsc_1' }],
      [mutualTlsModule, { certificate_authority_ids: ['ca_1'] }],
      [tlsTerminationModule, { terminate_at: 'upstream' }],
      [policyModule('tcp'), { inbound: [] }],
      [trafficPolicyModule('tcp'), { value: 'on_tcp_connect: []' }],
    ] as const) {
      const value = m.parse(body as never, ctx).value;
      assert.deepEqual(m.read(JSON.parse(JSON.stringify(value))), value, `${m.name} stores what it parsed`);
    }
  });

  it('refuses a stored value another module kind made', () => {
    const [backend, ipRestriction] = routeModules(sealer);
    assert.throws(
      () => ipRestriction!.read(backend!.parse({ backend_id: 'bkdsc_1' } as never, ctx).value),
      /ip_restriction module value does not have its stored shape/,
    );
  });
});
