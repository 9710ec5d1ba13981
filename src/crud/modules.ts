// Modules of a resource (an edge's backend, IP restriction, traffic policy), declared once per
// module kind with `defineModule` and stored alike for every owner: one row of `modules` per
// module set (its value as JSON) and the ids it names in `module_refs`, so that a backend or IP
// policy a module names is checked to exist in the account and cannot be deleted while named. A
// module in a create or PATCH body replaces the stored one whole; an absent (or null) one is left
// as it is; only the module's own DELETE removes it.
//
// A module's three shapes are TypeBox schemas: what a request sends, what is stored and what is
// shown. The stored value is checked against its schema whenever it is written or read, so that
// what the edges read is the type the definition says.
import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import type { RequestContext } from '../core/context.js';
import type { ApiError } from '../core/errors.js';
import { Nullable, type Ref } from '../core/schema.js';
import { compileValidator } from '../core/validation.js';
import type { ScopedDb } from '../db/scoped.js';
import type { Target } from './references.js';

/** What a module's response is rendered with: Refs of the ids it names. */
export interface ModuleView {
  ref(id: string): Ref;
}

/** A change of an owner's modules, as a rule between them sees it. */
export interface ModuleChange<Owner> {
  /** The transaction, for rules that read other rows. */
  db: ScopedDb;
  owner: Owner;
  /** The owner's modules as the change leaves them: their stored values, by name. */
  after: ReadonlyMap<string, unknown>;
  /** The names being set; empty when a module is being removed. */
  changed: readonly string[];
}

/**
 * A rule between an owner's modules (mutual TLS needs TLS terminated at the edge; one route of an
 * edge signs users in): the error when the change breaks it. A module kind brings its rules to
 * every owner; an owner kind may add its own (`moduleRules`). Every rule runs whenever a module
 * of the owner is set or removed, inside the transaction.
 */
export type ModuleRule<Owner = unknown> = (change: ModuleChange<Owner>) => ApiError | undefined | Promise<ApiError | undefined>;

/**
 * What a module kind declares; `defineModule` adds the check of stored values. `Parsed` is what
 * `parse` makes when `finish` completes it (a SAML module's certificate is made after); without
 * `finish`, it is the stored value.
 */
export interface ModuleSpec<Request extends TObject, Stored extends TSchema, Parsed = Static<Stored>> {
  /** The body field and the path segment: `backend`, `ip_restriction`, `traffic_policy`. */
  name: string;
  /** What a message calls it: "backend". */
  title: string;
  /** The request shape (a PUT body, or the field in a create or PATCH). */
  request: Request;
  /** What is stored: the shape `parse` and `finish` return and the edges read. */
  stored: Stored;
  /** The response shape. */
  response: TObject;
  /** Checks a request value (already validated against `request`): what is stored, and the ids it names. */
  parse(body: Static<Request>, ctx: RequestContext): { value: Parsed; refs: string[] };
  /**
   * Slow or asynchronous work on a parsed value (making a key pair and a certificate), run after
   * `parse` and before the transaction; what it returns is stored.
   */
  finish?(value: Parsed, ctx: RequestContext): Promise<Static<Stored>>;
  /** What the ids in `refs` may name: checked to exist in the account, in the transaction. */
  references?: Target;
  /** The response shape of a stored value. */
  toApi(value: Static<Stored>, view: ModuleView): Record<string, unknown>;
  /** Modules of the same owner this one cannot be set beside (the old `policy` and `traffic_policy`). */
  excludes?: readonly string[];
  /** Rules between this module and the owner's others, wherever it is used. */
  rules?: readonly ModuleRule[];
}

export interface ModuleDefinition<Request extends TObject = TObject, Stored extends TSchema = TSchema> extends ModuleSpec<Request, Stored, unknown> {
  /**
   * A stored value, checked against `stored`: one that fails is a bug of the module or a damaged
   * row, and is an error (a 500), never a value shown or enforced.
   */
  read(value: unknown): Static<Stored>;
}

/** Declares a module kind: its shapes are TypeBox schemas, and its request and stored types follow from them. */
export function defineModule<Request extends TObject, Stored extends TSchema>(spec: ModuleSpec<Request, Stored>): ModuleDefinition<Request, Stored>;
/** A module kind whose parsed value `finish` completes before it is stored. */
export function defineModule<Request extends TObject, Stored extends TSchema, Parsed>(
  spec: ModuleSpec<Request, Stored, Parsed> & Required<Pick<ModuleSpec<Request, Stored, Parsed>, 'finish'>>,
): ModuleDefinition<Request, Stored>;
export function defineModule<Request extends TObject, Stored extends TSchema>(spec: ModuleSpec<Request, Stored, unknown>): ModuleDefinition<Request, Stored> {
  const valid = compileValidator(spec.stored, 'body');
  return {
    ...spec,
    read(value) {
      if (valid(value)) return value as Static<Stored>;
      const [first] = valid.errors ?? [];
      throw new Error(`a ${spec.name} module value does not have its stored shape: ${first?.instancePath || '/'} ${first?.message ?? 'is invalid'}`);
    },
  };
}

/** A stored module: its value and the ids it names. */
export interface StoredModule {
  value: unknown;
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
      return [m.name, module ? m.toApi(m.read(module.value), view) : null];
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
  for (const row of rows) out.get(row.owner_id)!.set(row.name, { value: JSON.parse(row.value) as unknown, refs: [] });
  for (const ref of refs) out.get(ref.owner_id)?.get(ref.name)?.refs.push(ref.target_id);
  return out;
}

/** Sets (or, with undefined, removes) one module of an owner; a value is checked against the module's stored shape first. */
export async function writeModule(db: ScopedDb, ownerId: string, m: ModuleDefinition, module: StoredModule | undefined): Promise<void> {
  await db.delete('module_refs', { owner_id: ownerId, name: m.name });
  await db.delete('modules', { owner_id: ownerId, name: m.name });
  if (!module) return;
  await db.insert('modules', { owner_id: ownerId, name: m.name, value: JSON.stringify(m.read(module.value)) });
  await db.insert(
    'module_refs',
    module.refs.map((target_id, position) => ({ owner_id: ownerId, name: m.name, target_id, position })),
  );
}

/** Removes every module of owners that are being deleted. */
export async function removeModules(db: ScopedDb, ownerIds: string | readonly string[]): Promise<void> {
  if (typeof ownerIds !== 'string' && ownerIds.length === 0) return;
  await db.delete('module_refs', { owner_id: ownerIds });
  await db.delete('modules', { owner_id: ownerIds });
}
