// The statuses of the OpenAPI document against the server's answers: every operation is driven
// with the requests every operation can be sent (no credentials, no version, a caller an enforced
// IP restriction refuses, an account past its rate limit, a store that cannot be reached, an empty
// or unknown id, an oversized or mistyped body), and every status it answers must be declared for
// it, with the headers the document promises. The other way round: every status it declares is
// answered, but those no cheap request provokes (408 a slow body, 409 a route's own conflicts,
// 500 a bug, and 404 on a create whose path names nothing).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createDeps } from '../../src/deps.js';
import { openStore, type Store } from '../../src/db/store.js';
import { describeEachStore, rawRequest, startHarness, type Api, type Harness, type Response } from '../helpers/harness.js';

type Header = { schema?: object; description?: string };
type Operation = { operationId: string; responses: Record<string, { headers?: Record<string, Header> }> };
type Doc = { paths: Record<string, Record<string, Operation>> };

/** A token of the right form: its lookup reaches the store, whatever the store holds. */
const SOME_TOKEN = `${'a'.repeat(27)}_${'b'.repeat(40)}`;
/** One byte over the body limit (1 MiB). */
const OVERSIZED = JSON.stringify({ description: 'x'.repeat(1024 * 1024) });
/** The statuses no cheap request provokes; see the top of this file. */
const NOT_PROVOKED = new Set(['408', '409', '500']);
/** Operations probed at once. */
const CONCURRENCY = 8;

interface Target {
  route: string;
  method: string;
  /** The path template, `{id}` and all. */
  template: string;
  op: Operation;
}

/** The path with every `{param}` replaced by `value`. */
const fill = (template: string, value: string) => template.replace(/\{\w+\}/g, value);

/** Every request to send to `t`, by name: where it goes and what it carries. */
function probes(t: Target, servers: { main: string; limited: string; storeDown: string }, tokens: { valid: string; restricted: string; limited: string }) {
  const version = { 'Service-Version': '2' };
  const as = (token: string) => ({ ...version, Authorization: `Bearer ${token}` });
  const json = { 'Content-Type': 'application/json' };
  const takesJson = ['POST', 'PUT', 'PATCH'].includes(t.method);
  const missing = fill(t.template, 'zz_missing');
  const list: [string, string, string, Record<string, string>, string?][] = [
    ['no credentials', servers.main, missing, version],
    ['no version header', servers.main, missing, { Authorization: `Bearer ${tokens.valid}` }],
    ['an enforced IP restriction', servers.main, missing, as(tokens.restricted)],
    ['the rate limit', servers.limited, missing, as(tokens.limited)],
    ['the store unreachable', servers.storeDown, missing, as(SOME_TOKEN)],
    ['unknown ids', servers.main, missing, takesJson ? { ...as(tokens.valid), ...json } : as(tokens.valid), takesJson ? '{}' : undefined],
    ['an oversized body', servers.main, missing, { ...as(tokens.valid), ...json }, OVERSIZED],
    ['a text/plain body', servers.main, missing, { ...as(tokens.valid), 'Content-Type': 'text/plain' }, 'x'],
  ];
  if (t.template.includes('{')) list.push(['an empty id', servers.main, fill(t.template, ''), as(tokens.valid)]);
  return list;
}

/** A server on a PostgreSQL address where nothing listens: every query fails to connect. */
async function storeDownServer(): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const config = loadConfig({ tls: 'off', listen: '127.0.0.1:0', logLevel: 'silent' });
  config.database = { kind: 'postgres', url: 'postgres://postgres@127.0.0.1:1/test' };
  const store: Store = openStore(config.database);
  const app: FastifyInstance = await buildApp(createDeps({ config, logger: pino({ level: 'silent' }), store, masterKey: randomBytes(32) }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    baseUrl: `http://127.0.0.1:${(app.server.address() as { port: number }).port}`,
    async close() {
      await app.close();
      await store.close();
    },
  };
}

/** An account whose every request is refused by its enforced `api` IP restriction (it allows only 10.0.0.0/8). */
async function restrictedAccount(h: Harness): Promise<Api> {
  const api = await h.newAccount();
  const policy = await api.post('/ip_policies', {});
  assert.equal(policy.status, 201, policy.text);
  const rule = await api.post('/ip_policy_rules', { ip_policy_id: policy.json.id, cidr: '10.0.0.0/8', action: 'allow' });
  assert.equal(rule.status, 201, rule.text);
  const restriction = await api.post('/ip_restrictions', { type: 'api', enforced: true, ip_policy_ids: [policy.json.id] });
  assert.equal(restriction.status, 201, restriction.text);
  return api;
}

describeEachStore(
  'OpenAPI: the statuses of each operation',
  (h) => {
    let limited: Harness;
    let storeDown: { baseUrl: string; close(): Promise<void> };
    let doc: Doc;
    /** Per operation (`GET /api_keys/{id}`), each status answered and the requests that got it. */
    const answered = new Map<string, Map<string, string[]>>();
    /** Declared headers an answer lacked. */
    const missingHeaders: string[] = [];

    before(async () => {
      // One request a minute: after its first, each request of an account is over the limit.
      limited = await startHarness(h().kind, { rateLimit: { perMinute: 1 }, logLevel: 'silent' });
      storeDown = await storeDownServer();
      const main = await h().newAccount();
      doc = (await main.get('/openapi.json', { noVersion: true })).json;
      const restricted = await restrictedAccount(h());
      const spent = await limited.newAccount();
      assert.equal((await spent.get('/api_keys')).status, 200, 'the first request is within the limit');
      const servers = { main: h().baseUrl, limited: limited.baseUrl, storeDown: storeDown.baseUrl };
      const tokens = { valid: main.token!, restricted: restricted.token!, limited: spent.token! };

      const targets: Target[] = Object.entries(doc.paths).flatMap(([template, methods]) =>
        Object.entries(methods).map(([method, op]) => ({ route: `${method.toUpperCase()} ${template}`, method: method.toUpperCase(), template, op })),
      );
      const probe = async (t: Target) => {
        const statuses = new Map<string, string[]>();
        answered.set(t.route, statuses);
        for (const [name, server, path, headers, body] of probes(t, servers, tokens)) {
          const res: Response = await rawRequest(server, t.method, path, headers, body);
          const status = String(res.status);
          statuses.set(status, [...(statuses.get(status) ?? []), name]);
          for (const header of Object.keys(t.op.responses[status]?.headers ?? {})) {
            if (!res.headers.has(header)) missingHeaders.push(`${t.route} answered ${status} to ${name} without ${header}`);
          }
        }
      };
      for (let i = 0; i < targets.length; i += CONCURRENCY) await Promise.all(targets.slice(i, i + CONCURRENCY).map(probe));
    });

    after(async () => {
      await storeDown?.close();
      await limited?.close();
    });

    it('probed every operation of the document', () => {
      const operations = Object.values(doc.paths).reduce((n, methods) => n + Object.keys(methods).length, 0);
      assert.ok(operations > 200, `${operations} operations`);
      assert.equal(answered.size, operations);
    });

    it('declares every status an operation answers, with the headers it sends', () => {
      const undeclared: string[] = [];
      for (const [route, statuses] of answered) {
        const [method, template] = route.split(' ') as [string, string];
        const declared = doc.paths[template]![method.toLowerCase()]!.responses;
        for (const [status, names] of statuses) if (!(status in declared)) undeclared.push(`${route} answered ${status} to ${names.join(', ')}`);
      }
      assert.deepEqual(undeclared, []);
      assert.deepEqual(missingHeaders, []);
    });

    it('answers every status it declares (but 408, 409, 500, and 404 where the path names nothing)', () => {
      const unanswered: string[] = [];
      for (const [route, statuses] of answered) {
        const [method, template] = route.split(' ') as [string, string];
        for (const status of Object.keys(doc.paths[template]![method.toLowerCase()]!.responses)) {
          if (/^2\d\d$/.test(status) || NOT_PROVOKED.has(status) || statuses.has(status)) continue;
          if (status === '404' && !template.includes('{')) continue;
          unanswered.push(`${route} declares ${status}; answered only ${[...statuses.keys()].join(', ')}`);
        }
      }
      assert.deepEqual(unanswered, []);
    });

    it('limits and refuses only authenticated operations: /openapi.json declares and answers 200 alone', async () => {
      const statuses = answered.get('GET /openapi.json')!;
      assert.deepEqual([...statuses.keys()], ['200']);
      assert.deepEqual(Object.keys(doc.paths['/openapi.json']!.get!.responses), ['200']);
    });
  },
  // The main server's limit is far above what the probes send, so that only the limited server answers 429.
  { rateLimit: { perMinute: 1_000_000 }, logLevel: 'silent' },
);
