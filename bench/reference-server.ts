// The reference of rows a–c: a minimal Fastify server, written by hand, in the benchmark's process,
// doing the real work of `GET /api_keys/{id}`, `GET /api_keys?limit=100` and `POST /api_keys` on
// the SQLite file edgeplane serves, and nothing else: no caches, no logging, no metrics, no hooks.
// Each request hashes the bearer token's secret (SHA-256), looks the key up with a prepared
// better-sqlite3 statement (with its owner's role, as edgeplane's authentication reads it),
// compares the hash, then reads the row or the page, or inserts the key, and answers through a
// response schema (fast-json-stringify, as edgeplane's routes do). The target of rows a–c is a
// ratio to this server, so that what edgeplane adds beyond that work is what is measured.
import { hash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { newId, randomBase62 } from '../src/core/ids.js';

export interface ReferenceServer {
  readonly url: string;
  close(): Promise<void>;
}

const TOKEN = /^Bearer ([0-9A-Za-z]{27})_([0-9A-Za-z]{32,128})$/;

const apiKeySchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    uri: { type: 'string' },
    description: { type: 'string' },
    metadata: { type: 'string' },
    created_at: { type: 'string' },
    token: { type: ['string', 'null'] },
    owner_id: { type: 'string' },
  },
} as const;

const pageSchema = {
  type: 'object',
  properties: { keys: { type: 'array', items: apiKeySchema }, uri: { type: 'string' }, next_page_uri: { type: ['string', 'null'] } },
} as const;

interface KeyRow {
  account_id: string;
  owner_id: string;
  secret_hash: string;
  role: string | null;
  active: number | null;
}

interface ApiKeyRow {
  id: string;
  account_id: string;
  owner_id: string;
  description: string;
  metadata: string;
  secret_hash: string;
  created_at: string;
}

/**
 * Starts the reference on `file` (the SQLite file of the server it is compared with, which has
 * migrated it), answering with `baseUrl` in its `uri` fields so that its bodies are as long as
 * that server's.
 */
export async function startReferenceServer(file: string, baseUrl: string): Promise<ReferenceServer> {
  const db = new Database(file);
  db.exec('pragma foreign_keys = ON');
  const keyById = db.prepare<[string], KeyRow>(
    'select k.account_id, k.owner_id, k.secret_hash, u.role, b.active from api_keys k left join users u on u.id = k.owner_id left join bot_users b on b.id = k.owner_id where k.id = ?',
  );
  const rowById = db.prepare<[string, string], ApiKeyRow>('select * from api_keys where account_id = ? and id = ?');
  const page = db.prepare<[string, number], ApiKeyRow>('select * from api_keys where account_id = ? order by id desc limit ?');
  const ownerExists = db.prepare<[string, string], { id: string }>('select id from users where account_id = ? and id = ?');
  const insertKey = db.prepare('insert into api_keys (id, account_id, owner_id, description, metadata, secret_hash, created_at) values (?, ?, ?, ?, ?, ?, ?)');
  const insertAudit = db.prepare(
    'insert into audit_events (id, account_id, created_at, operation, resource_id, parent_id, key_id, principal_id) values (?, ?, ?, ?, ?, null, ?, ?)',
  );
  const bumpRevision = db.prepare(
    'insert into config_revisions (account_id, revision) values (?, 1) on conflict (account_id) do update set revision = config_revisions.revision + 1',
  );

  /** The caller's key, or a 401 sent. */
  const authenticate = (request: FastifyRequest, reply: FastifyReply): (KeyRow & { keyId: string }) | undefined => {
    const match = TOKEN.exec(request.headers.authorization ?? '');
    const key = match ? keyById.get(`ak_${match[1]}`) : undefined;
    if (!match || !key || hash('sha256', match[2]!, 'hex') !== key.secret_hash || (key.role === null && !key.active)) {
      reply.code(401).send({ error: 'invalid token' });
      return undefined;
    }
    return { ...key, keyId: `ak_${match[1]}` };
  };
  const show = (row: ApiKeyRow, token: string | null = null) => ({
    id: row.id,
    uri: `${baseUrl}/api_keys/${row.id}`,
    description: row.description,
    metadata: row.metadata,
    created_at: row.created_at,
    token,
    owner_id: row.owner_id,
  });

  const app = Fastify();
  app.get<{ Params: { id: string } }>('/api_keys/:id', { schema: { response: { 200: apiKeySchema } } }, (request, reply) => {
    const key = authenticate(request, reply);
    if (!key) return reply;
    const row = rowById.get(key.account_id, request.params.id);
    if (!row) return reply.code(404).send({ error: 'not found' });
    return reply.send(show(row));
  });
  app.get<{ Querystring: { limit?: string } }>('/api_keys', { schema: { response: { 200: pageSchema } } }, (request, reply) => {
    const key = authenticate(request, reply);
    if (!key) return reply;
    const limit = Number(request.query.limit ?? 100);
    const rows = page.all(key.account_id, limit + 1);
    const shown = rows.slice(0, limit).map((row) => show(row));
    const uri = `${baseUrl}/api_keys`;
    const last = shown[shown.length - 1];
    return reply.send({ keys: shown, uri, next_page_uri: rows.length > limit && last ? `${uri}?before_id=${last.id}&limit=${limit}` : null });
  });
  // What edgeplane's create writes, in one transaction: the owner checked (a user: the
  // benchmark's caller), the key, its audit event and the account's configuration revision.
  const create = db.transaction((key: KeyRow & { keyId: string }, description: string) => {
    if (!ownerExists.get(key.account_id, key.owner_id)) return undefined;
    const secret = randomBase62(40);
    const row: ApiKeyRow = {
      id: newId('ak'),
      account_id: key.account_id,
      owner_id: key.owner_id,
      description,
      metadata: '',
      secret_hash: hash('sha256', secret, 'hex'),
      created_at: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    };
    insertKey.run(row.id, row.account_id, row.owner_id, row.description, row.metadata, row.secret_hash, row.created_at);
    insertAudit.run(newId('aud'), row.account_id, row.created_at, 'api_key.create', row.id, key.keyId, key.owner_id);
    bumpRevision.run(row.account_id);
    return show(row, `${row.id.slice(3)}_${secret}`);
  });
  app.post<{ Body: { description?: string } }>('/api_keys', { schema: { response: { 201: apiKeySchema } } }, (request, reply) => {
    const key = authenticate(request, reply);
    if (!key) return reply;
    const created = create.immediate(key, String(request.body?.description ?? ''));
    if (!created) return reply.code(404).send({ error: 'owner not found' });
    return reply.code(201).send(created);
  });

  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      await app.close();
      db.close();
    },
  };
}
