// A kind's rows as its service finds and shows them: the path's ids checked (a malformed id, one
// of another prefix, of another account or under another parent is a 404), rows read and locked,
// expanded with what responses show beyond the row (link items, modules, the kind's own
// `expand`), and rendered with their `uri`.
import type { Static } from '@sinclair/typebox';
import type { RequestContext } from '../core/context.js';
import { errors } from '../core/errors.js';
import { hasPrefix } from '../core/ids.js';
import { then, type MaybePromise } from '../core/maybe.js';
import { scopedIn, scopedReader, type Lock, type ScopedDb } from '../db/scoped.js';
import type { Executor, Store } from '../db/store.js';
import type { AnyDefinition, ResourceSchemas, View } from './definition.js';
import type { Ref } from '../core/schema.js';
import type { Kinds } from './kinds.js';
import { linkFields } from './links.js';
import { readModules, showModules, type StoredModule } from './modules.js';

/** The path's ids: the resource's own and, for a kind under a parent, the parent's. */
export interface PathIds {
  id?: string;
  parentId?: string;
}

export type Row = { id: string; account_id: string; created_at: string } & Record<string | symbol, unknown>;

/**
 * What a response is rendered with (crud/definition.ts, View): made once per response, one
 * shape for every request, `ref` a method rather than a closure made for each.
 */
class RequestView implements View {
  readonly scope: RequestContext['scope'];
  readonly principal: RequestContext['principal'];
  readonly keyId: string;
  readonly baseUrl: string;
  readonly now: Date;
  readonly idempotency: RequestContext['idempotency'];

  constructor(
    ctx: RequestContext,
    private readonly kinds: Kinds,
  ) {
    this.scope = ctx.scope;
    this.principal = ctx.principal;
    this.keyId = ctx.keyId;
    this.baseUrl = ctx.baseUrl;
    this.now = ctx.now;
    this.idempotency = ctx.idempotency;
  }

  ref(id: string): Ref {
    return this.kinds.ref(this.baseUrl, id);
  }
}

/** Where a row being shown carries its stored modules. */
const MODULES = Symbol('modules');

export function kindRows(store: Store, kinds: Kinds, d: AnyDefinition) {
  const { table, prefix, title } = d;
  const links = linkFields(kinds, d);
  const modules = d.modules ?? [];
  const parentKind = d.parent ? kinds.named(d.parent.kind) : undefined;
  const collectionPath = (path: PathIds) => (d.parent ? d.path.replace(`:${d.parent.param}`, path.parentId ?? '') : d.path);

  /** The row of the path's id (its parent already checked), or 404. */
  const loadOwn = (db: ScopedDb, path: PathIds, forWrite: boolean): MaybePromise<Row> => {
    const id = path.id ?? '';
    if (!hasPrefix(id, prefix)) throw errors.invalidPathId({ value: id, title, prefix });
    return then(db.find(forWrite ? table : rows.readFrom, id, forWrite ? 'update' : undefined) as MaybePromise<Row | undefined>, (row) => {
      // A row only the kind's view shows (an agent's endpoint) is there, but not to be changed.
      if (!row && forWrite && d.reads) {
        const reads = d.reads;
        return db.exists(reads.view, id).then((shown) => {
          throw shown ? reads.notWritable(id) : errors.notFound({ title, id });
        });
      }
      if (!row || (d.parent && row[d.parent.column] !== path.parentId)) throw errors.notFound({ title, id });
      return row;
    });
  };

  const rows = {
    links,
    /** The lock a write takes on the parent: against its deletion, or against every other write under it. */
    parentLock: (d.parent?.serialize ? 'update' : 'key share') as Lock,
    scoped: (executor: Executor, ctx: RequestContext) => scopedIn(store, executor, ctx.scope),
    reader: (ctx: RequestContext) => scopedReader(store, ctx.scope),
    view: (ctx: RequestContext): View => new RequestView(ctx, kinds),
    collectionPath,
    /** Where get and list read: the kind's view when it has one, else its table. */
    readFrom: (d.reads?.view ?? table) as typeof table,

    /** The parent named in the path, or 404 (a parent of another account is not found either); locked against deletion in a write. */
    async loadParent(db: ScopedDb, path: PathIds, lock?: Lock): Promise<void> {
      if (!d.parent || !parentKind) return;
      const id = path.parentId ?? '';
      if (!hasPrefix(id, parentKind.prefix)) throw errors.invalidPathId({ value: id, title: parentKind.title, prefix: parentKind.prefix });
      if (!(await db.exists(parentKind.table, id, lock))) throw errors.notFound({ title: parentKind.title, id });
    },

    /**
     * The row, or 404 when the id is malformed, of another prefix, not in this account or not
     * under the parent. `forWrite`: locked until the transaction ends, so that checks made on it
     * (who still references it) hold until the change commits. For a kind without a parent read
     * on SQLite's reader, the row at once (see core/maybe.ts); else a promise.
     */
    load(db: ScopedDb, path: PathIds, forWrite = false): MaybePromise<Row> {
      if (d.parent) return rows.loadParent(db, path, forWrite ? rows.parentLock : undefined).then(() => loadOwn(db, path, forWrite));
      return loadOwn(db, path, forWrite);
    },

    /** Whether rows are shown as they are stored, with nothing read beside them. */
    plain: links.names.length === 0 && modules.length === 0 && !d.hooks?.expand,

    /** Adds what responses show beyond the row, for a page of rows: a query or two per part, not one a row. */
    async expand(db: ScopedDb, found: Row[]): Promise<Row[]> {
      const page = d.hooks?.expand && found.length > 0 ? ((await d.hooks.expand(db, found)) as Row[]) : found;
      if ((links.names.length === 0 && modules.length === 0) || page.length === 0) return page;
      const ids = page.map((r) => r.id);
      const byField = await links.read(db, ids);
      const stored = modules.length > 0 ? await readModules(db, ids) : undefined;
      return page.map((row) => ({
        ...row,
        ...Object.fromEntries(byField.map(([name, items]) => [name, items.get(row.id) ?? []])),
        ...(stored && { [MODULES]: stored.get(row.id) }),
      }));
    },

    /** The API shape of an expanded row: the kind's `toApi`, its `uri` and its modules. */
    present<S extends ResourceSchemas>(row: Row, v: View, path: PathIds): Static<S['resource']> {
      const shown = d.toApi(row, v) as Record<string, unknown>;
      shown.uri = `${d.uri === 'path' ? '' : v.baseUrl}${collectionPath(path)}/${row.id}`;
      Object.assign(shown, showModules(modules, row[MODULES] as Map<string, StoredModule> | undefined, v));
      return shown as Static<S['resource']>;
    },
  };
  return rows;
}

export type KindRows = ReturnType<typeof kindRows>;
