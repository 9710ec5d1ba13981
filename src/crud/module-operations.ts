// The modules of one owner kind, as its service sets, checks and reads them: a module's request
// parsed (and finished) before the transaction; inside it, the rules between the owner's modules
// as the change leaves them, the ids each names checked to exist, and the value written.
import type { RequestContext } from '../core/context.js';
import { errors } from '../core/errors.js';
import type { ScopedDb } from '../db/scoped.js';
import type { AnyDefinition } from './definition.js';
import type { Kinds } from './kinds.js';
import { writeModule, type ModuleDefinition, type StoredModule } from './modules.js';
import type { Row } from './rows.js';

/** A module of a request, parsed: its definition and what will be stored. */
export type ParsedModule = readonly [ModuleDefinition, StoredModule];

export function ownerModules(kinds: Kinds, d: AnyDefinition) {
  const modules = d.modules ?? [];
  const named = new Map(modules.map((m) => [m.name, m]));

  /** The rules of the modules the owner will have, then the owner kind's own: the first broken one throws. */
  const checkRules = async (db: ScopedDb, owner: Row, after: ReadonlyMap<string, unknown>, changed: readonly string[]) => {
    const rules = [...[...after.keys()].flatMap((name) => named.get(name)?.rules ?? []), ...(d.moduleRules ?? [])];
    for (const rule of rules) {
      const broken = await rule({ db, owner, after, changed });
      if (broken) throw broken;
    }
  };

  const ops = {
    names: [...named.keys()],

    /** The module called `name`; a route names only modules its kind has. */
    named(name: string): ModuleDefinition {
      const m = named.get(name);
      if (!m) throw new Error(`${d.kind} has no module ${name}`);
      return m;
    },

    /** A module's value from its request body: parsed, then finished (slow work), before any transaction. */
    async parse(m: ModuleDefinition, body: unknown, ctx: RequestContext): Promise<ParsedModule> {
      const parsed = m.parse(body as never, ctx);
      return [m, m.finish ? { ...parsed, value: await m.finish(parsed.value, ctx) } : parsed];
    },

    /** The modules a create or PATCH body sets, parsed before the transaction; two that exclude each other are a 400. */
    async parseSent(ctx: RequestContext, body: Record<string, unknown>): Promise<ParsedModule[]> {
      const sent = modules.filter((m) => body[m.name] !== undefined && body[m.name] !== null);
      for (const m of sent) {
        const other = sent.find((o) => m.excludes?.includes(o.name));
        if (other) throw errors.moduleExclusiveInRequest({ module: m.name, other: other.name });
      }
      const parsed = [];
      for (const m of sent) parsed.push(await ops.parse(m, body[m.name], ctx));
      return parsed;
    },

    /** The values of the owner's modules as stored, by name, checked against their stored shapes. */
    async stored(db: ScopedDb, ownerId: string, without?: string): Promise<Map<string, unknown>> {
      if (modules.length === 0) return new Map();
      const rows = await db.select('modules', { owner_id: ownerId });
      return new Map(rows.filter((r) => r.name !== without).map((r) => [r.name, ops.named(r.name).read(JSON.parse(r.value))]));
    },

    /** Writes modules of an owner, in the transaction: the rules hold, their ids exist, no module they exclude is left beside them. */
    async write(db: ScopedDb, owner: Row, parsed: readonly ParsedModule[], stored: ReadonlyMap<string, unknown>): Promise<void> {
      if (parsed.length === 0) return;
      const after = new Map(stored);
      for (const [m, module] of parsed) after.set(m.name, module.value);
      await checkRules(
        db,
        owner,
        after,
        parsed.map(([m]) => m.name),
      );
      for (const [m, module] of parsed) {
        const other = m.excludes?.find((name) => stored.has(name) && !parsed.some(([o]) => o.name === name));
        if (other) throw errors.moduleExclusive({ module: m.name, other, owner: owner.id });
        if (module.refs.length > 0) {
          const target = m.references ?? { kinds: [], notFound: (id: string) => errors.notFound({ title: 'resource', id }) };
          await kinds.requireExisting(db, module.refs, target.kinds, target.notFound);
        }
        await writeModule(db, owner.id, m, module);
      }
    },

    /** Removes one module of the owner: what stays must still hold together (removing TLS termination under mutual TLS). */
    async remove(db: ScopedDb, owner: Row, name: string): Promise<void> {
      await checkRules(db, owner, await ops.stored(db, owner.id, name), []);
      await writeModule(db, owner.id, ops.named(name), undefined);
    },
  };
  return ops;
}
