// Join references (crud/definition.ts): a body field of ids kept as the rows of a join table, in
// order. Parsed before the transaction, so that bad values cost no query; checked to exist and
// written inside it; read back for a whole page of owners at once.
import type { OwnedTable, ScopedDb } from '../db/scoped.js';
import type { AnyDefinition } from './definition.js';
import type { JoinReference, LinkItem } from './references.js';
import type { Kinds } from './kinds.js';

/** Where a join reference is kept. */
type JoinPlace = Pick<JoinReference, 'table' | 'from' | 'to' | 'weighted'>;

/** Reads each owner's items of a join reference: one query for a whole page of owners. */
async function readLinks(db: ScopedDb, link: JoinPlace, ownerIds: readonly string[]): Promise<Map<string, LinkItem[]>> {
  const rows = (await db.select(link.table as OwnedTable, { [link.from]: ownerIds } as never, {
    orderBy: [link.from, 'position'] as never,
  })) as unknown as Record<string, unknown>[];
  const out = new Map<string, LinkItem[]>(ownerIds.map((id) => [id, []]));
  for (const row of rows) out.get(row[link.from] as string)!.push({ id: row[link.to] as string, weight: link.weighted ? Number(row.weight) : null });
  return out;
}

/** Replaces an owner's items of a join reference. */
async function writeLinks(db: ScopedDb, link: JoinPlace, ownerId: string, items: readonly LinkItem[]): Promise<void> {
  await db.delete(link.table as OwnedTable, { [link.from]: ownerId } as never);
  const rows = items.map((item, position) => ({ [link.from]: ownerId, [link.to]: item.id, position, ...(link.weighted && { weight: item.weight }) }));
  await db.insert(link.table as OwnedTable, rows as never);
}

/** A body's join fields, parsed: the reference and its items. */
export type ParsedLinks = readonly (readonly [JoinReference, LinkItem[]])[];

/** The join references of one kind, as its service uses them. */
export function linkFields(kinds: Kinds, d: AnyDefinition) {
  const joins = (d.references ?? []).filter((r): r is JoinReference => r.in === 'join');
  return {
    /** The body fields that are not columns. */
    names: joins.map((j) => j.field),

    /** The fields present in the body, parsed before the transaction. */
    parse(body: Record<string, unknown>): ParsedLinks {
      return joins.flatMap((j) => (body[j.field] === undefined || body[j.field] === null ? [] : [[j, j.parse(body[j.field])] as const]));
    },

    /**
     * A field with a check over the whole graph (no cycle) is written by one transaction of the
     * account at a time: taken first, before any row lock, in every create and update that writes
     * such a field.
     */
    async serialize(db: ScopedDb, parsed: ParsedLinks): Promise<void> {
      const tables = new Set(parsed.filter(([j]) => j.check).map(([j]) => j.table));
      for (const t of [...tables].sort()) await db.serialize(t);
    },

    /** Writes the parsed fields of an owner: each id checked to exist in the account, then the field's own check. */
    async write(db: ScopedDb, ownerId: string, parsed: ParsedLinks): Promise<void> {
      for (const [j, items] of parsed) {
        await kinds.requireExisting(
          db,
          items.map((i) => i.id),
          j.kinds,
          j.notFound,
        );
        await j.check?.(db, ownerId, items);
        await writeLinks(db, j, ownerId, items);
      }
    },

    /** Each field's items of a page of owners, by field name: one query a field. */
    async read(db: ScopedDb, ownerIds: readonly string[]): Promise<(readonly [string, Map<string, LinkItem[]>])[]> {
      return Promise.all(joins.map(async (j) => [j.field, await readLinks(db, j, ownerIds)] as const));
    },
  };
}
