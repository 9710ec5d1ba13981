// The map from id prefix to resource kind, built from the registry's definitions. It renders
// Refs without hard-coded paths, checks that referenced ids exist in the account (one query per
// kind named), and on delete finds every referrer: refusing (409 naming them) or deleting them.
import type { Ref } from '../core/schema.js';
import type { OwnedTable, ScopedDb } from '../db/scoped.js';
import type { AnyDefinition, LinkItem } from './definition.js';

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
}

const prefixOf = (id: string) => id.slice(0, Math.max(0, id.indexOf('_')));

export class Kinds {
  private readonly byPrefix = new Map<string, Kind>();
  private readonly byName = new Map<string, Kind>();
  private readonly holders = new Map<string, Holder[]>();

  /** `plain`: kinds that are referenced but not served as resources (users). */
  constructor(definitions: readonly AnyDefinition[], plain: readonly Kind[] = []) {
    for (const d of definitions) this.add({ kind: d.kind, title: d.title, prefix: d.prefix, table: d.table, path: d.path, uri: d.uri });
    for (const k of plain) this.add(k);
    for (const d of definitions) {
      for (const r of d.references ?? []) this.hold(r.kinds, { table: d.table, column: r.column, referrer: 'id', onDelete: r.onDelete });
      for (const link of Object.values(d.links ?? {}) as { table: OwnedTable; from: string; to: string; kinds: readonly string[] }[]) {
        this.hold(link.kinds, { table: link.table, column: link.to, referrer: link.from, onDelete: 'restrict' });
      }
      for (const h of d.holds ?? []) this.hold(h.kinds, { table: h.table, column: h.column, referrer: h.referrer, onDelete: 'restrict' });
      // Every module names its ids in module_refs, whoever owns it.
      const moduleKinds = [...new Set((d.modules ?? []).flatMap((m) => m.refKinds ?? []))];
      this.hold(moduleKinds, { table: 'module_refs', column: 'target_id', referrer: 'owner_id', onDelete: 'restrict' });
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
   * Before a resource of `kind` is deleted: the ids of everything that still refers to it (to
   * be refused), after deleting the referrers that go with it.
   */
  async release(db: ScopedDb, kind: string, id: string): Promise<string[]> {
    const referrers: string[] = [];
    const holders = this.holders.get(kind) ?? [];
    for (const h of holders.filter((x) => x.onDelete === 'restrict')) {
      const rows = (await db.select(h.table, { [h.column]: id } as never, { orderBy: [h.referrer] as never })) as unknown as Record<string, string>[];
      for (const row of rows) if (!referrers.includes(row[h.referrer]!)) referrers.push(row[h.referrer]!);
    }
    if (referrers.length > 0) return referrers;
    for (const h of holders.filter((x) => x.onDelete === 'cascade')) await db.delete(h.table, { [h.column]: id } as never);
    return [];
  }
}

/** Reads each owner's items of a link field: one query for a whole page of owners. */
export async function readLinks(
  db: ScopedDb,
  link: { table: OwnedTable; from: string; to: string; weighted?: boolean },
  ownerIds: readonly string[],
): Promise<Map<string, LinkItem[]>> {
  const rows = (await db.select(link.table, { [link.from]: ownerIds } as never, { orderBy: [link.from, 'position'] as never })) as unknown as Record<
    string,
    unknown
  >[];
  const out = new Map<string, LinkItem[]>(ownerIds.map((id) => [id, []]));
  for (const row of rows) out.get(row[link.from] as string)!.push({ id: row[link.to] as string, weight: link.weighted ? Number(row.weight) : null });
  return out;
}

/** Replaces an owner's items of a link field. */
export async function writeLinks(
  db: ScopedDb,
  link: { table: OwnedTable; from: string; to: string; weighted?: boolean },
  ownerId: string,
  items: readonly LinkItem[],
): Promise<void> {
  await db.delete(link.table, { [link.from]: ownerId } as never);
  const rows = items.map((item, position) => ({ [link.from]: ownerId, [link.to]: item.id, position, ...(link.weighted && { weight: item.weight }) }));
  await db.insert(link.table, rows as never);
}
