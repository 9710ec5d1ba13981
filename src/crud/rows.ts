// A kind's rows as its service finds and shows them: the path's ids checked (a malformed id, one
// of another prefix, of another account or under another parent is a 404), rows read and locked,
// expanded with what responses show beyond the row (link items, modules, the kind's own
// `expand`), and rendered with their `uri`.
import type { Static } from '@sinclair/typebox';
import type { RequestContext } from '../core/context.js';
import { errors } from '../core/errors.js';
import { hasPrefix } from '../core/ids.js';
import { ScopedDb, scopedReader, type Lock } from '../db/scoped.js';
import type { Executor, Store } from '../db/store.js';
import type { AnyDefinition, ResourceSchemas, View } from './definition.js';
import type { Kinds } from './kinds.js';
import { linkFields } from './links.js';
import { readModules, showModules, type StoredModule } from './modules.js';

/** The path's ids: the resource's own and, for a kind under a parent, the parent's. */
export interface PathIds {
  id?: string;
  parentId?: string;
}

export type Row = { id: string; account_id: string; created_at: string } & Record<string | symbol, unknown>;

/** Where a row being shown carries its stored modules. */
const MODULES = Symbol('modules');

export function kindRows(store: Store, kinds: Kinds, d: AnyDefinition) {
  const { table, prefix, title } = d;
  const links = linkFields(kinds, d);
  const modules = d.modules ?? [];
  const parentKind = d.parent ? kinds.named(d.parent.kind) : undefined;
  const collectionPath = (path: PathIds) => (d.parent ? d.path.replace(`:${d.parent.param}`, path.parentId ?? '') : d.path);

  const rows = {
    links,
    /** The lock a write takes on the parent: against its deletion, or against every other write under it. */
    parentLock: (d.parent?.serialize ? 'update' : 'key share') as Lock,
    scoped: (executor: Executor, ctx: RequestContext) => new ScopedDb(executor, ctx.scope, store.dialect),
    reader: (ctx: RequestContext) => scopedReader(store, ctx.scope),
    view: (ctx: RequestContext): View => ({ ...ctx, ref: (id: string) => kinds.ref(ctx.baseUrl, id) }),
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
     * (who still references it) hold until the change commits.
     */
    async load(db: ScopedDb, path: PathIds, forWrite = false): Promise<Row> {
      if (d.parent) await rows.loadParent(db, path, forWrite ? rows.parentLock : undefined);
      const id = path.id ?? '';
      if (!hasPrefix(id, prefix)) throw errors.invalidPathId({ value: id, title, prefix });
      const row = (await db.find(forWrite ? table : rows.readFrom, id, forWrite ? 'update' : undefined)) as Row | undefined;
      // A row only the kind's view shows (an agent's endpoint) is there, but not to be changed.
      if (!row && forWrite && d.reads && (await db.exists(d.reads.view, id))) throw d.reads.notWritable(id);
      if (!row || (d.parent && row[d.parent.column] !== path.parentId)) throw errors.notFound({ title, id });
      return row;
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
