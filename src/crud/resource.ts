// The generic core: a resource kind is declared once (prefix, path, table, schemas, hooks) and
// gets create / get / list / update / delete with every convention of the API: scoped queries,
// one transaction per mutation, pagination, "PATCH changes only what is present", immutable
// fields, 404 for ids of other accounts and wrong prefixes.
import type { Static, TObject } from '@sinclair/typebox';
import type { Transaction } from 'kysely';
import { errors } from '../core/errors.js';
import { hasPrefix, newId } from '../core/ids.js';
import type { RequestContext } from '../core/context.js';
import { rfc3339 } from '../core/time.js';
import type { Database } from '../db/schema.js';
import { read, withTx, type Executor, type Store } from '../db/store.js';
import { deleteById, findById, insert, listPage, updateById, type BaseRow, type TableName } from './store.js';

export type Trx = Transaction<Database>;
export type Operation = 'create' | 'get' | 'list' | 'update' | 'delete';

export interface ResourceSchemas {
  resource: TObject;
  create: TObject;
  update: TObject;
}

export interface ResourceDefinition<Row extends BaseRow, S extends ResourceSchemas> {
  /** snake_case singular, used in operation ids: `api_key.create`. */
  kind: string;
  /** Human name used in messages: "API key". */
  title: string;
  prefix: string;
  path: string;
  listKey: string;
  table: TableName;
  schemas: S;
  /** Fields accepted at creation that a PATCH may not send (400 fieldNotUpdatable). */
  immutable?: readonly string[];
  /** Body fields that are not columns of the table: the hooks store them (join tables). */
  virtualFields?: readonly string[];
  /** When set, only admins may create, update or delete; the text completes "Only admins may …". */
  adminOnlyWrites?: string;
  /**
   * The columns of a new row from the create body. Runs before the transaction: slow or
   * non-database work (key generation, hashing) belongs here. `reveal` is merged into the
   * create response only (a token shown once).
   */
  prepare(ctx: RequestContext, body: Static<S['create']>): Promise<Prepared<Row>> | Prepared<Row>;
  /** Columns to change from a PATCH body; by default every non-null field of the same name. */
  patch?(ctx: RequestContext, body: Static<S['update']>, current: Row): Partial<Row>;
  /** Adds what lives outside the row (join tables) to rows about to be shown; one call per page. */
  expand?(executor: Executor, ctx: RequestContext, rows: Row[]): Promise<Row[]>;
  /** The API shape of a row; `uri` is added by the core. */
  toApi(row: Row, ctx: RequestContext): Omit<Static<S['resource']>, 'uri'>;
  hooks?: {
    /** Checks that need the database, inside the transaction (references exist, conflicts). */
    beforeCreate?(trx: Trx, ctx: RequestContext, row: Row): Promise<void>;
    beforeUpdate?(trx: Trx, ctx: RequestContext, current: Row, changes: Partial<Row>): Promise<void>;
    /** After the row is written, in the same transaction: join rows, revision counters. */
    afterWrite?(trx: Trx, ctx: RequestContext, row: Row, body: Record<string, unknown>, operation: 'create' | 'update'): Promise<void>;
    /** Refuse (409 naming referrers) or delete dependants in the same transaction. */
    beforeDelete?(trx: Trx, ctx: RequestContext, row: Row): Promise<void>;
    /** Row-level permission on update and delete (role checks are done before). */
    authorize?(ctx: RequestContext, operation: 'update' | 'delete', row: Row): void;
    /** After a successful commit: cache invalidation and the like. */
    afterCommit?(ctx: RequestContext, operation: 'create' | 'update' | 'delete', row: Row): void;
    /** Translate a unique violation of this table into the resource's own 409. */
    onUniqueViolation?(target: string, row: Partial<Row>): Error | undefined;
  };
}

export interface Prepared<Row> {
  row: Omit<Row, 'id' | 'account_id' | 'created_at'>;
  reveal?: Record<string, unknown>;
  /** A pre-allocated id, when prepare needed it (an API key's token embeds its id). */
  id?: string;
}

export interface ListQueryInput {
  limit?: number;
  before_id?: string;
}

export interface Resource<Row extends BaseRow = BaseRow, S extends ResourceSchemas = ResourceSchemas> {
  readonly definition: ResourceDefinition<Row, S>;
  uri(ctx: { baseUrl: string }, id: string): string;
  create(ctx: RequestContext, body: Static<S['create']>): Promise<Static<S['resource']>>;
  get(ctx: RequestContext, rawId: string): Promise<Static<S['resource']>>;
  list(ctx: RequestContext, query: ListQueryInput): Promise<Record<string, unknown>>;
  update(ctx: RequestContext, rawId: string, body: Static<S['update']>): Promise<Static<S['resource']>>;
  remove(ctx: RequestContext, rawId: string): Promise<void>;
  /** The row, or 404 when the id is malformed, of another prefix, or not in this account. */
  load(executor: Trx | Store['db'], ctx: RequestContext, rawId: string): Promise<Row>;
}

function defaultPatch(body: Record<string, unknown>, virtualFields: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([k, v]) => v !== null && v !== undefined && !virtualFields.includes(k)));
}

export function defineResource<Row extends BaseRow, S extends ResourceSchemas>(store: Store, definition: ResourceDefinition<Row, S>): Resource<Row, S> {
  const { table, prefix, title, hooks = {} } = definition;

  const checkId = (rawId: string) => {
    if (!hasPrefix(rawId, prefix)) throw errors.invalidPathId({ value: rawId, title, prefix });
    return rawId;
  };

  const load: Resource<Row, S>['load'] = async (executor, ctx, rawId) => {
    const row = await findById<Row>(executor, ctx.scope, table, checkId(rawId));
    if (!row) throw errors.notFound({ title, id: rawId });
    return row;
  };

  const uri = (ctx: { baseUrl: string }, id: string) => `${ctx.baseUrl}${definition.path}/${id}`;
  const present = (row: Row, ctx: RequestContext) => ({ ...definition.toApi(row, ctx), uri: uri(ctx, row.id) }) as Static<S['resource']>;
  const expand = async (executor: Executor, ctx: RequestContext, rows: Row[]) => (definition.expand && rows.length > 0 ? definition.expand(executor, ctx, rows) : rows);
  const expandOne = async (executor: Executor, ctx: RequestContext, row: Row) => (await expand(executor, ctx, [row]))[0]!;

  const translateUnique = (error: unknown, row: Partial<Row>) => {
    if (error instanceof Error && error.name === 'UniqueViolation') {
      const mapped = hooks.onUniqueViolation?.((error as unknown as { target: string }).target, row);
      if (mapped) return mapped;
    }
    return error;
  };

  return {
    definition,
    uri,

    async create(ctx, body) {
      const prepared = await definition.prepare(ctx, body);
      const row = { ...prepared.row, id: prepared.id ?? newId(prefix), account_id: ctx.scope.accountId, created_at: rfc3339(ctx.now) } as Row;
      let shown: Row;
      try {
        shown = await withTx(store, async (trx) => {
          await hooks.beforeCreate?.(trx, ctx, row);
          await insert(trx, table, row);
          await hooks.afterWrite?.(trx, ctx, row, body as Record<string, unknown>, 'create');
          return expandOne(trx, ctx, row);
        });
      } catch (error) {
        throw translateUnique(error, row);
      }
      hooks.afterCommit?.(ctx, 'create', row);
      return { ...present(shown, ctx), ...prepared.reveal };
    },

    async get(ctx, rawId) {
      return present(await read(async () => expandOne(store.db, ctx, await load(store.db, ctx, rawId))), ctx);
    },

    async list(ctx, query) {
      const limit = query.limit ?? 100;
      const beforeId = query.before_id;
      const { rows, hasMore } = await read(async () => {
        if (beforeId !== undefined) {
          if (!hasPrefix(beforeId, prefix)) throw errors.invalidBeforeId({ value: beforeId, prefix });
          if (!(await findById(store.db, ctx.scope, table, beforeId))) throw errors.beforeIdNotFound({ value: beforeId, title });
        }
        const page = await listPage<Row>(store.db, ctx.scope, table, { limit, beforeId });
        return { rows: await expand(store.db, ctx, page.rows), hasMore: page.hasMore };
      });
      const listUri = `${ctx.baseUrl}${definition.path}`;
      const last = rows[rows.length - 1];
      return {
        [definition.listKey]: rows.map((row) => present(row, ctx)),
        uri: listUri,
        next_page_uri: hasMore && last ? `${listUri}?before_id=${last.id}&limit=${limit}` : null,
      };
    },

    async update(ctx, rawId, body) {
      const provided = Object.values(body as Record<string, unknown>).filter((v) => v !== null && v !== undefined);
      if (provided.length === 0) throw errors.noUpdatableFields({ fields: Object.keys(definition.schemas.update.properties) });
      let updated: Row | undefined;
      let attempted: Partial<Row> = body as Partial<Row>;
      try {
        updated = await withTx(store, async (trx) => {
          const current = await load(trx, ctx, rawId);
          hooks.authorize?.(ctx, 'update', current);
          const changes = (definition.patch ? definition.patch(ctx, body, current) : defaultPatch(body as Record<string, unknown>, definition.virtualFields ?? [])) as Partial<Row>;
          await hooks.beforeUpdate?.(trx, ctx, current, changes);
          const row = { ...current, ...changes };
          attempted = row;
          await updateById(trx, ctx.scope, table, current.id, changes);
          await hooks.afterWrite?.(trx, ctx, row, body as Record<string, unknown>, 'update');
          return expandOne(trx, ctx, row);
        });
      } catch (error) {
        throw translateUnique(error, attempted);
      }
      hooks.afterCommit?.(ctx, 'update', updated!);
      return present(updated!, ctx);
    },

    async remove(ctx, rawId) {
      const removed = await withTx(store, async (trx) => {
        const current = await load(trx, ctx, rawId);
        hooks.authorize?.(ctx, 'delete', current);
        await hooks.beforeDelete?.(trx, ctx, current);
        await deleteById(trx, ctx.scope, table, current.id);
        return current;
      });
      hooks.afterCommit?.(ctx, 'delete', removed);
    },

    load,
  };
}
