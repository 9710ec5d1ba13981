// Shared schema atoms. A TypeBox schema is at once the validator, the TypeScript type, the
// response serializer (a whitelist) and the OpenAPI document.
import { Type, type Static, type TSchema, type TObject, type TProperties } from '@sinclair/typebox';

/** UTF-8 byte limit checked by the `x-max-bytes` validator keyword (maxLength counts characters). */
export function BoundedString(maxBytes: number, options: Record<string, unknown> = {}) {
  return Type.String({ maxLength: maxBytes, 'x-max-bytes': maxBytes, ...options });
}

export const DESCRIPTION_MAX_BYTES = 255;
export const METADATA_MAX_BYTES = 4096;
export const ID_MAX_LENGTH = 64;

export const Description = BoundedString(DESCRIPTION_MAX_BYTES, { description: 'free text; at most 255 UTF-8 bytes' });
export const Metadata = BoundedString(METADATA_MAX_BYTES, { description: 'user-defined data; at most 4096 UTF-8 bytes' });
export const IdString = (prefix: string, what: string) => Type.String({ maxLength: ID_MAX_LENGTH, description: `${what} id (${prefix}_…)` });

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
/**
 * A response field of one primitive type that may be null, as a type array rather than a union:
 * the response serializer checks each branch of a union with a validator on every value, which
 * on a list page cost more than writing it.
 */
export const OrNull = <T extends TSchema & { type: string }>(schema: T) => Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type, 'null'] });
/** A PATCH field: absent or null leaves the stored value unchanged. */
export const Patch = <T extends TSchema>(schema: T) => Type.Optional(Nullable(schema));

export const Timestamp = Type.String({ format: 'date-time', description: 'RFC 3339' });
export const Uri = Type.String({ description: 'absolute address' });

export const Ref = Type.Object({ id: Type.String(), uri: Uri }, { additionalProperties: false, description: 'reference to a resource' });
export type Ref = Static<typeof Ref>;

/** A request body object: unknown fields are refused. */
export const Body = <P extends TProperties>(properties: P, options: Record<string, unknown> = {}) =>
  Type.Object(properties, { additionalProperties: false, ...options });

export const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'page size, 1 to 100 (default 100)' })),
    before_id: Type.Optional(Type.String({ maxLength: ID_MAX_LENGTH, description: 'a position: return items older than this id, which need not still exist' })),
    beforeId: Type.Optional(
      Type.String({ maxLength: ID_MAX_LENGTH, description: 'the same as before_id (the official TypeScript client sends it); give only one' }),
    ),
  },
  { additionalProperties: false },
);

/**
 * A body schema marked with this keyword documents the body but is not checked by the route's
 * validator: the handler checks it (a module PUT, which also takes a wrapped form).
 */
export const VALIDATED_BY_HANDLER = 'x-validated-by-handler';

/** Operations that take no query parameters still refuse unknown ones. */
export const NoQuery = Type.Object({}, { additionalProperties: false });

export const IdParams = Type.Object({ id: Type.String({ maxLength: 200 }) });

export function ListEnvelope(listKey: string, item: TObject) {
  return Type.Object({
    [listKey]: Type.Array(item),
    uri: Uri,
    next_page_uri: OrNull(Uri),
  });
}

/** The error body, shared by every operation as one named schema (`$ref: 'ErrorBody#'`). */
export const ErrorBody = Type.Object(
  {
    error_code: Type.String({ description: 'stable code, ERR_EP_<n>; see docs/errors.md' }),
    status_code: Type.Integer(),
    msg: Type.String(),
    details: Type.Object({ operation_id: Type.String() }, { additionalProperties: Type.String() }),
  },
  { $id: 'ErrorBody', description: 'error body' },
);
const ErrorBodyRef = Type.Unsafe<Static<typeof ErrorBody>>({ $ref: 'ErrorBody#' });

export const EmptyBody = Type.Null({ description: 'no body' });

export const ERROR_STATUSES = [400, 401, 403, 404, 405, 408, 409, 413, 415, 429, 500, 503] as const;
export type ErrorStatus = (typeof ERROR_STATUSES)[number];

/** The methods of the authenticated operations. */
export type OperationMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

const seconds = (description: string) => ({ type: 'integer', minimum: 1, description });

/** The headers an error response of a status always carries, as the OpenAPI document shows them. */
const ERROR_HEADERS: Partial<Record<ErrorStatus, Record<string, object>>> = {
  401: { 'WWW-Authenticate': { type: 'string', description: 'Bearer realm="edgeplane"' } },
  429: {
    'Retry-After': seconds('seconds until the account may send requests again'),
    'RateLimit-Limit': { type: 'integer', description: 'requests the account may send a minute' },
    'RateLimit-Remaining': { type: 'integer', description: 'requests it may still send this minute (0)' },
    'RateLimit-Reset': seconds('seconds until its count starts again'),
    'RateLimit-Policy': { type: 'string', description: 'the limit and its window, as `1200;w=60`' },
  },
  503: { 'Retry-After': seconds('seconds to wait before retrying') },
};

const ERROR_DESCRIPTIONS: Partial<Record<ErrorStatus, string>> = {
  408: 'error body: the request body did not arrive in time',
  429: "error body: too many requests (the account's rate limit, ERR_EP_269); retry after Retry-After seconds",
};

/**
 * The error responses an authenticated operation can give: those every one can (below), those
 * its method brings, and its own (`extra`: 404 where the path or body names a resource, 409...).
 *
 * Every authenticated operation: 400 (the version header, the query string, the body), 401 (the
 * credentials), 403 (the account's api IP restriction, the caller's role), 429 (the rate limit,
 * src/http/rate-limit.ts), 500, and 503 (the store). A body: a GET refuses one unread (400), so
 * never answers 408, 413 or 415; a DELETE reads it to refuse it (408, 413); a POST, PUT or PATCH
 * reads JSON (408, 413, 415). 405 is no operation's answer: it is a path's, for a method it lacks.
 */
export function errorResponses(method: OperationMethod, ...extra: ErrorStatus[]): Record<number, TSchema> {
  const byBody: ErrorStatus[] = method === 'GET' ? [] : method === 'DELETE' ? [408, 413] : [408, 413, 415];
  const statuses = new Set<ErrorStatus>([400, 401, 403, 429, 500, 503, ...byBody, ...extra]);
  return Object.fromEntries(
    [...statuses]
      .sort((a, b) => a - b)
      .map((status) => {
        const headers = ERROR_HEADERS[status];
        const description = ERROR_DESCRIPTIONS[status];
        if (!headers && !description) return [status, ErrorBodyRef];
        // `headers` and `description` are read by the OpenAPI generator only; the serializer follows the $ref.
        return [status, Type.Unsafe<Static<typeof ErrorBody>>({ $ref: 'ErrorBody#', ...(description && { description }), ...(headers && { headers }) })];
      }),
  );
}

/** A string limited to listed values: one `enum` keyword, so a bad value gets one clear error. */
export function StringEnum<const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** Response fields every resource with a description has. */
export function DescribedFields(prefix: string) {
  return {
    id: Type.String({ description: `${prefix}_…` }),
    uri: Uri,
    created_at: Timestamp,
    description: Type.String(),
    metadata: Type.String(),
  };
}

/** Create fields every resource with a description takes. */
export const DescribedCreate = { description: Type.Optional(Description), metadata: Type.Optional(Metadata) };
/** PATCH fields every resource with a description takes. */
export const DescribedPatch = { description: Patch(Description), metadata: Patch(Metadata) };

/** The stored description and metadata of a new resource: absent means "". */
export function describedColumns(body: { description?: string; metadata?: string }): { description: string; metadata: string } {
  return { description: body.description ?? '', metadata: body.metadata ?? '' };
}

/** The description and metadata changes of a PATCH body: absent or null leaves them. */
export function describedChanges(body: { description?: string | null; metadata?: string | null }): { description?: string; metadata?: string } {
  return { ...(body.description != null && { description: body.description }), ...(body.metadata != null && { metadata: body.metadata }) };
}

/** The response fields every resource with a description starts with, from its row (`uri` is added by the core). */
export function describedResponse(row: { id: string; created_at: string; description: string; metadata: string }) {
  return { id: row.id, created_at: row.created_at, description: row.description, metadata: row.metadata };
}
