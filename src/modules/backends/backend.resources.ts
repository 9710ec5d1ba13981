// The five backend kinds. All share the list key `backends` and the refusal to delete a backend
// that something still uses; failover and weighted backends keep their children in
// backend_links, checked against the account and for cycles in the transaction.
import { errors } from '../../core/errors.js';
import { describedChanges, describedColumns, describedResponse } from '../../core/schema.js';
import { defineResource, type LinkItem } from '../../crud/definition.js';
import {
  toBool,
  type FailoverBackendsTable,
  type HttpResponseBackendsTable,
  type StaticBackendsTable,
  type TunnelGroupBackendsTable,
  type WeightedBackendsTable,
} from '../../db/schema.js';
import { BACKEND_KINDS, backendNotFound, checkNoCycle } from './backend-links.js';
import * as S from './backend.schema.js';
import { labelsMatch, parseLabels } from '../tunnels/tunnel-labels.js';
import { checkAddress, checkFailoverChildren, checkHeaders, checkLabels, checkResponseBody, checkStatusCode, checkWeightedChildren } from './backend-values.js';

const inUse = (id: string, referrers: readonly string[]) => errors.backendInUse({ id, referrers });
const children = { table: 'backend_links', from: 'parent_id', to: 'child_id', kinds: BACKEND_KINDS, notFound: backendNotFound, check: checkNoCycle } as const;

export const tunnelGroupBackend = defineResource({
  kind: 'tunnel_group_backend',
  title: 'tunnel-group backend',
  prefix: 'bkdtg',
  path: '/backends/tunnel_group',
  listKey: 'backends',
  table: 'backends_tunnel_group',
  schemas: { resource: S.TunnelGroupBackend, create: S.TunnelGroupBackendCreate, update: S.TunnelGroupBackendUpdate },
  inUse,
  prepare: (_ctx, body) => ({ row: { ...describedColumns(body), labels: JSON.stringify(checkLabels(body.labels ?? {})) } }),
  patch: (_ctx, body): Partial<TunnelGroupBackendsTable> => ({
    ...describedChanges(body),
    ...(body.labels != null && { labels: JSON.stringify(checkLabels(body.labels)) }),
  }),
  hooks: {
    // The account's live labeled tunnels, read once for a page, matched here.
    async expand(db, rows) {
      const tunnels = (await db.select('live_tunnels', { endpoint_id: null }, { orderBy: ['id'] })).map((t) => ({
        id: t.id,
        labels: parseLabels(t.labels ?? '{}'),
      }));
      return rows.map((row) => {
        const labels = parseLabels(row.labels);
        return { ...row, tunnel_ids: tunnels.filter((t) => labelsMatch(labels, t.labels)).map((t) => t.id) };
      });
    },
  },
  toApi: (row: TunnelGroupBackendsTable, view) => ({
    ...describedResponse(row),
    labels: parseLabels(row.labels),
    tunnels: ((row as TunnelGroupBackendsTable & { tunnel_ids?: string[] }).tunnel_ids ?? []).map((id) => view.ref(id)),
  }),
});

export const httpResponseBackend = defineResource({
  kind: 'http_response_backend',
  title: 'HTTP-response backend',
  prefix: 'bkdhr',
  path: '/backends/http_response',
  listKey: 'backends',
  table: 'backends_http_response',
  schemas: { resource: S.HttpResponseBackend, create: S.HttpResponseBackendCreate, update: S.HttpResponseBackendUpdate },
  inUse,
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
  toApi: (row: HttpResponseBackendsTable) => ({
    ...describedResponse(row),
    body: row.body,
    headers: JSON.parse(row.headers) as Record<string, string>,
    status_code: Number(row.status_code),
  }),
});

export const staticBackend = defineResource({
  kind: 'static_backend',
  title: 'static backend',
  prefix: 'bkdsc',
  path: '/backends/static',
  listKey: 'backends',
  table: 'backends_static',
  schemas: { resource: S.StaticBackend, create: S.StaticBackendCreate, update: S.StaticBackendUpdate },
  inUse,
  prepare: (_ctx, body) => ({ row: { ...describedColumns(body), address: checkAddress(body.address), tls_enabled: body.tls?.enabled ?? false } }),
  patch: (_ctx, body): Partial<StaticBackendsTable> => ({
    ...describedChanges(body),
    ...(body.address != null && { address: checkAddress(body.address) }),
    ...(body.tls != null && { tls_enabled: body.tls.enabled ?? false }),
  }),
  toApi: (row: StaticBackendsTable) => ({ ...describedResponse(row), address: row.address, tls: { enabled: toBool(row.tls_enabled) } }),
});

export const failoverBackend = defineResource({
  kind: 'failover_backend',
  title: 'failover backend',
  prefix: 'bkdfo',
  path: '/backends/failover',
  listKey: 'backends',
  table: 'backends_failover',
  schemas: { resource: S.FailoverBackend, create: S.FailoverBackendCreate, update: S.FailoverBackendUpdate },
  inUse,
  links: { backends: { ...children, parse: checkFailoverChildren } },
  prepare: (_ctx, body) => ({ row: describedColumns(body) }),
  toApi: (row: FailoverBackendsTable & { backends: LinkItem[] }) => ({ ...describedResponse(row), backends: row.backends.map((c) => c.id) }),
});

export const weightedBackend = defineResource({
  kind: 'weighted_backend',
  title: 'weighted backend',
  prefix: 'bkdwd',
  path: '/backends/weighted',
  listKey: 'backends',
  table: 'backends_weighted',
  schemas: { resource: S.WeightedBackend, create: S.WeightedBackendCreate, update: S.WeightedBackendUpdate },
  inUse,
  links: { backends: { ...children, weighted: true, parse: checkWeightedChildren } },
  prepare: (_ctx, body) => ({ row: describedColumns(body) }),
  toApi: (row: WeightedBackendsTable & { backends: LinkItem[] }) => ({
    ...describedResponse(row),
    backends: Object.fromEntries(row.backends.map((c) => [c.id, c.weight ?? 0])),
  }),
});
