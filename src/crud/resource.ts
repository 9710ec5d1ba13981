// The generic service: a resource kind's definition becomes create / get / list / update /
// delete with every convention of the API: account-scoped queries, one transaction per mutation,
// pagination by position, "PATCH changes only what is present", references checked in the
// transaction, referrers refused or removed on delete, 404 for ids of other accounts and wrong
// prefixes, one authorization decision per operation, and an audit event per mutation in its
// transaction.
import type { Static } from '@sinclair/typebox';
import type { RequestContext } from '../core/context.js';
import { errors, type ApiError } from '../core/errors.js';
import { hasPrefix, newId } from '../core/ids.js';
import { rfc3339 } from '../core/time.js';
import { ScopedDb, scopedReader, type Lock, type RowOf } from '../db/scoped.js';
import { observeMutation, type MutationObserver } from '../db/observers.js';
import { ForeignKeyViolation, read, UniqueViolation, withTx, type Executor, type Store } from '../db/store.js';
import {
  detachOperationId,
  isWrite,
  moduleOperationId,
  operationId,
  type AnyDefinition,
  type LinkField,
  type LinkItem,
  type Operation,
  type Subject,
  type ResourceDefinition,
  type ResourceSchemas,
  type ResourceTable,
  type View,
} from './definition.js';
import { readLinks, writeLinks, type Kinds } from './kinds.js';
import { readModules, removeModules, showModules, writeModule, type ModuleDefinition, type ModuleValue, type StoredModule } from './modules.js';

export type { ResourceSchemas };

export interface ListQueryInput {
  limit?: number;
  before_id?: string;
  beforeId?: string;
}

/** The path's ids: the resource's own and, for a kind under a parent, the parent's. */
export interface PathIds {
  id?: string;
  parentId?: string;
}

export interface Resource<S extends ResourceSchemas = ResourceSchemas> {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- services of every kind are registered alike
  readonly definition: ResourceDefinition<any, S, any>;
  create(ctx: RequestContext, body: Static<S['create']>, path?: PathIds): Promise<Static<S['resource']>>;
  /**
   * Whether `ctx` may create with `body` now, as `create` decides it (the parent exists, the
   * kind's `authorize`), read outside any transaction: checked before an Idempotency-Key's
   * recorded answer is replayed, so a request that would be refused now is refused.
   */
  authorizeCreate(ctx: RequestContext, body: Static<S['create']>, path?: PathIds): Promise<void>;
  get(ctx: RequestContext, path: PathIds): Promise<Static<S['resource']>>;
  list(ctx: RequestContext, query: ListQueryInput, path?: PathIds): Promise<ListPage<S>>;
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

type Row = { id: string; account_id: string; created_at: string } & Record<string | symbol, unknown>;

/** Where a row being shown carries its stored modules. */
const MODULES = Symbol('modules');

/** Read_only may only read: the default authorization of every kind. */
export function readOnlyMayOnlyRead(ctx: RequestContext, operation: Operation): void {
  if (isWrite(operation) && ctx.principal.role === 'read_only') throw errors.readOnlyOwner({ role: ctx.principal.role });
}

/** The default and an admin-only variant: "Only admins may <action>." for every write. */
export function adminWrites(action: string) {
  return (ctx: RequestContext, operation: Operation): void => {
    readOnlyMayOnlyRead(ctx, operation);
    if (isWrite(operation) && ctx.principal.role !== 'admin') throw errors.adminRequired({ action });
  };
}

/**
 * The authorization of a kind each of whose rows has an owner (`owner_id`: a user or bot), such as
 * API keys and credentials: read_only may only read; others create and change their own rows
 * only; admins every row, and rows for any owner.
 */
export function ownerManaged(refuse: { otherOwner(): ApiError; notOwner(id: string): ApiError }) {
  return (ctx: RequestContext, operation: Operation, { row, body }: Subject<{ id: string; owner_id: string }>): void => {
    readOnlyMayOnlyRead(ctx, operation);
    if (ctx.principal.role === 'admin') return;
    const ownerId = operation === 'create' ? ((body as { owner_id?: string }).owner_id ?? ctx.principal.id) : row?.owner_id;
    if (ownerId === ctx.principal.id) return;
    if (operation === 'create') throw refuse.otherOwner();
    if (operation === 'update' || operation === 'delete') throw refuse.notOwner(row!.id);
  };
}

function defaultPatch(body: Record<string, unknown>, notColumns: ReadonlySet<string>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([k, v]) => v !== null && v !== undefined && !notColumns.has(k)));
}

/** Unique and foreign-key violations that the kind does not map: a 409, never a 500. */
function translateConflict(definition: AnyDefinition, error: unknown, row: Record<string, unknown>): unknown {
  if (error instanceof UniqueViolation) {
    return (
      definition.hooks?.onUniqueViolation?.(error.target, row) ??
      errors.conflict({ title: definition.title, reason: `it would duplicate a value that must be unique (${error.target})` })
    );
  }
  if (error instanceof ForeignKeyViolation)
    return errors.conflict({ title: definition.title, reason: 'a resource it names was deleted at the same time, or one being deleted is still named' });
  return error;
}

export function createResource<T extends ResourceTable, S extends ResourceSchemas>(
  store: Store,
  kinds: Kinds,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- link fields are checked by defineResource
  definition: ResourceDefinition<T, S, any>,
  /** Told of every mutation in its transaction (the audit log, Idempotency-Key marks). */
  observers: readonly MutationObserver[],
): Resource<S> {
  const d = definition as unknown as AnyDefinition;
  const { table, prefix, title } = d;
  const links = (d.links ?? {}) as Record<string, LinkField<unknown>>;
  const linkNames = Object.keys(links);
  const modules = d.modules ?? [];
  const moduleNamed = new Map(modules.map((m) => [m.name, m]));
  const notColumns = new Set([...linkNames, ...moduleNamed.keys()]);
  const authorize = d.authorize ?? readOnlyMayOnlyRead;
  const parentKind = d.parent ? kinds.named(d.parent.kind) : undefined;
  const parentLock: Lock = d.parent?.serialize ? 'update' : 'key share';

  const scoped = (executor: Executor, ctx: RequestContext) => new ScopedDb(executor, ctx.scope, store.dialect);
  const reader = (ctx: RequestContext) => scopedReader(store, ctx.scope);
  const view = (ctx: RequestContext): View => ({ ...ctx, ref: (id: string) => kinds.ref(ctx.baseUrl, id) });
  const collectionPath = (path: PathIds) => (d.parent ? d.path.replace(`:${d.parent.param}`, path.parentId ?? '') : d.path);
  const uriOf = (ctx: RequestContext, path: PathIds, id: string) => `${d.uri === 'path' ? '' : ctx.baseUrl}${collectionPath(path)}/${id}`;

  /** The parent named in the path, or 404 (a parent of another account is not found either); locked against deletion in a write. */
  const loadParent = async (db: ScopedDb, path: PathIds, lock?: Lock) => {
    if (!d.parent || !parentKind) return;
    const id = path.parentId ?? '';
    if (!hasPrefix(id, parentKind.prefix)) throw errors.invalidPathId({ value: id, title: parentKind.title, prefix: parentKind.prefix });
    if (!(await db.exists(parentKind.table, id, lock))) throw errors.notFound({ title: parentKind.title, id });
  };

  /**
   * The row, or 404 when the id is malformed, of another prefix, not in this account or not
   * under the parent. `forWrite`: locked until the transaction ends, so that checks made on it
   * (who still references it) hold until the change commits.
   */
  const load = async (db: ScopedDb, path: PathIds, forWrite = false): Promise<Row> => {
    if (d.parent) await loadParent(db, path, forWrite ? parentLock : undefined);
    const id = path.id ?? '';
    if (!hasPrefix(id, prefix)) throw errors.invalidPathId({ value: id, title, prefix });
    const row = (await db.find(table, id, forWrite ? 'update' : undefined)) as Row | undefined;
    if (!row || (d.parent && row[d.parent.column] !== path.parentId)) throw errors.notFound({ title, id });
    return row;
  };

  /** Adds each link field's items to rows about to be shown: one query per field for a page. */
  const expand = async (db: ScopedDb, found: Row[]): Promise<Row[]> => {
    const rows = d.hooks?.expand && found.length > 0 ? ((await d.hooks.expand(db, found)) as Row[]) : found;
    if ((linkNames.length === 0 && modules.length === 0) || rows.length === 0) return rows;
    const ids = rows.map((r) => r.id);
    const byField = await Promise.all(linkNames.map(async (name) => [name, await readLinks(db, links[name]!, ids)] as const));
    const stored = modules.length > 0 ? await readModules(db, ids) : undefined;
    return rows.map((row) => ({
      ...row,
      ...Object.fromEntries(byField.map(([name, items]) => [name, items.get(row.id) ?? []])),
      ...(stored && { [MODULES]: stored.get(row.id) }),
    }));
  };

  const present = (row: Row, v: View, path: PathIds) => {
    const shown = d.toApi(row, v) as Record<string, unknown>;
    shown.uri = uriOf(v, path, row.id);
    Object.assign(shown, showModules(modules, row[MODULES] as Map<string, StoredModule> | undefined, v));
    return shown as Static<S['resource']>;
  };

  /** A module's value from its request body: parsed, then finished (slow work), before any transaction. */
  const parseModule = async (m: ModuleDefinition, body: unknown, ctx: RequestContext) => {
    const parsed = m.parse(body, ctx);
    return [m, m.finish ? { ...parsed, value: await m.finish(parsed.value, ctx) } : parsed] as const;
  };

  /** The modules a create or PATCH body sets, checked before the transaction. */
  const parseModules = async (ctx: RequestContext, body: Record<string, unknown>) => {
    const sent = modules.filter((m) => body[m.name] !== undefined && body[m.name] !== null);
    for (const m of sent) {
      const other = sent.find((o) => m.excludes?.includes(o.name));
      if (other) throw errors.moduleExclusiveInRequest({ module: m.name, other: other.name });
    }
    const parsed = [];
    for (const m of sent) parsed.push(await parseModule(m, body[m.name], ctx));
    return parsed;
  };

  /** Writes modules of an owner, in the transaction: their ids checked, no module they exclude left beside them. */
  const writeModules = async (
    db: ScopedDb,
    owner: Row,
    parsed: readonly (readonly [ModuleDefinition, StoredModule])[],
    stored: ReadonlyMap<string, ModuleValue>,
  ) => {
    if (parsed.length === 0) return;
    const after = new Map(stored);
    for (const [m, module] of parsed) after.set(m.name, module.value);
    checkConflicts(after);
    await d.checkModules?.(
      db,
      owner,
      after,
      parsed.map(([m]) => m.name),
    );
    for (const [m, module] of parsed) {
      const other = m.excludes?.find((name) => stored.has(name) && !parsed.some(([o]) => o.name === name));
      if (other) throw errors.moduleExclusive({ module: m.name, other, owner: owner.id });
      if (module.refs.length > 0)
        await kinds.requireExisting(db, module.refs, m.refKinds ?? [], m.notFound ?? ((id) => errors.notFound({ title: 'resource', id })));
      await m.check?.(db, module.value, owner.id);
      await writeModule(db, owner.id, m.name, module);
    }
  };

  /** The rules between modules (`conflicts`) hold for the owner's modules as a change leaves them. */
  const checkConflicts = (after: ReadonlyMap<string, ModuleValue>) => {
    for (const [name, value] of after) {
      const broken = moduleNamed.get(name)?.conflicts?.(value, after);
      if (broken) throw broken;
    }
  };

  /** The values of the owner's modules as stored, by name (the ids they name are not needed here). */
  const storedModules = async (db: ScopedDb, ownerId: string, without?: string): Promise<Map<string, ModuleValue>> => {
    if (modules.length === 0) return new Map();
    const rows = await db.select('modules', { owner_id: ownerId });
    return new Map(rows.filter((r) => r.name !== without).map((r) => [r.name, JSON.parse(r.value) as ModuleValue]));
  };

  /**
   * A mutation that went through, told to the observers in its transaction, before the kind's
   * afterWrite (db/observers.ts): every operation of every kind and module passes here.
   */
  const observe = (db: ScopedDb, ctx: RequestContext, operation: string, row: Row) =>
    observeMutation(observers, db, ctx, { operation, resourceId: row.id, parentId: d.parent ? (row[d.parent.column] as string) : undefined });

  /**
   * A change of the owner that is not a PATCH (a detach, a module PUT or DELETE), as one
   * transaction: the row locked, the change authorized as an update, `work` done and audited as
   * `operation` (even when it changed nothing), then the kind's afterWrite and afterCommit.
   * `work` returns undefined when it changed nothing.
   */
  const changeOwner = async (
    ctx: RequestContext,
    path: PathIds,
    operation: string,
    body: Record<string, unknown> | undefined,
    work: (db: ScopedDb, current: Row) => Promise<Row | undefined>,
  ): Promise<void> => {
    let changed: Row;
    try {
      changed = await withTx(store, async (trx) => {
        const db = scoped(trx, ctx);
        const current = await load(db, path, true);
        await authorize(ctx, 'update', { row: current, body }, db);
        const row = await work(db, current);
        await observe(db, ctx, operation, current);
        if (!row) return current;
        await d.hooks?.afterWrite?.(db, ctx, row, 'update');
        return row;
      });
    } catch (error) {
      throw translateConflict(d, error, {});
    }
    d.hooks?.afterCommit?.(ctx, 'update', changed as unknown as RowOf<T>);
  };

  const moduleOf = (name: string) => {
    const m = moduleNamed.get(name);
    if (!m) throw new Error(`${d.kind} has no module ${name}`);
    return m;
  };

  /** Column references of the row that are set, checked to exist in the account. */
  const checkReferences = async (db: ScopedDb, row: Record<string, unknown>) => {
    for (const r of d.references ?? []) {
      if (d.parent && r.column === d.parent.column) continue;
      const value = row[r.column];
      if (typeof value === 'string') await kinds.requireExisting(db, [value], r.kinds, r.notFound);
    }
  };

  /** Link fields present in the body: parsed before the transaction, so bad values cost no query. */
  const parseLinks = (body: Record<string, unknown>) =>
    linkNames.flatMap((name) => (body[name] === undefined || body[name] === null ? [] : [[name, links[name]!.parse(body[name])] as const]));

  /**
   * A link field with a check over the whole graph (no cycle) is written by one transaction of
   * the account at a time: taken first, before any row lock, in every create and update that
   * writes such a field.
   */
  const serializeChecked = async (db: ScopedDb, parsed: readonly (readonly [string, LinkItem[]])[]) => {
    const tables = new Set(parsed.filter(([name]) => links[name]!.check).map(([name]) => links[name]!.table));
    for (const t of [...tables].sort()) await db.serialize(t);
  };

  const writeLinkFields = async (db: ScopedDb, ownerId: string, parsed: readonly (readonly [string, LinkItem[]])[]) => {
    for (const [name, items] of parsed) {
      const link = links[name]!;
      await kinds.requireExisting(
        db,
        items.map((i) => i.id),
        link.kinds,
        link.notFound,
      );
      await link.check?.(db, ownerId, items);
      await writeLinks(db, link, ownerId, items);
    }
  };

  return {
    definition: d,

    async create(ctx, body, path = {}) {
      if (!d.prepare) throw new Error(`${d.kind} has no create`);
      const bodyObject = body as Record<string, unknown>;
      // Refused before `prepare`, whose work may be costly (key generation); decided again in the transaction.
      await authorize(ctx, 'create', { body }, reader(ctx));
      const parsed = parseLinks(bodyObject);
      const parsedModules = await parseModules(ctx, bodyObject);
      const prepared = await d.prepare(ctx, body, reader(ctx));
      const undeclared = Object.keys(prepared.reveal ?? {}).filter((field) => !d.shownOnce?.includes(field));
      if (undeclared.length > 0) throw new Error(`${d.kind} reveals ${undeclared.join(', ')}, which its definition's shownOnce does not list`);
      const row = {
        ...prepared.row,
        ...(d.parent && { [d.parent.column]: path.parentId }),
        id: prepared.id ?? newId(prefix),
        account_id: ctx.scope.accountId,
        created_at: rfc3339(ctx.now),
      } as Row;
      let shown: Row;
      try {
        shown = await withTx(store, async (trx) => {
          const db = scoped(trx, ctx);
          await serializeChecked(db, parsed);
          await loadParent(db, path, parentLock);
          await authorize(ctx, 'create', { body }, db);
          if (d.hooks?.allocate) Object.assign(row, await d.hooks.allocate(db, ctx, row));
          await checkReferences(db, row);
          await d.hooks?.beforeCreate?.(db, ctx, row);
          const { account_id: _account, ...columns } = row;
          await db.insert(table, columns as never);
          await writeLinkFields(db, row.id, parsed);
          await writeModules(db, row, parsedModules, new Map());
          await observe(db, ctx, operationId(d.kind, 'create'), row);
          await d.hooks?.afterWrite?.(db, ctx, row, 'create', bodyObject);
          return (await expand(db, [row]))[0]!;
        });
      } catch (error) {
        throw translateConflict(d, error, row);
      }
      d.hooks?.afterCommit?.(ctx, 'create', row);
      return { ...present(shown, view(ctx), path), ...prepared.reveal };
    },

    async authorizeCreate(ctx, body, path = {}) {
      const db = reader(ctx);
      await loadParent(db, path);
      await authorize(ctx, 'create', { body }, db);
    },

    async get(ctx, path) {
      const db = reader(ctx);
      const row = await read(async () => {
        const found = await load(db, path);
        await authorize(ctx, 'get', { row: found }, db);
        return linkNames.length === 0 && modules.length === 0 && !d.hooks?.expand ? found : (await expand(db, [found]))[0]!;
      });
      return present(row, view(ctx), path);
    },

    async list(ctx, query, path = {}) {
      if (query.before_id !== undefined && query.beforeId !== undefined) throw errors.beforeIdTwice();
      const limit = query.limit ?? 100;
      const beforeId = query.before_id ?? query.beforeId;
      // A cursor is a position, not a reference: any well-formed id of this kind will do, whether
      // or not it still exists, and it is only compared with the ids of this account.
      if (beforeId !== undefined && !hasPrefix(beforeId, prefix)) {
        throw errors.invalidBeforeId({ value: beforeId, prefix, parameter: query.before_id === undefined ? 'beforeId' : 'before_id' });
      }
      const db = reader(ctx);
      const { rows, hasMore } = await read(async () => {
        await loadParent(db, path);
        await authorize(ctx, 'list', {}, db);
        const equal = d.parent ? { column: d.parent.column, value: path.parentId! } : undefined;
        const page = await db.page(table, { limit, beforeId, equal: equal as never });
        return { rows: await expand(db, page.rows as unknown as Row[]), hasMore: page.hasMore };
      });
      // A list's own uri is absolute even where its items' are paths (agent ingresses, as the spec shows).
      const listUri = `${ctx.baseUrl}${collectionPath(path)}`;
      const last = rows[rows.length - 1];
      const v = view(ctx);
      return {
        [d.listKey!]: rows.map((row) => present(row, v, path)),
        uri: listUri,
        next_page_uri: hasMore && last ? `${listUri}?before_id=${last.id}&limit=${limit}` : null,
      };
    },

    async update(ctx, path, body) {
      const { id: sentId, ...fields } = body as Record<string, unknown> & { id?: string };
      // Every official client sends the id in the body of an update: the same id is accepted.
      if (sentId !== undefined && sentId !== null && sentId !== path.id) throw errors.idMismatch({ sent: String(sentId), path: path.id ?? '' });
      const provided = Object.values(fields).filter((v) => v !== null && v !== undefined);
      if (provided.length === 0) throw errors.noUpdatableFields({ fields: Object.keys(d.schemas.update.properties) });
      const parsed = parseLinks(fields);
      const parsedModules = await parseModules(ctx, fields);
      let updated: Row | undefined;
      let attempted: Record<string, unknown> = fields;
      try {
        updated = await withTx(store, async (trx) => {
          const db = scoped(trx, ctx);
          await serializeChecked(db, parsed);
          const current = await load(db, path, true);
          await authorize(ctx, 'update', { row: current, body: fields }, db);
          const changes = (d.patch ? d.patch(ctx, fields, current) : defaultPatch(fields, notColumns)) as Partial<Row>;
          const row = { ...current, ...changes } as Row;
          attempted = row;
          await checkReferences(db, changes);
          await d.hooks?.beforeUpdate?.(db, ctx, current, changes);
          await db.update(table, { id: current.id } as never, changes as never);
          await writeLinkFields(db, row.id, parsed);
          if (parsedModules.length > 0) await writeModules(db, row, parsedModules, await storedModules(db, row.id));
          await observe(db, ctx, operationId(d.kind, 'update'), row);
          await d.hooks?.afterWrite?.(db, ctx, row, 'update', fields);
          return (await expand(db, [row]))[0]!;
        });
      } catch (error) {
        throw translateConflict(d, error, attempted);
      }
      d.hooks?.afterCommit?.(ctx, 'update', updated! as unknown as RowOf<T>);
      return present(updated!, view(ctx), path);
    },

    async detach(ctx, path, part) {
      const take = d.detach?.[part];
      if (!take) throw new Error(`${d.kind} has no part ${part} to detach`);
      await changeOwner(ctx, path, detachOperationId(d.kind, part), undefined, async (db, current) => {
        const changes = take(current, ctx) as Partial<Row>;
        if (Object.keys(changes).length === 0) return undefined;
        await d.hooks?.beforeUpdate?.(db, ctx, current, changes);
        await db.update(table, { id: current.id } as never, changes as never);
        return { ...current, ...changes } as Row;
      });
    },

    async getModule(ctx, path, name) {
      const m = moduleOf(name);
      const db = reader(ctx);
      const module = await read(async () => {
        const owner = await load(db, path);
        await authorize(ctx, 'get', { row: owner }, db);
        return (await storedModules(db, owner.id)).get(name) as ModuleValue | undefined;
      });
      if (module === undefined) throw errors.moduleNotSet({ module: m.name, owner: path.id ?? '' });
      return m.toApi(module, view(ctx));
    },

    async putModule(ctx, path, name, body) {
      const m = moduleOf(name);
      const parsed = [await parseModule(m, body, ctx)];
      await changeOwner(ctx, path, moduleOperationId(d.kind, name, 'replace'), { [name]: body }, async (db, current) => {
        await writeModules(db, current, parsed, await storedModules(db, current.id));
        return current;
      });
      return m.toApi(parsed[0]![1].value, view(ctx));
    },

    async deleteModule(ctx, path, name) {
      moduleOf(name);
      await changeOwner(ctx, path, moduleOperationId(d.kind, name, 'delete'), undefined, async (db, current) => {
        // What stays must still hold together (removing TLS termination under mutual TLS).
        checkConflicts(await storedModules(db, current.id, name));
        await writeModule(db, current.id, name, undefined);
        return current;
      });
    },

    async remove(ctx, path) {
      let removed: Row;
      try {
        removed = await withTx(store, async (trx) => {
          const db = scoped(trx, ctx);
          const current = await load(db, path, true);
          await authorize(ctx, 'delete', { row: current }, db);
          await d.hooks?.beforeDelete?.(db, ctx, current);
          const referrers = await kinds.release(db, d.kind, current.id);
          if (referrers.length > 0) throw d.inUse ? d.inUse(current.id, referrers) : errors.resourceInUse({ title, id: current.id, referrers });
          for (const name of linkNames) await writeLinks(db, links[name]!, current.id, []);
          if (modules.length > 0) await removeModules(db, current.id);
          await db.delete(table, { id: current.id } as never);
          await observe(db, ctx, operationId(d.kind, 'delete'), current);
          await d.hooks?.afterWrite?.(db, ctx, current, 'delete');
          return current;
        });
      } catch (error) {
        throw translateConflict(d, error, {});
      }
      d.hooks?.afterCommit?.(ctx, 'delete', removed as unknown as RowOf<T>);
    },
  };
}
