// The schemas of the five backend kinds. Limits not enforced here (counts, weights, header
// syntax) are checked in the resources, so that each failure gets its own clear error.
import { Type } from '@sinclair/typebox';
import { Body, BoundedString, DescribedCreate, DescribedFields, DescribedPatch, IdString, Patch, Ref } from '../../core/schema.js';
import { MAX_HEADERS } from '../../edge-config/values/headers.js';
import { MAX_CHILDREN } from './backend-links.js';

export const MAX_LABELS = 32;
export const MAX_LABEL_KEY_BYTES = 128;
export const MAX_LABEL_VALUE_BYTES = 256;
export const MAX_RESPONSE_BODY_BYTES = 128 * 1024;

const BackendId = IdString('bkd…', 'backend');
const Labels = Type.Record(Type.String({ maxLength: 1024 }), Type.String({ maxLength: 4096 }), {
  description: `label → value; at most ${MAX_LABELS} labels, keys 1–${MAX_LABEL_KEY_BYTES} bytes without '=', values up to ${MAX_LABEL_VALUE_BYTES} bytes`,
});
const Headers = Type.Record(Type.String({ maxLength: 1024 }), Type.String({ maxLength: 8192 }), {
  description: `header name → value; at most ${MAX_HEADERS}; names are returned lower-cased`,
});
const ResponseBody = Type.String({ maxLength: MAX_RESPONSE_BODY_BYTES, description: `at most ${MAX_RESPONSE_BODY_BYTES} bytes` });
const StatusCode = Type.Integer({ description: 'HTTP status, 100 to 599 (default 200)' });
const Address = BoundedString(300, { description: 'host:port, port 1 to 65535; IPv6 hosts in brackets' });
const Tls = Type.Object({ enabled: Type.Optional(Type.Boolean({ description: 'default false' })) }, { additionalProperties: false });
const FailoverChildren = Type.Array(BackendId, { description: `ordered backend ids, tried in order; at most ${MAX_CHILDREN}` });
const WeightedChildren = Type.Record(Type.String({ maxLength: 64 }), Type.Integer({ description: 'weight, 0 to 10000' }), {
  description: `backend id → weight (0 to 10000); at most ${MAX_CHILDREN}`,
});

export const TunnelGroupBackend = Type.Object(
  { ...DescribedFields('bkdtg'), labels: Type.Record(Type.String(), Type.String()), tunnels: Type.Array(Ref) },
  { description: 'tunnel-group backend' },
);
export const TunnelGroupBackendCreate = Body({ ...DescribedCreate, labels: Type.Optional(Labels) });
export const TunnelGroupBackendUpdate = Body({ ...DescribedPatch, labels: Patch(Labels) });

export const HttpResponseBackend = Type.Object(
  { ...DescribedFields('bkdhr'), body: Type.String(), headers: Type.Record(Type.String(), Type.String()), status_code: Type.Integer() },
  { description: 'HTTP-response backend' },
);
export const HttpResponseBackendCreate = Body({
  ...DescribedCreate,
  body: Type.Optional(ResponseBody),
  headers: Type.Optional(Headers),
  status_code: Type.Optional(StatusCode),
});
export const HttpResponseBackendUpdate = Body({ ...DescribedPatch, body: Patch(ResponseBody), headers: Patch(Headers), status_code: Patch(StatusCode) });

export const StaticBackend = Type.Object(
  { ...DescribedFields('bkdsc'), address: Type.String(), tls: Type.Object({ enabled: Type.Boolean() }) },
  { description: 'static-address backend' },
);
export const StaticBackendCreate = Body({ ...DescribedCreate, address: Address, tls: Type.Optional(Tls) });
export const StaticBackendUpdate = Body({ ...DescribedPatch, address: Patch(Address), tls: Patch(Tls) });

export const FailoverBackend = Type.Object({ ...DescribedFields('bkdfo'), backends: Type.Array(Type.String()) }, { description: 'failover backend' });
export const FailoverBackendCreate = Body({ ...DescribedCreate, backends: Type.Optional(FailoverChildren) });
export const FailoverBackendUpdate = Body({ ...DescribedPatch, backends: Patch(FailoverChildren) });

export const WeightedBackend = Type.Object(
  { ...DescribedFields('bkdwd'), backends: Type.Record(Type.String(), Type.Integer()) },
  { description: 'weighted backend' },
);
export const WeightedBackendCreate = Body({ ...DescribedCreate, backends: Type.Optional(WeightedChildren) });
export const WeightedBackendUpdate = Body({ ...DescribedPatch, backends: Patch(WeightedChildren) });
