// The map from id prefix to resource kind, built from the registry's definitions. It renders
// Refs without hard-coded paths, checks that referenced ids exist in the account (one query per
// kind named), and on delete finds every referrer: refusing (409 naming them) or deleting them.
import type { Ref } from '../core/schema.js';
import type { OwnedTable, ScopedDb } from '../db/scoped.js';
import type { AnyDefinition } from './definition.js';
import type { Reference } from './references.js';
import { removeModules } from './modules.js';

export interface Kind {
  kind: string;
  title: string;
  prefix: string;
  table: OwnedTable;
  /** The collection path, when the kind is served by this API. */
  path?: string;
  uri?: 'absolute' | 'path';
}

/** A place that holds ids of one kind: a column of a table, and the column naming the holder. */
interface Holder {
  table: OwnedTable;
  column: string;
  /** The column whose value names the referrer (`id`, or a join table's owner column). */
  referrer: string;
  onDelete: 'restrict' | 'cascade';
  /** The kind of the rows a cascade deletes: they go whole, as a delete of each would take them. */
  kind?: string;
}

/** What the rows of a kind bring with them when they are deleted: their join rows, other rows and modules. */
interface Belongings {
  tables: { table: OwnedTable; referrer: string }[];
  modules: boolean;
}

const prefixOf = (id: string) => id.slice(0, Math.max(0, id.indexOf('_')));

export class Kinds {
  private readonly byPrefix = new Map<string, Kind>();
  private readonly byName = new Map<string, Kind>();
  private readonly holders = new Map<string, Holder[]>();
  private readonly belongings = new Map<string, Belongings>();

  /** `plain`: kinds that are referenced but not served as resources (users). */
  constructor(definitions: readonly AnyDefinition[], plain: readonly Kind[] = []) {
    for (const d of definitions) this.add({ kind: d.kind, title: d.title, prefix: d.prefix, table: d.table, path: d.path, uri: d.uri });
    for (const k of plain) this.add(k);
    for (const d of definitions) {
      const own: Belongings = { tables: [], modules: (d.modules ?? []).length > 0 };
      for (const r of (d.references ?? []) as readonly Reference<Record<string, unknown>>[]) {
        if (r.in === 'column') this.hold(r.kinds, { table: d.table, column: r.column, referrer: 'id', onDelete: r.onDelete, kind: d.kind });
        else {
          const [referrer, column] = r.in === 'join' ? [r.from, r.to] : [r.referrer, r.column];
          this.hold(r.kinds, { table: r.table, column, referrer, onDelete: 'restrict' });
          own.tables.push({ table: r.table, referrer });
        }
      }
      if (d.parent) this.hold([d.parent.kind], { table: d.table, column: d.parent.column, referrer: 'id', onDelete: d.parent.onDelete, kind: d.kind });
      // Every module names its ids in module_refs, whoever owns it.
      const moduleKinds = [...new Set((d.modules ?? []).flatMap((m) => m.references?.kinds ?? []))];
      this.hold(moduleKinds, { table: 'module_refs', column: 'target_id', referrer: 'owner_id', onDelete: 'restrict' });
      this.belongings.set(d.kind, own);
    }
  }

  private add(kind: Kind): void {
    if (this.byPrefix.has(kind.prefix)) throw new Error(`two kinds have the prefix ${kind.prefix}`);
    this.byPrefix.set(kind.prefix, kind);
    this.byName.set(kind.kind, kind);
  }

  /**
   * Registers `holder` for each kind, once: kinds that share a table (module_refs, the edge_domains
   * of TLS and HTTPS edges) declare the same holder, and a delete should look at it once.
   */
  private hold(kinds: readonly string[], holder: Holder): void {
    for (const name of kinds) {
      if (!this.byName.has(name)) throw new Error(`a reference names the unknown kind ${name}`);
      const known = this.holders.get(name) ?? [];
      const same = (h: Holder) => h.table === holder.table && h.column === holder.column && h.referrer === holder.referrer && h.onDelete === holder.onDelete;
      if (!known.some(same)) this.holders.set(name, [...known, holder]);
    }
  }

  named(kind: string): Kind {
    const found = this.byName.get(kind);
    if (!found) throw new Error(`unknown kind ${kind}`);
    return found;
  }

  kindOf(id: string): Kind | undefined {
    return this.byPrefix.get(prefixOf(id));
  }

  /** The `{ id, uri }` of any served resource, from its id's prefix. */
  ref(baseUrl: string, id: string): Ref {
    const kind = this.kindOf(id);
    if (!kind?.path || kind.path.includes(':')) throw new Error(`no address for ${id}`);
    const path = `${kind.path}/${id}`;
    return { id, uri: kind.uri === 'path' ? path : baseUrl + path };
  }

  /**
   * Throws `notFound(id)` for the first id that is no resource of one of `kinds` in the account.
   * Inside a transaction; the rows found stay locked against deletion until it commits.
   */
  async requireExisting(db: ScopedDb, ids: readonly string[], kinds: readonly string[], notFound: (id: string) => Error): Promise<void> {
    const byTable = new Map<OwnedTable, string[]>();
    for (const id of ids) {
      const kind = this.kindOf(id);
      if (!kind || !kinds.includes(kind.kind)) throw notFound(id);
      byTable.set(kind.table, [...(byTable.get(kind.table) ?? []), id]);
    }
    for (const [table, group] of byTable) {
      if (group.length === 1) {
        if (!(await db.exists(table, group[0]!, 'key share'))) throw notFound(group[0]!);
        continue;
      }
      const found = new Set((await db.select(table, { id: group } as never, { lock: 'key share' })).map((row) => (row as { id: string }).id));
      const missing = group.find((id) => !found.has(id));
      if (missing !== undefined) throw notFound(missing);
    }
  }

  /**
   * Before resources of `kind` are deleted: the ids of everything that still refers to them (to
   * be refused), after deleting the referrers that go with them (a parent's children, a user's
   * keys), each whole and after the same check of what refers to it.
   */
  async release(db: ScopedDb, kind: string, ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const referrers: string[] = [];
    const holders = this.holders.get(kind) ?? [];
    for (const h of holders.filter((x) => x.onDelete === 'restrict')) {
      const rows = (await db.select(h.table, { [h.column]: ids } as never, { orderBy: [h.referrer] as never })) as unknown as Record<string, string>[];
      for (const row of rows) if (!referrers.includes(row[h.referrer]!)) referrers.push(row[h.referrer]!);
    }
    if (referrers.length > 0) return referrers;
    for (const h of holders.filter((x) => x.onDelete === 'cascade')) {
      const rows = (await db.select(h.table, { [h.column]: ids } as never)) as unknown as { id: string }[];
      const going = rows.map((row) => row.id);
      const held = await this.release(db, h.kind!, going);
      if (held.length > 0) return held;
      await this.purge(db, h.kind!, going);
    }
    return [];
  }

  /** Deletes rows of `kind` with what belongs to them (join rows, rows its hooks keep, modules); `release` ran first. */
  async purge(db: ScopedDb, kind: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const own = this.belongings.get(kind) ?? { tables: [], modules: false };
    for (const t of own.tables) await db.delete(t.table, { [t.referrer]: ids } as never);
    if (own.modules) await removeModules(db, ids);
    await db.delete(this.named(kind).table, { id: ids } as never);
  }
}
