// Modules of a resource (an edge's backend, IP restriction, traffic policy), declared once per
// module kind and stored alike for every owner: one row of `modules` per module set (its value
// as JSON) and the ids it names in `module_refs`, so that a backend or IP policy a module names is
// checked to exist in the account and cannot be deleted while named. A module in a create or
// PATCH body replaces the stored one whole; an absent (or null) one is left as it is; only the
// module's own DELETE removes it.
import { Type, type TObject } from '@sinclair/typebox';
import type { RequestContext } from '../core/context.js';
import type { ApiError } from '../core/errors.js';
import { Nullable, type Ref } from '../core/schema.js';
import type { ScopedDb } from '../db/scoped.js';

/** What a module's response is rendered with: Refs of the ids it names. */
export interface ModuleView {
  ref(id: string): Ref;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- module values are JSON of each kind's own shape
export type ModuleValue = any;

export interface ModuleDefinition {
  /** The body field and the path segment: `backend`, `ip_restriction`, `traffic_policy`. */
  name: string;
  /** What a message calls it: "backend". */
  title: string;
  /** The request shape (a PUT body, or the field in a create or PATCH). */
  request: TObject;
  /** The response shape. */
  response: TObject;
  /** Checks a request value (already validated against `request`): what is stored, and the ids it names. */
  parse(body: ModuleValue, ctx: RequestContext): { value: ModuleValue; refs: string[] };
  /**
   * Slow or asynchronous work on a parsed value (making a key pair and a certificate), run after
   * `parse` and before the transaction; what it returns is stored.
   */
  finish?(value: ModuleValue, ctx: RequestContext): Promise<ModuleValue>;
  /** Kinds the named ids may be of, and the 400 for one that is none of them in the account. */
  refKinds?: readonly string[];
  notFound?(id: string): ApiError;
  /** Checks that need the account's rows beyond existence, in the transaction; `ownerId` is the resource's id. */
  check?(db: ScopedDb, value: ModuleValue, ownerId: string): Promise<void>;
  /** The response shape of a stored value. */
  toApi(value: ModuleValue, view: ModuleView): Record<string, unknown>;
  /**
   * A rule between this module and the owner's other modules as they are about to be (mutual TLS
   * needs TLS terminated at the edge): the 400 when it is broken. Checked whenever a module of the
   * owner changes.
   */
  conflicts?(value: ModuleValue, siblings: ReadonlyMap<string, ModuleValue>): ApiError | undefined;
  /** Modules of the same owner this one cannot be set beside (the old `policy` and `traffic_policy`). */
  excludes?: readonly string[];
}

/** A stored module: its value and the ids it names. */
export interface StoredModule {
  value: ModuleValue;
  refs: string[];
}

/** The response fields of an owner's modules: each present, null when unset. */
export function moduleFields(modules: readonly ModuleDefinition[]) {
  return Object.fromEntries(modules.map((m) => [m.name, Nullable(m.response)]));
}

/** The create and PATCH fields of an owner's modules: each optional; in a PATCH null is "unchanged". */
export function moduleRequestFields(modules: readonly ModuleDefinition[]) {
  return Object.fromEntries(modules.map((m) => [m.name, Type.Optional(Nullable(m.request))]));
}

/** The response fields of an owner's modules from what is stored: each present, null when unset. */
export function showModules(modules: readonly ModuleDefinition[], stored: ReadonlyMap<string, StoredModule> | undefined, view: ModuleView) {
  return Object.fromEntries(
    modules.map((m) => {
      const module = stored?.get(m.name);
      return [m.name, module ? m.toApi(module.value, view) : null];
    }),
  );
}

/** Every module of each owner: two queries for a whole page of owners. */
export async function readModules(db: ScopedDb, ownerIds: readonly string[]): Promise<Map<string, Map<string, StoredModule>>> {
  const out = new Map<string, Map<string, StoredModule>>(ownerIds.map((id) => [id, new Map()]));
  if (ownerIds.length === 0) return out;
  const [rows, refs] = await Promise.all([
    db.select('modules', { owner_id: ownerIds }),
    db.select('module_refs', { owner_id: ownerIds }, { orderBy: ['owner_id', 'name', 'position'] }),
  ]);
  for (const row of rows) out.get(row.owner_id)!.set(row.name, { value: JSON.parse(row.value) as ModuleValue, refs: [] });
  for (const ref of refs) out.get(ref.owner_id)?.get(ref.name)?.refs.push(ref.target_id);
  return out;
}

/** Sets (or, with undefined, removes) one module of an owner. */
export async function writeModule(db: ScopedDb, ownerId: string, name: string, module: StoredModule | undefined): Promise<void> {
  await db.delete('module_refs', { owner_id: ownerId, name });
  await db.delete('modules', { owner_id: ownerId, name });
  if (!module) return;
  await db.insert('modules', { owner_id: ownerId, name, value: JSON.stringify(module.value) });
  await db.insert(
    'module_refs',
    module.refs.map((target_id, position) => ({ owner_id: ownerId, name, target_id, position })),
  );
}

/** Removes every module of owners that are being deleted. */
export async function removeModules(db: ScopedDb, ownerIds: string | readonly string[]): Promise<void> {
  if (typeof ownerIds !== 'string' && ownerIds.length === 0) return;
  await db.delete('module_refs', { owner_id: ownerIds });
  await db.delete('modules', { owner_id: ownerIds });
}
