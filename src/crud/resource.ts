// The generic service: a resource kind's definition becomes create / get / list / update /
// delete with every convention of the API: account-scoped queries, one transaction per mutation,
// pagination by position, "PATCH changes only what is present", references checked in the
// transaction, referrers refused or removed on delete, 404 for ids of other accounts and wrong
// prefixes, one authorization decision per operation, and the mutation observers told in the
// transaction. Its parts: the kind's rows (rows.ts), join fields (links.ts), modules
// (module-operations.ts) and what surrounds every mutation (mutation.ts).
import type { Static } from '@sinclair/typebox';
import type { RequestContext } from '../core/context.js';
import { errors } from '../core/errors.js';
import { hasPrefix, newId } from '../core/ids.js';
import { rfc3339 } from '../core/time.js';
import type { MutationObserver } from '../db/observers.js';
import { read, readSoon, type Store } from '../db/store.js';
import { then, type MaybePromise } from '../core/maybe.js';
import { authorizerOf } from './authorization.js';
import {
  detachOperationId,
  moduleOperationId,
  operationId,
  type AnyDefinition,
  type ResourceDefinition,
  type ResourceSchemas,
  type ResourceTable,
} from './definition.js';
import type { Kinds } from './kinds.js';
import type { ColumnReference } from './references.js';
import { ownerModules } from './module-operations.js';
import { kindMutations } from './mutation.js';
import { kindRows, type PathIds, type Row } from './rows.js';
import type { ScopedDb } from '../db/scoped.js';

export type { PathIds, ResourceSchemas };

export interface ListQueryInput {
  limit?: number;
  before_id?: string;
  beforeId?: string;
}

export interface Resource<S extends ResourceSchemas = ResourceSchemas> {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- services of every kind are registered alike
  readonly definition: ResourceDefinition<any, S>;
  create(ctx: RequestContext, body: Static<S['create']>, path?: PathIds): Promise<Static<S['resource']>>;
  /**
   * Whether `ctx` may create with `body` now, as `create` decides it (the parent exists, the
   * kind's `authorize`), read outside any transaction: checked before an Idempotency-Key's
   * recorded answer is replayed, so a request that would be refused now is refused.
   */
  authorizeCreate(ctx: RequestContext, body: Static<S['create']>, path?: PathIds): Promise<void>;
  /** At once when the read was (SQLite, see core/maybe.ts), else a promise. */
  get(ctx: RequestContext, path: PathIds): MaybePromise<Static<S['resource']>>;
  /** At once when the read was (SQLite), else a promise. */
  list(ctx: RequestContext, query: ListQueryInput, path?: PathIds): MaybePromise<ListPage<S>>;
  update(ctx: RequestContext, path: PathIds, body: Static<S['update']> & { id?: string }): Promise<Static<S['resource']>>;
  remove(ctx: RequestContext, path: PathIds): Promise<void>;
  /** Takes the named part off the resource (the definition's `detach`). */
  detach(ctx: RequestContext, path: PathIds, part: string): Promise<void>;
  /** A module of the resource: its response shape, or 404 when it is not set. */
  getModule(ctx: RequestContext, path: PathIds, name: string): Promise<Record<string, unknown>>;
  /** Sets a module of the resource whole. */
  putModule(ctx: RequestContext, path: PathIds, name: string, body: unknown): Promise<Record<string, unknown>>;
  /** Removes a module of the resource; nothing set is a 204 too. */
  deleteModule(ctx: RequestContext, path: PathIds, name: string): Promise<void>;
}

/** A list response: the page under the kind's list key, `uri` and `next_page_uri`. */
export type ListPage<S extends ResourceSchemas> = Record<string, Static<S['resource']>[] | string | null>;

function defaultPatch(body: Record<string, unknown>, notColumns: ReadonlySet<string>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([k, v]) => v !== null && v !== undefined && !notColumns.has(k)));
}

export function createResource<T extends ResourceTable, S extends ResourceSchemas>(
  store: Store,
  kinds: Kinds,
  definition: ResourceDefinition<T, S>,
  /** Told of every mutation in its transaction (the audit log, Idempotency-Key marks). */
  observers: readonly MutationObserver[],
): Resource<S> {
  const d = definition as unknown as AnyDefinition;
  const { table, prefix } = d;
  const rows = kindRows(store, kinds, d);
  const { links } = rows;
  const modules = ownerModules(kinds, d);
  const mutations = kindMutations(store, d, observers, rows);
  const authorize = authorizerOf(d);
  const notColumns = new Set([...links.names, ...modules.names]);
  const columnReferences = (d.references ?? []).filter((r): r is ColumnReference<Row> => r.in === 'column' && !(d.parent && r.column === d.parent.column));
  const show = (row: Row, ctx: RequestContext, path: PathIds) => rows.present<S>(row, rows.view(ctx), path);

  /** Column references of the row that are set, checked to exist in the account. */
  const checkReferences = async (db: ScopedDb, row: Record<string, unknown>) => {
    for (const r of columnReferences) {
      const value = row[r.column];
      if (typeof value === 'string') await kinds.requireExisting(db, [value], r.kinds, r.notFound);
    }
  };

  return {
    definition: d,

    async create(ctx, body, path = {}) {
      if (!d.prepare) throw new Error(`${d.kind} has no create`);
      const bodyObject = body as Record<string, unknown>;
      // Refused before `prepare`, whose work may be costly (key generation); decided again in the transaction.
      await authorize(ctx, 'create', { body }, rows.reader(ctx));
      const parsedLinks = links.parse(bodyObject);
      const parsedModules = await modules.parseSent(ctx, bodyObject);
      const prepared = await d.prepare(ctx, body, rows.reader(ctx));
      const undeclared = Object.keys(prepared.reveal ?? {}).filter((field) => !d.shownOnce?.includes(field));
      if (undeclared.length > 0) throw new Error(`${d.kind} reveals ${undeclared.join(', ')}, which its definition's shownOnce does not list`);
      const row = {
        ...prepared.row,
        ...(d.parent && { [d.parent.column]: path.parentId }),
        id: prepared.id ?? newId(prefix),
        account_id: ctx.scope.accountId,
        created_at: rfc3339(ctx.now),
      } as Row;
      const shown = await mutations.commit(
        ctx,
        'create',
        async (db) => {
          await links.serialize(db, parsedLinks);
          await rows.loadParent(db, path, rows.parentLock);
          await authorize(ctx, 'create', { body }, db);
          if (d.hooks?.allocate) Object.assign(row, await d.hooks.allocate(db, ctx, row));
          await checkReferences(db, row);
          await d.hooks?.beforeCreate?.(db, ctx, row);
          const { account_id: _account, ...columns } = row;
          await db.insert(table, columns as never);
          await links.write(db, row.id, parsedLinks);
          await modules.write(db, row, parsedModules, new Map());
          await mutations.written(db, ctx, operationId(d.kind, 'create'), row, { change: 'create', body: bodyObject });
          return (await rows.expand(db, [row]))[0]!;
        },
        () => row,
      );
      return { ...show(shown, ctx, path), ...prepared.reveal };
    },

    async authorizeCreate(ctx, body, path = {}) {
      const db = rows.reader(ctx);
      await rows.loadParent(db, path);
      await authorize(ctx, 'create', { body }, db);
    },

    // The reads chain their steps with `then` (core/maybe.ts): on SQLite a get or list of a kind
    // that shows its rows as stored and decides without reading (most kinds) runs in one step.
    get(ctx, path) {
      const db = rows.reader(ctx);
      const row = readSoon(() =>
        then(rows.load(db, path), (found) =>
          then(authorize(ctx, 'get', { row: found }, db), () => (rows.plain ? found : rows.expand(db, [found]).then((expanded) => expanded[0]!))),
        ),
      );
      return then(row, (shown) => show(shown, ctx, path));
    },

    list(ctx, query, path = {}) {
      if (query.before_id !== undefined && query.beforeId !== undefined) throw errors.beforeIdTwice();
      const limit = query.limit ?? 100;
      const beforeId = query.before_id ?? query.beforeId;
      // A cursor is a position, not a reference: any well-formed id of this kind will do, whether
      // or not it still exists, and it is only compared with the ids of this account.
      if (beforeId !== undefined && !hasPrefix(beforeId, prefix)) {
        throw errors.invalidBeforeId({ value: beforeId, prefix, parameter: query.before_id === undefined ? 'beforeId' : 'before_id' });
      }
      const db = rows.reader(ctx);
      const equal = d.parent ? { column: d.parent.column, value: path.parentId! } : undefined;
      const found = readSoon(() =>
        then(d.parent ? rows.loadParent(db, path) : undefined, () =>
          then(authorize(ctx, 'list', {}, db), () =>
            then(db.page(rows.readFrom, { limit, beforeId, equal: equal as never }), ({ rows: page, hasMore }) =>
              rows.plain ? { rows: page as Row[], hasMore } : rows.expand(db, page as Row[]).then((expanded) => ({ rows: expanded, hasMore })),
            ),
          ),
        ),
      );
      return then(found, ({ rows: page, hasMore }) => {
        // A list's own uri is absolute even where its items' are paths (agent ingresses, as the spec shows).
        const listUri = `${ctx.baseUrl}${rows.collectionPath(path)}`;
        const last = page[page.length - 1];
        const view = rows.view(ctx);
        const shown = new Array<Static<S['resource']>>(page.length);
        for (let i = 0; i < page.length; i++) shown[i] = rows.present<S>(page[i]!, view, path);
        return { [d.listKey!]: shown, uri: listUri, next_page_uri: hasMore && last ? `${listUri}?before_id=${last.id}&limit=${limit}` : null };
      });
    },

    async update(ctx, path, body) {
      const { id: sentId, ...fields } = body as Record<string, unknown> & { id?: string };
      // Every official client sends the id in the body of an update: the same id is accepted.
      if (sentId !== undefined && sentId !== null && sentId !== path.id) throw errors.idMismatch({ sent: String(sentId), path: path.id ?? '' });
      const provided = Object.values(fields).filter((v) => v !== null && v !== undefined);
      if (provided.length === 0) throw errors.noUpdatableFields({ fields: Object.keys(d.schemas.update.properties) });
      const parsedLinks = links.parse(fields);
      const parsedModules = await modules.parseSent(ctx, fields);
      let attempted: Record<string, unknown> = fields;
      const updated = await mutations.commit(
        ctx,
        'update',
        async (db) => {
          await links.serialize(db, parsedLinks);
          const current = await rows.load(db, path, true);
          await authorize(ctx, 'update', { row: current, body: fields }, db);
          const changes = (d.patch ? d.patch(ctx, fields, current) : defaultPatch(fields, notColumns)) as Partial<Row>;
          const row = { ...current, ...changes } as Row;
          attempted = row;
          await checkReferences(db, changes);
          await d.hooks?.beforeUpdate?.(db, ctx, current, changes);
          await db.update(table, { id: current.id } as never, changes as never);
          await links.write(db, row.id, parsedLinks);
          if (parsedModules.length > 0) await modules.write(db, row, parsedModules, await modules.stored(db, row.id));
          await mutations.written(db, ctx, operationId(d.kind, 'update'), row, { change: 'update', body: fields });
          return (await rows.expand(db, [row]))[0]!;
        },
        () => attempted,
      );
      return show(updated, ctx, path);
    },

    async detach(ctx, path, part) {
      const take = d.detach?.[part];
      if (!take) throw new Error(`${d.kind} has no part ${part} to detach`);
      await mutations.changeOwner(ctx, path, detachOperationId(d.kind, part), undefined, async (db, current) => {
        const changes = take(current, ctx) as Partial<Row>;
        if (Object.keys(changes).length === 0) return undefined;
        await d.hooks?.beforeUpdate?.(db, ctx, current, changes);
        await db.update(table, { id: current.id } as never, changes as never);
        return { ...current, ...changes } as Row;
      });
    },

    async getModule(ctx, path, name) {
      const m = modules.named(name);
      const db = rows.reader(ctx);
      const value = await read(async () => {
        const owner = await rows.load(db, path);
        await authorize(ctx, 'get', { row: owner }, db);
        return (await modules.stored(db, owner.id)).get(name);
      });
      if (value === undefined) throw errors.moduleNotSet({ module: m.name, owner: path.id ?? '' });
      return m.toApi(value, rows.view(ctx));
    },

    async putModule(ctx, path, name, body) {
      const parsed = await modules.parse(modules.named(name), body, ctx);
      await mutations.changeOwner(ctx, path, moduleOperationId(d.kind, name, 'replace'), { [name]: body }, async (db, current) => {
        await modules.write(db, current, [parsed], await modules.stored(db, current.id));
        return current;
      });
      return parsed[0].toApi(parsed[1].value, rows.view(ctx));
    },

    async deleteModule(ctx, path, name) {
      modules.named(name);
      await mutations.changeOwner(ctx, path, moduleOperationId(d.kind, name, 'delete'), undefined, async (db, current) => {
        await modules.remove(db, current, name);
        return current;
      });
    },

    async remove(ctx, path) {
      await mutations.commit(ctx, 'delete', async (db) => {
        const current = await rows.load(db, path, true);
        await authorize(ctx, 'delete', { row: current }, db);
        await d.hooks?.beforeDelete?.(db, ctx, current);
        const referrers = await kinds.release(db, d.kind, [current.id]);
        if (referrers.length > 0) throw d.inUse ? d.inUse(current.id, referrers) : errors.resourceInUse({ title: d.title, id: current.id, referrers });
        await kinds.purge(db, d.kind, [current.id]);
        await mutations.written(db, ctx, operationId(d.kind, 'delete'), current, { change: 'delete' });
        return current;
      });
    },
  };
}
