// What every mutation of a kind does around its own work: one transaction; the observers told in
// it (the audit log, Idempotency-Key marks: db/observers.ts), then the kind's afterWrite; a
// unique or foreign-key violation the store reports turned into a 409, never a 500; and the
// kind's afterCommit once the change is durable.
import type { RequestContext } from '../core/context.js';
import { errors } from '../core/errors.js';
import { observeMutation, type MutationObserver } from '../db/observers.js';
import type { ScopedDb } from '../db/scoped.js';
import { ForeignKeyViolation, UniqueViolation, withTx, type Store } from '../db/store.js';
import { authorizerOf } from './authorization.js';
import type { AnyDefinition } from './definition.js';
import type { KindRows, PathIds, Row } from './rows.js';

type Change = 'create' | 'update' | 'delete';

/** Unique and foreign-key violations that the kind does not map: a 409, never a 500. */
function translateConflict(d: AnyDefinition, error: unknown, row: Record<string, unknown>): unknown {
  if (error instanceof UniqueViolation) {
    return (
      d.hooks?.onUniqueViolation?.(error.target, row) ??
      errors.conflict({ title: d.title, reason: `it would duplicate a value that must be unique (${error.target})` })
    );
  }
  if (error instanceof ForeignKeyViolation)
    return errors.conflict({ title: d.title, reason: 'a resource it names was deleted at the same time, or one being deleted is still named' });
  return error;
}

export function kindMutations(store: Store, d: AnyDefinition, observers: readonly MutationObserver[], rows: KindRows) {
  const mutations = {
    /**
     * The end of every change inside its transaction: the observers, told under the operation's
     * id (even when it changed nothing), then the kind's afterWrite when a row was written.
     */
    async written(db: ScopedDb, ctx: RequestContext, operation: string, row: Row, write?: { change: Change; row?: Row; body?: Record<string, unknown> }) {
      await observeMutation(observers, db, ctx, { operation, resourceId: row.id, parentId: d.parent ? (row[d.parent.column] as string) : undefined });
      if (write) await d.hooks?.afterWrite?.(db, ctx, write.row ?? row, write.change, write.body);
    },

    /**
     * `work` in one transaction, its conflicts translated (`attempted`: the row it tried to
     * write, for the kind's own 409), and the kind's afterCommit with the row it returns.
     */
    async commit(
      ctx: RequestContext,
      change: Change,
      work: (db: ScopedDb) => Promise<Row>,
      attempted: () => Record<string, unknown> = () => ({}),
    ): Promise<Row> {
      let row: Row;
      try {
        row = await withTx(store, (trx) => work(rows.scoped(trx, ctx)));
      } catch (error) {
        throw translateConflict(d, error, attempted());
      }
      d.hooks?.afterCommit?.(ctx, change, row as never);
      return row;
    },

    /**
     * A change of the owner that is not a PATCH (a detach, a module PUT or DELETE): the row locked,
     * the change authorized as an update, `work` done and observed as `operation`. `work` returns
     * undefined when it changed nothing: then neither afterWrite nor afterCommit sees a new row.
     */
    async changeOwner(
      ctx: RequestContext,
      path: PathIds,
      operation: string,
      body: Record<string, unknown> | undefined,
      work: (db: ScopedDb, current: Row) => Promise<Row | undefined>,
    ): Promise<void> {
      await mutations.commit(ctx, 'update', async (db) => {
        const current = await rows.load(db, path, true);
        await authorizerOf(d)(ctx, 'update', { row: current, body }, db);
        const row = await work(db, current);
        await mutations.written(db, ctx, operation, current, row && { change: 'update', row });
        return row ?? current;
      });
    },
  };
  return mutations;
}
