// What TCP and TLS edges (and, later, HTTPS edges) do alike with their hostports: check their
// form before the transaction, claim them in it (the body's list replaces the stored one), free
// them when the edge goes, and show them (null when none). Each kind of hostport says how.
import { Type } from '@sinclair/typebox';
import { errors } from '../../core/errors.js';
import {
  Body,
  DescribedCreate,
  DescribedFields,
  DescribedPatch,
  Nullable,
  Patch,
  describedChanges,
  describedColumns,
  describedResponse,
} from '../../core/schema.js';
import { moduleFields, moduleRequestFields, type ModuleDefinition } from '../../crud/modules.js';
import type { RowsReference } from '../../crud/references.js';
import type { ScopedDb } from '../../db/scoped.js';

export interface HostportKind {
  /** The request's values checked for form, as they are looked up. */
  read(values: readonly string[]): string[];
  /** Makes `values` (from `read`) the ones the edge serves, in order; in the transaction. */
  claim(db: ScopedDb, edgeId: string, values: readonly string[]): Promise<void>;
  release(db: ScopedDb, edgeId: string): Promise<void>;
  /** The hostports of a page of edges, in order. */
  of(db: ScopedDb, edgeIds: readonly string[]): Promise<Map<string, string[]>>;
  /** The unique index that keeps a hostport on one edge. */
  uniqueIndex: string;
  /** The table that names what the edges serve: a reference of the edge definition, so that a served address or domain cannot be deleted. */
  served: RowsReference;
  /** What the request's and the response's lists hold, for the schemas. */
  requestDescription: string;
  responseDescription: string;
}

/** The resource, create and update schemas of an edge: description, metadata, hostports and its modules. */
export function edgeSchemas(spec: { prefix: string; title: string; hostports: HostportKind; modules: readonly ModuleDefinition[] }) {
  const Hostports = Type.Array(Type.String({ maxLength: 300 }), { description: spec.hostports.requestDescription });
  return {
    resource: Type.Object(
      {
        ...DescribedFields(spec.prefix),
        hostports: Nullable(Type.Array(Type.String(), { description: spec.hostports.responseDescription })),
        ...moduleFields(spec.modules),
      },
      { description: spec.title },
    ),
    create: Body({ ...DescribedCreate, hostports: Type.Optional(Nullable(Hostports)), ...moduleRequestFields(spec.modules) }),
    update: Body({ ...DescribedPatch, hostports: Patch(Hostports), ...moduleRequestFields(spec.modules) }),
  };
}

interface EdgeRow {
  id: string;
  created_at: string;
  description: string;
  metadata: string;
}

type EdgeBody = { hostports?: string[] | null; description?: string | null; metadata?: string | null };

/** The `prepare`, `patch`, `hooks` and `toApi` of an edge definition with hostports of this kind. */
export function hostportEdge<Row extends EdgeRow>(kind: HostportKind) {
  return {
    prepare(_ctx: unknown, body: EdgeBody & { description?: string; metadata?: string }) {
      if (body.hostports) kind.read(body.hostports);
      return { row: describedColumns(body) as Omit<Row, 'id' | 'account_id' | 'created_at'> };
    },
    patch(_ctx: unknown, body: EdgeBody): Partial<Row> {
      if (body.hostports) kind.read(body.hostports);
      return describedChanges(body) as Partial<Row>;
    },
    hooks: {
      async afterWrite(db: ScopedDb, _ctx: unknown, row: Row, operation: 'create' | 'update' | 'delete', body?: Record<string, unknown>) {
        const hostports = body?.hostports as string[] | null | undefined;
        if (operation !== 'delete' && hostports) await kind.claim(db, row.id, kind.read(hostports));
      },
      beforeDelete: (db: ScopedDb, _ctx: unknown, row: Row) => kind.release(db, row.id),
      async expand(db: ScopedDb, rows: Row[]): Promise<Row[]> {
        const served = await kind.of(
          db,
          rows.map((r) => r.id),
        );
        return rows.map((r) => ({ ...r, served: served.get(r.id) }));
      },
      // The claimed rows are locked, so only a change no lock saw could trip the index.
      onUniqueViolation: (target: string) =>
        target === kind.uniqueIndex ? errors.conflict({ title: 'edge', reason: 'another edge claimed one of its hostports at the same moment' }) : undefined,
    },
    toApi: (row: Row & { served?: string[] }) => ({
      ...describedResponse(row),
      hostports: row.served && row.served.length > 0 ? row.served : null,
    }),
  };
}
