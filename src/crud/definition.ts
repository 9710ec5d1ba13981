// What a resource kind declares. The generic service (resource.ts) and routes (routes.ts) turn a
// definition into create / get / list / update / delete with every convention of the API; the
// registry (kinds.ts) turns the references that definitions declare into Ref rendering, one
// existence check for referenced ids and one "still in use" check on delete.
import type { Static, TObject } from '@sinclair/typebox';
import type { RequestContext } from '../core/context.js';
import type { ApiError, Catalogue } from '../core/errors.js';
import type { Ref } from '../core/schema.js';
import type { OwnedTable, RowOf, ScopedDb } from '../db/scoped.js';
import type { ModuleDefinition, ModuleRule } from './modules.js';
import type { Reference } from './references.js';

export type Operation = 'create' | 'get' | 'list' | 'update' | 'delete';
export const ALL_OPERATIONS: readonly Operation[] = ['create', 'get', 'list', 'update', 'delete'];
export const isWrite = (operation: Operation) => operation === 'create' || operation === 'update' || operation === 'delete';

/** The operation id of one of the five operations of a kind: `ip_policy.create`. */
export const operationId = (kind: string, operation: Operation) => `${kind}.${operation}`;
/** The operation id of a module route of a kind: `tcp_edge.backend_module.replace`. */
export const moduleOperationId = (kind: string, module: string, action: 'replace' | 'get' | 'delete') => `${kind}.${module}_module.${action}`;
/** The operation id of a detach route of a kind: `reserved_domain.delete_certificate`. */
export const detachOperationId = (kind: string, part: string) => `${kind}.delete_${part}`;

export interface ResourceSchemas {
  resource: TObject;
  create: TObject;
  update: TObject;
}

/** A row as resources see it: a table row with `id`, `account_id` and `created_at`. */
export type ResourceTable = { [T in OwnedTable]: RowOf<T> extends { id: string; created_at: string } ? T : never }[OwnedTable];

/** What a response is rendered with: the request's context and Refs by id. */
export interface View extends RequestContext {
  /** `{ id, uri }` of any resource, its address found from the id's prefix. */
  ref(id: string): Ref;
}

type CreateBody<S extends ResourceSchemas> = Static<S['create']>;
type UpdateBody<S extends ResourceSchemas> = Static<S['update']>;

export interface Prepared<Row> {
  row: Omit<Row, 'id' | 'account_id' | 'created_at'>;
  /** Merged into the create response only (a token shown once); each field is one of the definition's `shownOnce`. */
  reveal?: Record<string, unknown>;
  /** A pre-allocated id, when prepare needed it (an API key's token embeds its id). */
  id?: string;
}

/** What an operation acts on, for authorization: the stored row and the request body, when there are. */
export interface Subject<Row> {
  row?: Row;
  body?: unknown;
}

export interface ResourceDefinition<T extends ResourceTable, S extends ResourceSchemas> {
  /** snake_case singular, used in operation ids (`api_key.create`) and in references. */
  kind: string;
  /** Human name used in messages: "API key". */
  title: string;
  /**
   * The kind's own errors (its `<kind>.errors.ts`), which the registry gathers into the API's
   * catalogue and docs/errors.md; kinds that share errors (the five backends) name one catalogue.
   */
  errors?: Catalogue;
  prefix: string;
  /** The collection's path; a parent's id is a parameter: `/edges/https/:edge_id/routes`. */
  path: string;
  /** The list's key in list responses; required when the kind has a list. */
  listKey?: string;
  table: T;
  /**
   * Where get and list read, when it is not `table`: a view showing more rows than the table holds
   * (endpoints: the cloud endpoints of the table beside the live agents'). Writes go to `table`; a
   * PATCH or DELETE of a row only the view shows is refused with `notWritable(id)`.
   */
  reads?: { view: OwnedTable; notWritable(id: string): ApiError };
  schemas: S;
  /** The operations this kind has (default: all five). */
  operations?: readonly Operation[];
  /**
   * A kind that lives under another: its path parameter, the column that holds the parent's id,
   * the parent's kind, and what deleting the parent does to its children (delete them with it,
   * their modules and links too, or refuse). A write locks the parent against deletion
   * (`key share`), or, with `serialize`, against every other write under the same parent
   * (`update`), so that checks across the children (a unique match, a count) hold.
   */
  parent?: { param: string; column: keyof RowOf<T> & string; kind: string; serialize?: boolean; onDelete: 'restrict' | 'cascade' };
  /** The resource's `uri`: an absolute address (default) or the path alone. */
  uri?: 'absolute' | 'path';
  /** Fields accepted at creation that a PATCH may not send (400 fieldNotUpdatable). */
  immutable?: readonly string[];
  /** Every id of another resource this kind keeps, and where: the parent is declared by `parent`. */
  references?: readonly Reference<RowOf<T>>[];
  /**
   * Parts of a resource that a DELETE of `<item path>/<name>` takes off it
   * (`/reserved_domains/{id}/certificate`): the columns to change, given the stored row, or the
   * 400 when it cannot be taken off. Run in a transaction, as an update; nothing attached is a 204 too.
   */
  detach?: Record<string, (row: RowOf<T>, ctx: RequestContext) => Partial<RowOf<T>>>;
  /**
   * The modules of this kind (`/edges/tcp/{id}/backend`): each a body field of create and PATCH,
   * a response field (null when unset) and PUT/GET/DELETE routes under the item (src/crud/modules.ts).
   */
  modules?: readonly ModuleDefinition[];
  /**
   * Rules between this owner's modules that only this kind has (a module allowed by its type, one
   * route of an edge with OAuth); the rules a module kind brings everywhere are on the module.
   */
  moduleRules?: readonly ModuleRule<RowOf<T>>[];
  /** The 409 when something still references a resource of this kind that is being deleted. */
  inUse?(id: string, referrers: readonly string[]): ApiError;
  /**
   * The one authorization decision for every operation of the kind (default: read_only may only
   * read). Called with the stored row for get, update and delete, and with the body for create
   * and update; inside the transaction for writes, so what it reads through `db` holds.
   */
  authorize?(ctx: RequestContext, operation: Operation, subject: Subject<RowOf<T>>, db: ScopedDb): void | Promise<void>;
  /**
   * The columns of a new row from the create body. Runs before the transaction: slow or
   * non-database work (key generation, hashing, signing) belongs here; `db` reads the account.
   * Absent only for a kind without `create` (audit events, which the core writes itself).
   */
  prepare?(ctx: RequestContext, body: CreateBody<S>, db: ScopedDb): Promise<Prepared<RowOf<T>>> | Prepared<RowOf<T>>;
  /**
   * Response fields that only the create answer shows (`prepare`'s `reveal`: a token); every later
   * read shows null. The answer recorded for an Idempotency-Key holds them as null too: a secret
   * shown once is never written to the store.
   */
  shownOnce?: readonly string[];
  /** Columns to change from a PATCH body; by default every non-null body field that is not a link. */
  patch?(ctx: RequestContext, body: UpdateBody<S>, current: RowOf<T>): Partial<RowOf<T>>;
  /** The API shape of a row; `uri` is added by the core. */
  toApi(row: RowOf<T>, view: View): Omit<Static<S['resource']>, 'uri'>;
  hooks?: {
    /** Checks that need the database, inside the transaction (conflicts the schema cannot see). */
    beforeCreate?(db: ScopedDb, ctx: RequestContext, row: RowOf<T>): Promise<void>;
    beforeUpdate?(db: ScopedDb, ctx: RequestContext, current: RowOf<T>, changes: Partial<RowOf<T>>): Promise<void>;
    beforeDelete?(db: ScopedDb, ctx: RequestContext, row: RowOf<T>): Promise<void>;
    /**
     * Columns of a new row that can only be chosen inside the transaction (a free address), merged
     * into the row before the checks and the insert.
     */
    allocate?(db: ScopedDb, ctx: RequestContext, row: RowOf<T>): Promise<Partial<RowOf<T>>>;
    /**
     * After any change is written, in the same transaction (revision counters, rows of other
     * tables the kind keeps itself); `body` is the create or PATCH body, when there is one.
     */
    afterWrite?(db: ScopedDb, ctx: RequestContext, row: RowOf<T>, operation: 'create' | 'update' | 'delete', body?: Record<string, unknown>): Promise<void>;
    /** Adds what responses show beyond the row (rows of other tables), for a page of rows: a query or two, not one a row. */
    expand?(db: ScopedDb, rows: RowOf<T>[]): Promise<RowOf<T>[]>;
    /** After a successful commit: cache invalidation and the like. */
    afterCommit?(ctx: RequestContext, operation: 'create' | 'update' | 'delete', row: RowOf<T>): void;
    /** Translate a unique violation of this table into the resource's own 409. */
    onUniqueViolation?(target: string, row: Partial<RowOf<T>>): ApiError | undefined;
  };
}

/** Declares a resource kind; the identity function, there for type inference. */
export function defineResource<T extends ResourceTable, S extends ResourceSchemas>(definition: ResourceDefinition<T, S>): ResourceDefinition<T, S> {
  return definition;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a list of definitions of different kinds
export type AnyDefinition = ResourceDefinition<any, any>;
