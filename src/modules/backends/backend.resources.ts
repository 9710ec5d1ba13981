// The five backend kinds. All share the list key `backends`, the refusal to delete a backend
// that something still uses, and (failover, weighted) child links checked in the transaction.
import { describedChanges, describedColumns } from '../../core/schema.js';
import { defineResource, type Trx } from '../../crud/resource.js';
import type { BaseRow } from '../../crud/store.js';
import { toBool, type FailoverBackendsTable, type HttpResponseBackendsTable, type StaticBackendsTable, type TunnelGroupBackendsTable, type WeightedBackendsTable } from '../../db/schema.js';
import type { Executor, Store } from '../../db/store.js';
import type { RequestContext } from '../../core/context.js';
import { checkChildren, readChildren, releaseBackend, writeChildren, type Child } from './backend-links.js';
import * as S from './backend.schema.js';
import { checkAddress, checkFailoverChildren, checkHeaders, checkLabels, checkResponseBody, checkStatusCode, checkWeightedChildren } from './backend-values.js';

const described = (row: BaseRow & { description: string; metadata: string }) => ({ id: row.id, created_at: row.created_at, description: row.description, metadata: row.metadata });

/** Hooks every backend kind has: nothing may still use a backend that is deleted. */
const leafHooks = {
  async beforeDelete(trx: Trx, ctx: RequestContext, row: { id: string }) {
    await releaseBackend(trx, ctx.scope, row.id);
  },
};

type Parent = BaseRow & { description: string; metadata: string; children?: Child[] };

/**
 * What failover and weighted backends share: `backends` lives in backend_links. The child list
 * is checked before the transaction on create (bad values cost no database work), and against
 * the account and for cycles inside it.
 */
function parentBackend<V>(toChildren: (value: V) => Child[]) {
  return {
    prepare: (_ctx: RequestContext, body: { backends?: V; description?: string; metadata?: string }) => {
      if (body.backends !== undefined) toChildren(body.backends);
      return { row: describedColumns(body) };
    },
    virtualFields: ['backends'] as const,
    async expand<R extends Parent>(executor: Executor, _ctx: RequestContext, rows: R[]) {
      const children = await readChildren(executor, rows.map((r) => r.id));
      return rows.map((row) => ({ ...row, children: children.get(row.id) ?? [] }));
    },
    hooks: {
      ...leafHooks,
      async afterWrite(trx: Trx, ctx: RequestContext, row: { id: string }, body: Record<string, unknown>) {
        if (body.backends === undefined || body.backends === null) return;
        const children = toChildren(body.backends as V);
        await checkChildren(trx, ctx.scope, row.id, children);
        await writeChildren(trx, ctx.scope, row.id, children);
      },
    },
  };
}

export function backendResources(store: Store) {
  const tunnelGroup = defineResource(store, {
    kind: 'tunnel_group_backend',
    title: 'tunnel-group backend',
    prefix: 'bkdtg',
    path: '/backends/tunnel_group',
    listKey: 'backends',
    table: 'backends_tunnel_group',
    schemas: { resource: S.TunnelGroupBackend, create: S.TunnelGroupBackendCreate, update: S.TunnelGroupBackendUpdate },
    prepare: (_ctx, body) => ({ row: { ...describedColumns(body), labels: JSON.stringify(checkLabels(body.labels ?? {})) } }),
    patch: (_ctx, body): Partial<TunnelGroupBackendsTable> => ({
      ...describedChanges(body),
      ...(body.labels != null && { labels: JSON.stringify(checkLabels(body.labels)) }),
    }),
    // No agents connect to this control plane yet, so no tunnel ever matches the labels.
    toApi: (row: TunnelGroupBackendsTable) => ({ ...described(row), labels: JSON.parse(row.labels) as Record<string, string>, tunnels: [] }),
    hooks: leafHooks,
  });

  const httpResponse = defineResource(store, {
    kind: 'http_response_backend',
    title: 'HTTP-response backend',
    prefix: 'bkdhr',
    path: '/backends/http_response',
    listKey: 'backends',
    table: 'backends_http_response',
    schemas: { resource: S.HttpResponseBackend, create: S.HttpResponseBackendCreate, update: S.HttpResponseBackendUpdate },
    prepare: (_ctx, body) => ({
      row: {
        ...describedColumns(body),
        body: checkResponseBody(body.body ?? ''),
        headers: JSON.stringify(checkHeaders(body.headers ?? {})),
        status_code: checkStatusCode(body.status_code ?? 200),
      },
    }),
    patch: (_ctx, body): Partial<HttpResponseBackendsTable> => ({
      ...describedChanges(body),
      ...(body.body != null && { body: checkResponseBody(body.body) }),
      ...(body.headers != null && { headers: JSON.stringify(checkHeaders(body.headers)) }),
      ...(body.status_code != null && { status_code: checkStatusCode(body.status_code) }),
    }),
    toApi: (row: HttpResponseBackendsTable) => ({ ...described(row), body: row.body, headers: JSON.parse(row.headers) as Record<string, string>, status_code: Number(row.status_code) }),
    hooks: leafHooks,
  });

  const staticAddress = defineResource(store, {
    kind: 'static_backend',
    title: 'static backend',
    prefix: 'bkdsc',
    path: '/backends/static',
    listKey: 'backends',
    table: 'backends_static',
    schemas: { resource: S.StaticBackend, create: S.StaticBackendCreate, update: S.StaticBackendUpdate },
    prepare: (_ctx, body) => ({ row: { ...describedColumns(body), address: checkAddress(body.address), tls_enabled: body.tls?.enabled ?? false } }),
    patch: (_ctx, body): Partial<StaticBackendsTable> => ({
      ...describedChanges(body),
      ...(body.address != null && { address: checkAddress(body.address) }),
      ...(body.tls != null && { tls_enabled: body.tls.enabled ?? false }),
    }),
    toApi: (row: StaticBackendsTable) => ({ ...described(row), address: row.address, tls: { enabled: toBool(row.tls_enabled) } }),
    hooks: leafHooks,
  });

  const failover = defineResource(store, {
    kind: 'failover_backend',
    title: 'failover backend',
    prefix: 'bkdfo',
    path: '/backends/failover',
    listKey: 'backends',
    table: 'backends_failover',
    schemas: { resource: S.FailoverBackend, create: S.FailoverBackendCreate, update: S.FailoverBackendUpdate },
    ...parentBackend(checkFailoverChildren),
    toApi: (row: FailoverBackendsTable & { children?: Child[] }) => ({ ...described(row), backends: (row.children ?? []).map((c) => c.id) }),
  });

  const weighted = defineResource(store, {
    kind: 'weighted_backend',
    title: 'weighted backend',
    prefix: 'bkdwd',
    path: '/backends/weighted',
    listKey: 'backends',
    table: 'backends_weighted',
    schemas: { resource: S.WeightedBackend, create: S.WeightedBackendCreate, update: S.WeightedBackendUpdate },
    ...parentBackend(checkWeightedChildren),
    toApi: (row: WeightedBackendsTable & { children?: Child[] }) => ({ ...described(row), backends: Object.fromEntries((row.children ?? []).map((c) => [c.id, c.weight ?? 0])) }),
  });

  return { tunnelGroup, httpResponse, staticAddress, failover, weighted };
}

