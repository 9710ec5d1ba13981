// The error shape of the API (ApiError), the helpers every catalogue of errors is built with
// (entry, throwersOf and the list helpers of messages), and the catalogue of the errors that are
// no one kind's: the protocol, fields and queries, resources and modules of any kind, routing,
// authentication and authorization, and the server. The errors of a kind live beside the code
// that throws them, in its `<name>.errors.ts`; src/error-catalogue.ts gathers every catalogue,
// and docs/errors.md is generated from it (`npm run docs:errors`).

import { withArticle } from './english.js';

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
    readonly details: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  get errorCode(): string {
    return `ERR_EP_${this.code}`;
  }
}

/** One error of a catalogue: its stable code, its HTTP status, what it means, and its message and headers from the arguments A. */
export interface Entry<A> {
  code: number;
  status: number;
  meaning: string;
  message: (args: A) => string;
  headers?: (args: A) => Record<string, string>;
}

export function entry<A = void>(
  code: number,
  status: number,
  meaning: string,
  message: (args: A) => string,
  headers?: (args: A) => Record<string, string>,
): Entry<A> {
  return { code, status, meaning, message, headers };
}

/**
 * A catalogue: errors by name. `Entry<never>` accepts an entry of any arguments, as a function
 * that takes some arguments can stand where one that is never called is expected.
 */
export type Catalogue = Readonly<Record<string, Entry<never>>>;

type ArgsOf<E> = E extends Entry<infer A> ? A : never;

/** The error factories of a catalogue, one per entry, taking that entry's arguments (none for `Entry<void>`). */
export type Throwers<C extends Catalogue> = { [K in keyof C]: ArgsOf<C[K]> extends void ? () => ApiError : (args: ArgsOf<C[K]>) => ApiError };

/** The error factories of a catalogue: `throw errors.notFound({ title, id })`. */
export function throwersOf<C extends Catalogue>(catalogue: C): Throwers<C> {
  return Object.fromEntries(
    Object.entries(catalogue).map(([name, e]) => {
      // The entry's own argument type is erased by Object.entries; each factory is typed by Throwers<C>.
      const message = e.message as (args: unknown) => string;
      const headers = e.headers as ((args: unknown) => Record<string, string>) | undefined;
      return [name, (args: unknown) => new ApiError(e.code, e.status, message(args), headers ? headers(args) : {})];
    }),
  ) as Throwers<C>;
}

/** Values as a comma-separated list. */
export const commaList = (values: readonly string[]) => values.join(', ');
/** At most ten values, then how many more. */
export const shortList = (values: readonly string[]) =>
  values.length <= 10 ? commaList(values) : `${commaList(values.slice(0, 10))} and ${values.length - 10} more`;
const bearer = () => ({ 'WWW-Authenticate': 'Bearer realm="edgeplane"' });

export const coreCatalogue = {
  // Protocol
  unsupportedVersion: entry<{ header: string; value: string }>(
    217,
    400,
    'The version header names a version this server does not support.',
    (a) => `API version '${a.value}' in the ${a.header} header is invalid or unsupported. Supported versions: 2.`,
  ),
  missingVersion: entry(
    218,
    400,
    'The request has no version header.',
    () =>
      'Your request has not specified an API version. Please include the version you wish to use in the Service-Version header (Ngrok-Version is accepted too). Supported versions: 2.',
  ),
  unsupportedContentType: entry<{ contentType: string }>(
    210,
    415,
    'The request body is not sent as application/json.',
    (a) => `Content-Type '${a.contentType}' is not supported; send the body as application/json.`,
  ),
  missingContentType: entry(
    216,
    415,
    'The request has a body but no Content-Type header.',
    () => 'The request has a body but no Content-Type header; send Content-Type: application/json.',
  ),
  bodyNotAllowed: entry<{ method: string }>(
    211,
    400,
    'A GET or DELETE request carries a body.',
    (a) => `A ${a.method} request takes no body; send it without one.`,
  ),
  invalidUtf8: entry(212, 400, 'The request body is not valid UTF-8.', () => 'The request body is not valid UTF-8 text.'),
  malformedJson: entry<{ reason: string }>(
    213,
    400,
    'The request body is not valid JSON.',
    (a) => `The application/json request body could not be parsed: ${a.reason}.`,
  ),
  nulCharacter: entry<{ field: string }>(
    237,
    400,
    'A string in the request body contains the NUL character, which no field accepts.',
    (a) => `'${a.field}' contains the NUL character (\\u0000), which no field accepts.`,
  ),
  bodyTooDeep: entry<{ max: number }>(
    270,
    400,
    'The request body nests arrays and objects more than 64 levels deep (the body itself is level 1).',
    (a) => `The request body nests arrays and objects more than ${a.max} levels deep; at most ${a.max} levels are accepted, the body itself being the first.`,
  ),
  idempotencyKeyInvalid: entry(
    271,
    400,
    'The Idempotency-Key header must be 1 to 255 printable ASCII characters.',
    () => 'The Idempotency-Key header must be 1 to 255 printable ASCII characters (a UUID is a good choice).',
  ),
  idempotencyKeyReused: entry<{ key: string }>(
    272,
    409,
    'The Idempotency-Key was sent before with another request (method, path or body) within 24 hours.',
    (a) => `The Idempotency-Key '${a.key}' was used for another request within the last 24 hours; use a new key for a new request.`,
  ),
  idempotencyKeyInProgress: entry<{ key: string }>(
    273,
    409,
    'A request with the same Idempotency-Key is still being answered; retry it after Retry-After seconds to get its answer.',
    (a) => `A request with the Idempotency-Key '${a.key}' is still being answered; retry shortly to get its answer.`,
    () => ({ 'Retry-After': '1' }),
  ),
  idempotencyKeyCarriedOut: entry<{ key: string; resourceId: string }>(
    274,
    409,
    'The request sent first with this Idempotency-Key was carried out, but its answer was lost (the connection to the database broke as the change was committed); it is not carried out again. Get the resource named to see it.',
    (a) =>
      `The request sent first with the Idempotency-Key '${a.key}' was carried out (it acted on ${a.resourceId}), but its answer was lost; it is not carried out again. Get ${a.resourceId} to see the result.`,
  ),
  bodyTooLarge: entry<{ limit: number }>(
    219,
    413,
    'The request body is larger than the server accepts (1 MiB).',
    (a) => `The request body is larger than ${a.limit} bytes.`,
  ),
  malformedRequest: entry<{ reason: string }>(
    230,
    400,
    'The request could not be read (bad framing, query string or header).',
    (a) => `The request could not be read: ${a.reason}.`,
  ),
  requestTimeout: entry<{ seconds: number; part: 'headers' | 'request' }>(
    265,
    408,
    'The client did not send its request headers or body within the time the server waits; the connection is closed.',
    (a) => `The server closed the connection: the request ${a.part === 'headers' ? 'headers were' : 'was'} not received in full within ${a.seconds} s.`,
  ),

  // Fields, queries and resources of any kind
  unknownField: entry<{ field: string; supported: readonly string[] }>(
    214,
    400,
    'The request body has a field the operation does not take.',
    (a) => `The request parameter '${a.field}' is unknown; supported fields are: ${commaList(a.supported)}.`,
  ),
  invalidField: entry<{ field: string; problem: string }>(
    215,
    400,
    'A field of the request body has a value of the wrong type or form.',
    (a) => `'${a.field}' ${a.problem}.`,
  ),
  descriptionTooLong: entry<{ max: number; bytes: number }>(
    101,
    400,
    'description is longer than its limit in UTF-8 bytes.',
    (a) => `description is limited to ${a.max} bytes; you sent ${a.bytes}.`,
  ),
  metadataTooLong: entry<{ max: number; bytes: number }>(
    100,
    400,
    'metadata is longer than its limit in UTF-8 bytes.',
    (a) => `metadata is limited to ${a.max} bytes; you sent ${a.bytes}.`,
  ),
  noUpdatableFields: entry<{ fields: readonly string[] }>(
    250,
    400,
    'An update names none of the fields that can be changed.',
    (a) => `The update failed because no values were provided; send at least one of: ${commaList(a.fields)}.`,
  ),
  fieldNotUpdatable: entry<{ field: string; title: string }>(
    251,
    400,
    'An update names a field that is fixed when the resource is created.',
    (a) => `'${a.field}' of ${withArticle(a.title)} cannot be changed after creation; create a new one instead.`,
  ),
  unknownQueryParameter: entry<{ name: string; supported: readonly string[] }>(
    231,
    400,
    'The query string has a parameter the operation does not take.',
    (a) => `The query parameter '${a.name}' is unknown; supported parameters are: ${a.supported.length ? commaList(a.supported) : 'none'}.`,
  ),
  repeatedQueryParameter: entry<{ name: string }>(
    232,
    400,
    'A query parameter is given more than once.',
    (a) => `The query parameter '${a.name}' is given more than once; give it once.`,
  ),
  invalidLimit: entry<{ value: string }>(
    233,
    400,
    'limit is not a whole number from 1 to 100.',
    (a) => `page size limit must be a whole number between 1 and 100, in decimal digits; got '${a.value}'.`,
  ),
  invalidBeforeId: entry<{ value: string; prefix: string; parameter: 'before_id' | 'beforeId' }>(
    234,
    400,
    'before_id is not an identifier of the listed kind.',
    (a) => `${a.parameter} '${a.value}' is not a valid identifier here; expected an ID with a prefix of '${a.prefix}_'.`,
  ),
  beforeIdTwice: entry(
    238,
    400,
    'before_id and beforeId are both given.',
    () => 'before_id and beforeId are the same parameter (beforeId is accepted for the official TypeScript client); give only one.',
  ),
  idMismatch: entry<{ sent: string; path: string }>(
    255,
    400,
    'The id in the body of an update is not the id in the path.',
    (a) => `The body names id '${a.sent.slice(0, 80)}' but the path names '${a.path}'; send the id of the resource you update, or leave it out.`,
  ),
  moduleIdMismatch: entry<{ field: string; sent: string; path: string }>(
    256,
    400,
    'An id in the body (of a module wrapper, or the parent id of a route) is not the one in the path.',
    (a) => `The body's ${a.field} '${a.sent.slice(0, 80)}' is not the ${a.field} in the path ('${a.path}'); send the module for the resource in the path.`,
  ),
  conflict: entry<{ title: string; reason: string }>(
    257,
    409,
    'The change conflicts with data stored at the same time; nothing was written.',
    (a) => `The ${a.title} was not written because ${a.reason}; nothing was changed. Check the request and retry.`,
  ),
  resourceInUse: entry<{ title: string; id: string; referrers: readonly string[] }>(
    258,
    409,
    'The resource is still used by other resources and cannot be deleted.',
    (a) => `${a.title} ${a.id} is still used by ${shortList(a.referrers)}; remove it from there first.`,
  ),
  invalidRegion: entry<{ value: string; regions: readonly string[] }>(
    400,
    400,
    'region is not one of the regions this service runs.',
    (a) => `region '${a.value}' is not supported; the regions are ${commaList(a.regions)}.`,
  ),

  // Modules of any resource (src/crud/module-operations.ts)
  moduleNotSet: entry<{ module: string; owner: string }>(
    7200,
    404,
    'The module is not set on the resource.',
    (a) => `${a.owner} has no ${a.module} module; set one with PUT.`,
  ),
  moduleExclusive: entry<{ module: string; other: string; owner: string }>(
    7201,
    409,
    'The module cannot be set while another module that excludes it is set.',
    (a) =>
      `${a.owner} has ${withArticle(a.other)} module; the ${a.module} module and the ${a.other} module exclude each other, so delete the ${a.other} module first.`,
  ),
  moduleExclusiveInRequest: entry<{ module: string; other: string }>(
    7202,
    400,
    'A request sets two modules that exclude each other.',
    (a) => `the ${a.module} and ${a.other} modules exclude each other; send one of them.`,
  ),

  // Routing
  invalidPathId: entry<{ value: string; title: string; prefix: string }>(
    222,
    404,
    'The id in the path is not a valid identifier of that kind of resource.',
    (a) =>
      `The ${a.title} resource identified by '${a.value}' could not be found because the identifier is not a valid identifier; expected an ID with a prefix of '${a.prefix}_'.`,
  ),
  notFound: entry<{ title: string; id: string }>(
    252,
    404,
    'No resource with that id exists in this account.',
    (a) => `The ${a.title} resource identified by '${a.id}' could not be found.`,
  ),
  routeNotFound: entry<{ method: string; path: string }>(
    253,
    404,
    'No operation exists at that path.',
    (a) => `No operation exists at ${a.path}; see /openapi.json for the operations this API has.`,
  ),
  methodNotAllowed: entry<{ method: string; path: string; allow: readonly string[] }>(
    254,
    405,
    'The path exists but does not take that method.',
    (a) => `${a.path} does not take ${a.method}; allowed methods: ${commaList(a.allow)}.`,
    (a) => ({ Allow: a.allow.join(', ') }),
  ),

  // Authentication and authorization
  missingAuthorization: entry(
    200,
    401,
    'The request has no Authorization header.',
    () => 'The API requires an Authorization header: Authorization: Bearer <API key token>.',
    bearer,
  ),
  unsupportedAuthScheme: entry<{ scheme: string }>(
    201,
    401,
    'The Authorization header is not of the form "Bearer <token>".',
    (a) => `The Authorization header must be of the form 'Bearer <API key token>'; got the scheme '${a.scheme}'.`,
    bearer,
  ),
  malformedToken: entry(
    202,
    401,
    'The bearer token does not look like an API key token.',
    () => 'The bearer token does not look like a valid API key token; a token has the form <key id without ak_>_<secret>.',
    bearer,
  ),
  invalidToken: entry(
    203,
    401,
    'The bearer token is well formed but unknown, deleted or revoked.',
    () => 'The API key token is properly formed, but it is invalid: the key does not exist or was deleted.',
    bearer,
  ),
  tokenIsKeyId: entry(
    208,
    401,
    'The bearer token is an API key id, not its token.',
    () => 'The bearer token is an API key id (ak_…); send the token returned when the key was created instead.',
    bearer,
  ),
  readOnlyOwner: entry<{ role: string }>(
    635,
    403,
    "The key's owner has a read-only role and the request is not a read.",
    (a) => `The owner of this API key has the role '${a.role}', which may only read (GET); ask an admin for a developer or admin role.`,
  ),
  inactiveBot: entry<{ botId: string }>(
    636,
    403,
    'The key belongs to a bot user that is not active.',
    (a) => `The API key belongs to bot user ${a.botId}, which is not active; an admin can set it active again.`,
  ),
  ownerNotAllowed: entry(
    630,
    403,
    'Only admins may create an API key owned by another user or bot.',
    () => 'Only admins may create an API key owned by another user or bot; omit owner_id to own the key yourself.',
  ),
  notKeyOwner: entry<{ id: string }>(
    638,
    403,
    'Only admins may change or delete an API key owned by another user or bot.',
    (a) => `API key ${a.id} is owned by another user or bot; only its owner or an admin may change or delete it.`,
  ),
  ownerNotInAccount: entry<{ ownerId: string }>(
    637,
    400,
    'owner_id names no user or bot user of this account.',
    (a) => `owner_id '${a.ownerId}' is not a user (usr_) or bot user (bot_) of this account.`,
  ),
  adminRequired: entry<{ action: string }>(4111, 403, 'The operation is reserved to admins.', (a) => `Only admins may ${a.action}.`),
  ipRestricted: entry<{ ip: string; restrictionId: string }>(
    220,
    403,
    "The caller's address is not allowed by the account's enforced api IP restriction.",
    (a) =>
      `Your IP address ${a.ip} is not allowed to use the API of this account by IP restriction ${a.restrictionId}. An admin can change the restriction's policies from an allowed address, or an operator with the CLI.`,
  ),

  // Server
  rateLimited: entry<{ limit: number; retryAfter: number }>(
    269,
    429,
    "The account sent more requests within a minute than the operator's rate limit allows; retry after the seconds that Retry-After gives.",
    (a) => `This account may send ${a.limit} requests a minute, and has sent them; retry in ${a.retryAfter} s.`,
    (a) => ({ 'Retry-After': String(a.retryAfter) }),
  ),
  storeUnavailable: entry(
    260,
    503,
    'The database cannot be reached; retry later.',
    () => 'The service cannot reach its database right now; retry in a few seconds.',
    () => ({ 'Retry-After': '2' }),
  ),
  storeConnectionLost: entry(
    262,
    503,
    'The connection to the database was lost, or the database is restarting or shutting down; retry later.',
    () => 'The service lost its connection to the database, which may be restarting; retry in a few seconds.',
    () => ({ 'Retry-After': '2' }),
  ),
  storeTimeout: entry(
    263,
    503,
    'The database did not answer in time: a statement, a lock or a free connection took longer than the configured limit; retry later.',
    () => 'The database did not answer in time (it is busy, or the data is locked by another change); retry in a few seconds.',
    () => ({ 'Retry-After': '2' }),
  ),
  storeMissing: entry(
    264,
    503,
    'The database or its tables do not exist (not created or not migrated yet); retry later.',
    () => "The service's database or its tables do not exist yet; the operator has to create the database and run `edgeplane migrate`. Retry later.",
    () => ({ 'Retry-After': '5' }),
  ),
  concurrentChanges: entry<{ tries: number }>(
    268,
    503,
    'The change collided with concurrent changes to the same resources each time it was tried; retry it.',
    (a) => `The change collided with concurrent changes to the same resources ${a.tries} times and was not made; retry it.`,
    () => ({ 'Retry-After': '1' }),
  ),
  internal: entry(
    261,
    500,
    'An unexpected server fault; the operation id identifies it in the logs.',
    () => 'An unexpected error happened on the server; report the operation id to the operator.',
  ),
} as const;

/** Error factories: `throw errors.notFound({ title, id })`. */
export const errors = throwersOf(coreCatalogue);
