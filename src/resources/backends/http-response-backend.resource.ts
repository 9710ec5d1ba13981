// HTTP-response backends: answer every request with a fixed status, headers and body.
import { describedChanges, describedColumns, describedResponse } from '../../core/schema.js';
import { defineResource } from '../../crud/definition.js';
import type { HttpResponseBackendsTable } from './backend.table.js';
import { backendInUse } from './backend-links.js';
import * as S from './backend.schema.js';
import { checkResponseBody, checkStatusCode } from './backend-values.js';
import { checkHeaders } from '../../edge-config/values/headers.js';
import { backendCatalogue } from './backend.errors.js';

export const httpResponseBackend = defineResource({
  kind: 'http_response_backend',
  title: 'HTTP-response backend',
  errors: backendCatalogue,
  prefix: 'bkdhr',
  path: '/backends/http_response',
  listKey: 'backends',
  table: 'backends_http_response',
  schemas: { resource: S.HttpResponseBackend, create: S.HttpResponseBackendCreate, update: S.HttpResponseBackendUpdate },
  inUse: backendInUse,
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
