// The error catalogue: every distinct failure the API can answer with, its stable code, its
// HTTP status and a message built from what went wrong. `docs/errors.md` lists the same
// entries; test/contract/errors-doc.test.ts keeps the two equal.

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

interface Entry<A> {
  code: number;
  status: number;
  meaning: string;
  message: (args: A) => string;
  headers?: (args: A) => Record<string, string>;
}

function entry<A = void>(code: number, status: number, meaning: string, message: (args: A) => string, headers?: (args: A) => Record<string, string>): Entry<A> {
  return { code, status, meaning, message, headers };
}

const list = (values: readonly string[]) => values.join(', ');
/** At most ten values, then how many more. */
const shortList = (values: readonly string[]) => (values.length <= 10 ? list(values) : `${list(values.slice(0, 10))} and ${values.length - 10} more`);
const bearer = () => ({ 'WWW-Authenticate': 'Bearer realm="edgeplane"' });

export const catalogue = {
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
  unknownField: entry<{ field: string; supported: readonly string[] }>(
    214,
    400,
    'The request body has a field the operation does not take.',
    (a) => `The request parameter '${a.field}' is unknown; supported fields are: ${list(a.supported)}.`,
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
    (a) => `The update failed because no values were provided; send at least one of: ${list(a.fields)}.`,
  ),
  fieldNotUpdatable: entry<{ field: string; title: string }>(
    251,
    400,
    'An update names a field that is fixed when the resource is created.',
    (a) => `'${a.field}' of a ${a.title} cannot be changed after creation; create a new one instead.`,
  ),
  unknownQueryParameter: entry<{ name: string; supported: readonly string[] }>(
    231,
    400,
    'The query string has a parameter the operation does not take.',
    (a) => `The query parameter '${a.name}' is unknown; supported parameters are: ${a.supported.length ? list(a.supported) : 'none'}.`,
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
    (a) => `${a.path} does not take ${a.method}; allowed methods: ${list(a.allow)}.`,
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

  // Credentials (agent authtokens)
  invalidAclRule: entry<{ index: number; rule: string }>(
    600,
    400,
    "An ACL rule is neither '*' nor 'bind:' followed by a domain, a wildcard domain or a label.",
    (a) =>
      `acl[${a.index}] '${a.rule}' is not an ACL rule: a rule is '*', or 'bind:' followed by a domain (app.example.com), a wildcard domain (*.example.com), a label (key=value) or '*'.`,
  ),
  invalidAclDomain: entry<{ index: number; rule: string; problem: string }>(
    601,
    400,
    "The domain of an ACL rule 'bind:<domain>' is not a valid DNS name.",
    (a) => `acl[${a.index}] '${a.rule}' names no valid domain: ${a.problem}.`,
  ),
  invalidAclLabel: entry<{ index: number; rule: string; problem: string }>(
    602,
    400,
    "The label of an ACL rule 'bind:<key>=<value>' is not a valid label.",
    (a) => `acl[${a.index}] '${a.rule}' names no valid label: ${a.problem}.`,
  ),
  tooManyAclRules: entry<{ count: number; max: number }>(
    603,
    400,
    'A credential has more ACL rules than allowed.',
    (a) => `acl has ${a.count} rules; a credential has at most ${a.max}.`,
  ),
  credentialOwnerNotAllowed: entry(
    604,
    403,
    'Only admins may create a credential owned by another user or bot.',
    () => 'Only admins may create a credential owned by another user or bot; omit owner_id to own the credential yourself.',
  ),
  notCredentialOwner: entry<{ id: string }>(
    607,
    403,
    'Only admins may change or delete a credential owned by another user or bot.',
    (a) => `Credential ${a.id} is owned by another user or bot; only its owner or an admin may change or delete it.`,
  ),

  // Bot users
  botNameTaken: entry<{ name: string }>(
    4112,
    409,
    'Another bot user of the account already has that name.',
    (a) => `A bot user named '${a.name}' already exists in this account; choose another name.`,
  ),

  // IP policies, rules and restrictions
  ipRestricted: entry<{ ip: string; restrictionId: string }>(
    220,
    403,
    "The caller's address is not allowed by the account's enforced api IP restriction.",
    (a) =>
      `Your IP address ${a.ip} is not allowed to use the API of this account by IP restriction ${a.restrictionId}. An admin can change the restriction's policies from an allowed address, or an operator with the CLI.`,
  ),
  ipPolicyNotFound: entry<{ field: string; id: string }>(
    1402,
    400,
    'A referenced IP policy does not exist in this account.',
    (a) => `${a.field} '${a.id}' is not an IP policy (ipp_…) of this account.`,
  ),
  invalidCidr: entry<{ cidr: string }>(
    1406,
    400,
    'cidr is not an IPv4 or IPv6 network in CIDR notation.',
    (a) => `cidr '${a.cidr}' is not a valid IPv4 or IPv6 CIDR such as 10.0.0.0/8 or 2001:db8::/32.`,
  ),
  cidrNotNetwork: entry<{ cidr: string; suggestion: string }>(
    1409,
    400,
    "cidr names a host inside the network instead of the network's first address.",
    (a) => `cidr '${a.cidr}' must be given as the lowest address of its range; did you mean '${a.suggestion}'?`,
  ),
  cidrMissingMask: entry<{ cidr: string }>(
    1413,
    400,
    'cidr has no prefix length (mask).',
    (a) => `cidr '${a.cidr}' has no mask; add one, e.g. '${a.cidr}/${a.cidr.includes(':') ? 128 : 32}' for this address alone.`,
  ),
  duplicateRule: entry<{ cidr: string; policyId: string }>(
    1408,
    409,
    'The IP policy already has a rule for that CIDR.',
    (a) => `IP policy ${a.policyId} already has a rule for ${a.cidr}; change that rule instead.`,
  ),
  ipPolicyInUse: entry<{ id: string; referrers: readonly string[] }>(
    1420,
    409,
    'The IP policy is still used by an IP restriction or an edge module and cannot be deleted.',
    (a) => `IP policy ${a.id} is still used by ${shortList(a.referrers)}; remove it from there first.`,
  ),
  restrictionTypeTaken: entry<{ type: string; id?: string }>(
    1802,
    409,
    'The account already has an IP restriction of that type.',
    (a) => `The account already has an IP restriction of type '${a.type}'${a.id ? ` (${a.id})` : ''}; update that one instead.`,
  ),

  // Backends
  backendNotFound: entry<{ field: string; id: string }>(
    6501,
    400,
    'A referenced backend does not exist in this account.',
    (a) => `${a.field} names '${a.id}', which is not a backend (bkdtg_, bkdhr_, bkdsc_, bkdfo_ or bkdwd_) of this account.`,
  ),
  backendInUse: entry<{ id: string; referrers: readonly string[] }>(
    6502,
    409,
    'The backend is still used by another backend or an edge and cannot be deleted.',
    (a) => `Backend ${a.id} is still used by ${shortList(a.referrers)}; remove it from there first.`,
  ),
  invalidAddress: entry<{ address: string; reason: string }>(
    6505,
    400,
    'address is not host:port with a port from 1 to 65535.',
    (a) => `address '${a.address}' ${a.reason}; give it as host:port, e.g. 'app.internal:8080' or '[2001:db8::1]:443'.`,
  ),
  tooManyLabels: entry<{ count: number; max: number }>(
    6508,
    400,
    'A tunnel-group backend has more labels than allowed.',
    (a) => `labels has ${a.count} entries; at most ${a.max} are allowed.`,
  ),
  invalidLabelKey: entry<{ key: string; max: number }>(
    6509,
    400,
    'A label key is empty or longer than allowed.',
    (a) => `label key '${a.key}' must be 1 to ${a.max} bytes long.`,
  ),
  labelValueTooLong: entry<{ key: string; max: number }>(
    6510,
    400,
    'A label value is longer than allowed.',
    (a) => `the value of label '${a.key}' is longer than ${a.max} bytes.`,
  ),
  labelKeyEquals: entry<{ key: string }>(6531, 400, 'A label key contains "=".', (a) => `label key '${a.key}' must not contain '='.`),
  tooManyChildren: entry<{ count: number; max: number }>(
    6511,
    400,
    'A failover or weighted backend names more child backends than allowed.',
    (a) => `backends names ${a.count} backends; at most ${a.max} are allowed.`,
  ),
  weightOutOfRange: entry<{ backendId: string; weight: number; min: number; max: number }>(
    6512,
    400,
    'A weight of a weighted backend is outside 0 to 10000.',
    (a) => `weight ${a.weight} for ${a.backendId} is out of range; must be ${a.min} to ${a.max}.`,
  ),
  duplicateChild: entry<{ id: string }>(
    6515,
    400,
    'A failover backend names the same child twice.',
    (a) => `backends names ${a.id} more than once; name each backend once.`,
  ),
  responseBodyTooLarge: entry<{ bytes: number; max: number }>(
    6516,
    400,
    'The body of an HTTP-response backend is larger than allowed.',
    (a) => `body is ${a.bytes} bytes; at most ${a.max} are allowed.`,
  ),
  invalidStatusCode: entry<{ value: number }>(
    6517,
    400,
    'status_code is not an HTTP status from 100 to 599.',
    (a) => `status_code ${a.value} is not a valid HTTP status; must be 100 to 599.`,
  ),
  invalidHeaderName: entry<{ name: string }>(
    6518,
    400,
    'A header name is not a valid HTTP field name.',
    (a) => `header name '${a.name}' is not a valid HTTP header name (letters, digits and !#$%&'*+-.^_\`|~, no spaces).`,
  ),
  invalidHeaderValue: entry<{ name: string }>(
    6519,
    400,
    'A header value contains a line break or another control character.',
    (a) => `the value of header '${a.name}' must not contain line breaks or other control characters.`,
  ),
  duplicateHeader: entry<{ name: string }>(
    6520,
    400,
    'Two header names differ only in case.',
    (a) => `header '${a.name}' is given more than once (header names are case-insensitive).`,
  ),
  tooManyHeaders: entry<{ count: number; max: number }>(
    6521,
    400,
    'An HTTP-response backend has more headers than allowed.',
    (a) => `headers has ${a.count} entries; at most ${a.max} are allowed.`,
  ),
  backendCycle: entry<{ cycle: readonly string[] }>(
    6530,
    400,
    'The child backends would form a cycle.',
    (a) => `backends would form a cycle: ${a.cycle.join(' → ')}; a backend cannot contain itself, directly or through other backends.`,
  ),

  // SSH certificate authorities and certificates
  invalidTimestamp: entry<{ field: string; value: string }>(
    241,
    400,
    'A time is not an RFC 3339 timestamp.',
    (a) => `${a.field} '${a.value}' is not an RFC 3339 timestamp of a time that exists, such as 2026-11-21T10:00:00Z.`,
  ),
  invalidKeySize: entry<{ value: number }>(
    1939,
    400,
    'key_size of an RSA SSH CA is neither 2048 nor 4096.',
    (a) => `key_size ${a.value} is not supported; use 2048 or 4096 (default 4096).`,
  ),
  keySizeNotForType: entry<{ type: string }>(
    1940,
    400,
    'key_size is given for a CA whose key is not RSA.',
    (a) => `key_size applies to RSA keys only; leave it out for private_key_type '${a.type}'.`,
  ),
  curveNotForType: entry<{ type: string }>(
    1942,
    400,
    'elliptic_curve is given for a CA whose key is not ECDSA.',
    (a) => `elliptic_curve applies to ECDSA keys only; leave it out for private_key_type '${a.type}'.`,
  ),
  sshCaNotFound: entry<{ id: string }>(
    1949,
    400,
    'ssh_certificate_authority_id names no SSH CA of this account.',
    (a) => `ssh_certificate_authority_id '${a.id}' is not an SSH certificate authority (sshca_…) of this account.`,
  ),
  invalidPublicKey: entry<{ reason: string }>(1950, 400, 'public_key is not a supported OpenSSH public key.', (a) => `public_key ${a.reason}.`),
  sshCaKeysBusy: entry<{ max: number; retryAfter: number }>(
    1976,
    429,
    'The account is already making as many RSA keys for SSH certificate authorities as it may at once; retry after the seconds that Retry-After gives.',
    (a) =>
      `This account is already making ${a.max} RSA keys for SSH certificate authorities, as many as it may at once; retry in ${a.retryAfter} s (an Ed25519 or ECDSA CA is made at once).`,
    (a) => ({ 'Retry-After': String(a.retryAfter) }),
  ),
  invalidValidity: entry<{ validAfter: string; validUntil: string }>(
    1962,
    400,
    'valid_until is not after valid_after.',
    (a) => `valid_until ${a.validUntil} must be after valid_after ${a.validAfter}.`,
  ),
  sshCaInUse: entry<{ id: string; certificates: readonly string[] }>(
    1964,
    409,
    'The SSH CA has signed certificates that still exist.',
    (a) =>
      `SSH certificate authority ${a.id} has signed ${a.certificates.length} certificate(s) that still exist (${shortList(a.certificates)}); delete them first.`,
  ),
  unknownCriticalOption: entry<{ name: string }>(
    1965,
    400,
    'critical_options names an option other than force-command and source-address.',
    (a) => `critical option '${a.name}' is not supported; the defined ones are force-command and source-address.`,
  ),
  invalidSourceAddress: entry<{ value: string; entry: string }>(
    1967,
    400,
    'The source-address critical option is not a comma-separated list of addresses and CIDRs.',
    (a) => `source-address '${a.value}' has '${a.entry}', which is not an IP address or a CIDR in network form (e.g. 192.0.2.0/24).`,
  ),
  invalidOption: entry<{ kind: string; name: string; problem: string }>(
    1968,
    400,
    'A critical option or an extension has a name or value OpenSSH would not accept.',
    (a) => `${a.kind} '${a.name}' ${a.problem}.`,
  ),
  invalidPrincipal: entry<{ value: string; problem: string }>(
    1969,
    400,
    'A principal is not a valid user or host name.',
    (a) => `principal '${a.value}' ${a.problem}.`,
  ),

  // Domain names (reserved domains and agent ingresses)
  domainEmpty: entry<{ field: string }>(401, 400, 'The domain name is empty.', (a) => `${a.field} is empty; give a domain name such as app.example.com.`),
  domainCharacter: entry<{ value: string; character: string }>(
    406,
    400,
    'The domain name has a character other than letters, digits, hyphens and dots.',
    (a) => `domain '${a.value}' has the character '${a.character}'; a name may have letters, digits, hyphens and dots (and a leading '*.' for a wildcard).`,
  ),
  domainLabelStart: entry<{ value: string; label: string }>(
    407,
    400,
    'A label of the domain name starts with a hyphen.',
    (a) => `domain '${a.value}' has the label '${a.label}', which starts with a hyphen; each label must start with a letter or digit.`,
  ),
  domainLabelEnd: entry<{ value: string; label: string }>(
    408,
    400,
    'A label of the domain name ends with a hyphen.',
    (a) => `domain '${a.value}' has the label '${a.label}', which ends with a hyphen; each label must end with a letter or digit.`,
  ),
  domainEmptyLabel: entry<{ value: string }>(
    409,
    400,
    'The domain name has an empty label (two dots in a row, or a leading dot).',
    (a) => `domain '${a.value}' has an empty label (two dots in a row, or a leading dot).`,
  ),
  domainDoubleHyphen: entry<{ value: string; label: string }>(
    410,
    400,
    "A label has '--' in its third and fourth characters without being an IDNA A-label (xn--).",
    (a) => `domain '${a.value}' has the label '${a.label}' with '--' in its third and fourth characters, which only IDNA labels (xn--…) may have.`,
  ),
  domainNumericTld: entry<{ value: string; tld: string }>(
    411,
    400,
    'The last label of the domain name is all digits (an address, not a name).',
    (a) => `domain '${a.value}' ends in '${a.tld}', which is no top-level domain; give a domain name, not an IP address.`,
  ),
  domainPunycode: entry<{ value: string; label: string }>(
    429,
    400,
    'An xn-- label of the domain name is not valid Punycode.',
    (a) => `domain '${a.value}' has the label '${a.label}', which is not valid Punycode.`,
  ),
  domainLabelLength: entry<{ value: string; label: string; length: number }>(
    513,
    400,
    'A label of the domain name is longer than 63 characters (internationalized labels counted as A-labels).',
    (a) => `domain '${a.value}' has the label '${a.label}' of ${a.length} characters (as stored, xn-- form for international names); a label has at most 63.`,
  ),
  domainNameLength: entry<{ length: number }>(
    514,
    400,
    'The domain name is longer than 253 characters.',
    (a) => `the domain name has ${a.length} characters; a name has at most 253.`,
  ),
  domainSingleLabel: entry<{ value: string }>(
    448,
    400,
    'The domain name has one label only (a bare top-level domain).',
    (a) => `domain '${a.value}' is a bare top-level domain; give a fully qualified name such as app.${a.value}.`,
  ),
  wildcardPosition: entry<{ value: string }>(
    402,
    400,
    'A wildcard is anywhere but the first label.',
    (a) => `domain '${a.value}' has a '*' that is not the first label; only the first label of a reserved domain may be the wildcard '*'.`,
  ),
  wildcardNotAllowed: entry<{ value: string }>(
    6704,
    400,
    'An agent ingress domain is a wildcard; it must be one name.',
    (a) => `agent ingress domain '${a.value}' has a '*'; an agent ingress is one domain, not a wildcard (its regional names are made under it).`,
  ),
  wildcardLabel: entry<{ value: string; label: string }>(
    403,
    400,
    "The wildcard label is not exactly '*'.",
    (a) => `domain '${a.value}' has the label '${a.label}'; a wildcard label must be exactly '*'.`,
  ),
  wildcardSuffix: entry<{ value: string }>(
    416,
    400,
    'The wildcard covers a whole top-level domain.',
    (a) => `domain '${a.value}' would cover a whole top-level domain; a wildcard needs a base of two or more labels.`,
  ),
  domainReserved: entry<{ value: string }>(
    404,
    400,
    "The name is one of the service's own base domains or zones, which cannot be reserved.",
    (a) => `'${a.value}' is one of the service's own domains and cannot be reserved; reserve a name under it instead.`,
  ),
  domainTakenByYou: entry<{ value: string; id: string }>(
    413,
    409,
    'The domain is already reserved by this account.',
    (a) => `domain '${a.value}' is already reserved by your account (${a.id}).`,
  ),
  domainTakenByOther: entry<{ value: string }>(
    414,
    409,
    'The domain is reserved by another account.',
    (a) => `domain '${a.value}' is reserved by another account.`,
  ),
  wildcardConflict: entry<{ value: string }>(
    417,
    409,
    "The domain and another account's reservation overlap through a wildcard.",
    (a) =>
      `domain '${a.value}' overlaps a name reserved by another account: a wildcard covers every name under its base, so the two cannot belong to different accounts.`,
  ),
  invalidRegion: entry<{ value: string; regions: readonly string[] }>(
    400,
    400,
    'region is not one of the regions this service runs.',
    (a) => `region '${a.value}' is not supported; the regions are ${list(a.regions)}.`,
  ),
  certificateSourceTwice: entry(
    434,
    400,
    'certificate_id and certificate_management_policy are both given; a domain has one source of certificates.',
    () => 'certificate_id and certificate_management_policy are mutually exclusive; give one of them.',
  ),
  invalidAuthority: entry<{ value: string }>(
    1908,
    400,
    'certificate_management_policy.authority is not a supported certificate authority.',
    (a) => `certificate authority '${a.value}' is not supported; the only supported authority is letsencrypt.`,
  ),
  invalidCertKeyType: entry<{ value: string }>(
    1909,
    400,
    'certificate_management_policy.private_key_type is not rsa or ecdsa.',
    (a) => `private_key_type '${a.value}' is not supported for managed certificates; use rsa or ecdsa.`,
  ),
  managedCertificateAttached: entry<{ id: string }>(
    436,
    400,
    'The certificate to detach or replace is managed by a certificate management policy.',
    (a) =>
      `the certificate of ${a.id} is managed by its certificate_management_policy; detach the policy first (DELETE /reserved_domains/${a.id}/certificate_management_policy).`,
  ),
  serviceDomainPolicy: entry<{ value: string }>(
    439,
    400,
    "A certificate management policy is given for a name under the service's own base domain.",
    (a) => `domain '${a.value}' is under the service's own base domain, whose certificate serves it; it takes no certificate_management_policy.`,
  ),
  serviceDomainCertificate: entry<{ value: string }>(
    440,
    400,
    "A certificate is given for a name under the service's own base domain.",
    (a) => `domain '${a.value}' is under the service's own base domain, whose certificate serves it; it takes no certificate_id.`,
  ),
  tlsCertificateNotFound: entry<{ id: string }>(
    1927,
    400,
    'certificate_id names no TLS certificate of this account.',
    (a) => `certificate_id '${a.id}' is not a TLS certificate (cert_…) of this account.`,
  ),
  certificateNotCovering: entry<{ id: string; domain: string; names: readonly string[] }>(
    452,
    400,
    'The TLS certificate does not name the domain.',
    (a) => `TLS certificate ${a.id} does not cover '${a.domain}'; it names ${a.names.length > 0 ? shortList(a.names) : 'no DNS name'}.`,
  ),
  certificateIssued: entry<{ id: string }>(
    453,
    400,
    'certificate_id names a certificate that edgeplane issued for a policy; only uploaded ones can be attached.',
    (a) => `TLS certificate ${a.id} was issued for a certificate management policy; certificate_id takes an uploaded certificate.`,
  ),
  endpointConfigurationNotFound: entry<{ field: string; id: string }>(
    1600,
    400,
    'An endpoint configuration id names none of this account.',
    (a) => `${a.field} '${a.id}' is not an endpoint configuration (ec_…) of this account.`,
  ),
  endpointConfigurationType: entry<{ field: string; id: string; type: string; expected: string }>(
    428,
    400,
    'The endpoint configuration is of another type than the field takes.',
    (a) => `${a.field} '${a.id}' is an endpoint configuration of type ${a.type}; this field takes one of type ${a.expected}.`,
  ),
  invalidEndpointConfigurationType: entry<{ value: string }>(
    1622,
    400,
    'type of an endpoint configuration is not http, https or tcp.',
    (a) => `endpoint configuration type '${a.value}' is not supported; use http, https or tcp.`,
  ),
  endpointConfigurationInUse: entry<{ id: string; referrers: readonly string[] }>(
    1619,
    409,
    'The endpoint configuration is still attached to domains or addresses.',
    (a) => `endpoint configuration ${a.id} is still attached to ${shortList(a.referrers)}; detach it first.`,
  ),
  tlsCertificateInUse: entry<{ id: string; referrers: readonly string[] }>(
    1966,
    409,
    'The TLS certificate is still attached to reserved domains.',
    (a) =>
      `TLS certificate ${a.id} is still attached to ${shortList(a.referrers)}; detach it (DELETE /reserved_domains/{id}/certificate) or delete those first.`,
  ),
  ingressUnderServiceDomain: entry<{ value: string; base: string }>(
    6705,
    400,
    "The agent ingress domain is the service's own domain or under it.",
    (a) => `agent ingress domain '${a.value}' is under the service's own domain ${a.base}; use a domain you own.`,
  ),
  ingressTakenByYou: entry<{ value: string; id: string }>(
    6706,
    409,
    'This account already has an agent ingress on the domain.',
    (a) => `domain '${a.value}' is already an agent ingress of your account (${a.id}).`,
  ),
  ingressTakenByOther: entry<{ value: string }>(
    6707,
    409,
    'Another account has an agent ingress on the domain.',
    (a) => `domain '${a.value}' is an agent ingress of another account.`,
  ),
  // An agent ingress domain, and every name under it, belongs to the account of the ingress.
  domainInOthersIngress: entry<{ value: string }>(
    454,
    409,
    "The domain is another account's agent ingress domain, is under one, or (a wildcard) covers one.",
    (a) => `domain '${a.value}' overlaps an agent ingress domain of another account, which holds that domain and every name under it.`,
  ),
  ingressUnderOthers: entry<{ value: string }>(
    455,
    409,
    "The agent ingress domain is under another account's agent ingress domain, or covered by another account's wildcard reservation.",
    (a) => `agent ingress domain '${a.value}' is under an agent ingress domain, or a wildcard reserved domain, of another account.`,
  ),
  ingressOverOthers: entry<{ value: string }>(
    456,
    409,
    'Another account has reserved the domain, or holds a reserved domain or an agent ingress under it.',
    (a) =>
      `agent ingress domain '${a.value}' has names of another account at or under it (a reserved domain or an agent ingress); an agent ingress domain and every name under it belong to one account.`,
  ),

  // TLS certificates
  caNotSingle: entry<{ count: number }>(
    1912,
    400,
    'ca_pem holds more than one certificate.',
    (a) => `ca_pem holds ${a.count} certificates; upload each certificate authority on its own.`,
  ),
  caNotCa: entry<{ reason: string }>(
    1913,
    400,
    'The certificate of ca_pem is not a certificate authority.',
    (a) => `ca_pem is not a certificate authority: ${a.reason}.`,
  ),
  certificateAuthorityInUse: entry<{ id: string; referrers: readonly string[] }>(
    1958,
    409,
    'The certificate authority is still used by a mutual TLS module.',
    (a) => `certificate authority ${a.id} is still used by ${shortList(a.referrers)}; remove it from their mutual_tls modules first.`,
  ),
  certificatePemInvalid: entry<{ field: string; reason: string }>(
    1900,
    400,
    'certificate_pem (or ca_pem) is not PEM certificate data that can be read.',
    (a) => `${a.field} ${a.reason}.`,
  ),
  privateKeyPemInvalid: entry<{ reason: string }>(
    1901,
    400,
    'private_key_pem is not a PEM private key that can be read.',
    (a) => `private_key_pem ${a.reason}.`,
  ),
  privateKeyEncrypted: entry(
    1902,
    400,
    'private_key_pem is encrypted.',
    () => 'private_key_pem is encrypted; upload the key unencrypted (e.g. `openssl pkey -in key.pem -out plain.pem`). It is sealed at rest by the service.',
  ),
  certificateExpired: entry<{ notAfter: string }>(
    1903,
    400,
    'The uploaded certificate (the leaf of a chain, or a certificate authority) has expired.',
    (a) => `the certificate expired at ${a.notAfter}; upload a certificate that is still valid.`,
  ),
  privateKeyType: entry<{ type: string }>(
    1904,
    400,
    'The private key is not RSA, ECDSA or Ed25519.',
    (a) => `private keys of type ${a.type} are not supported; use RSA, ECDSA or Ed25519.`,
  ),
  pemHeaders: entry<{ field: string }>(
    1910,
    400,
    'A PEM block carries headers.',
    (a) => `${a.field} has a PEM block with headers (such as Proc-Type); blocks must have none.`,
  ),
  pemBlockType: entry<{ field: string; type: string; expected: string }>(
    1911,
    400,
    'A PEM block is of a type the field does not take.',
    (a) => `${a.field} has a '${a.type}' PEM block; it takes ${a.expected}.`,
  ),
  keyMismatch: entry(
    1923,
    400,
    'The private key is not the key of the leaf certificate.',
    () => 'private_key_pem does not match the first certificate of certificate_pem (the leaf); give the leaf first and its own key.',
  ),
  keyAsCertificate: entry(
    1924,
    400,
    'certificate_pem holds a private key.',
    () => 'certificate_pem holds a private key; put the key in private_key_pem and the certificate chain in certificate_pem.',
  ),
  certificateAsKey: entry(
    1925,
    400,
    'private_key_pem holds a certificate.',
    () => 'private_key_pem holds a certificate; put the certificate chain in certificate_pem and the key in private_key_pem.',
  ),
  chainOrder: entry<{ position: number }>(
    1926,
    400,
    'The chain is not ordered leaf first, each certificate signed by the next.',
    (a) =>
      `certificate ${a.position} of certificate_pem is not signed by certificate ${a.position + 1}; order the chain leaf first, then each issuer (intermediates), and leave out the root if it is not signed by the next.`,
  ),

  // Reserved addresses, TCP edges and their modules
  addressPoolExhausted: entry<{ pool: string }>(
    508,
    409,
    "No address of the operator's TCP address pool is free.",
    (a) => `every TCP address of the pool (${a.pool}) is reserved; delete a reserved address, or ask the operator to widen EDGEPLANE_TCP_ADDRESSES.`,
  ),
  reservedAddrInUse: entry<{ id: string; edges: readonly string[] }>(
    520,
    409,
    'The reserved address is still served by an edge.',
    (a) => `reserved address ${a.id} is served by ${shortList(a.edges)}; remove it from the edge's hostports or delete the edge first.`,
  ),
  invalidHostport: entry<{ value: string }>(
    7104,
    400,
    'A hostport is not of the form hostname:port.',
    (a) =>
      `hostport '${a.value.slice(0, 300)}' must be specified in the format 'hostname:portnumber', as the addr of a reserved address (1.tcp.edgeplane.app:20000).`,
  ),
  hostportPort: entry<{ value: string }>(
    7112,
    400,
    'The port of a hostport is not from 1 to 65535.',
    (a) => `hostport '${a.value}' has a port outside 1 to 65535.`,
  ),
  hostportNotReserved: entry<{ value: string }>(
    7113,
    400,
    'A hostport is not a reserved address of this account.',
    (a) => `hostport '${a.value}' is not a reserved address of your account; reserve one with POST /reserved_addrs and use its addr.`,
  ),
  hostportHasConfiguration: entry<{ value: string; id: string }>(
    7115,
    400,
    'A hostport is a reserved address with an endpoint configuration, which an edge cannot serve.',
    (a) =>
      `hostport '${a.value}' is reserved address ${a.id}, which has an endpoint configuration; detach it first (DELETE /reserved_addrs/${a.id}/endpoint_configuration).`,
  ),
  hostportInUse: entry<{ value: string; edge: string }>(
    7122,
    409,
    'A hostport is already served by another edge.',
    (a) => `hostport '${a.value}' is already served by edge ${a.edge}; an address is served by one edge at a time.`,
  ),
  duplicateHostport: entry<{ value: string }>(7123, 400, 'A hostport is listed twice.', (a) => `hostport '${a.value}' is listed twice.`),
  tooManyHostports: entry<{ count: number; max: number }>(
    7129,
    400,
    'An edge has more hostports than the limit.',
    (a) => `an edge serves at most ${a.max} hostports; ${a.count} were given.`,
  ),
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
    (a) => `${a.owner} has a ${a.other} module; the ${a.module} module and the ${a.other} module exclude each other, so delete the ${a.other} module first.`,
  ),
  moduleExclusiveInRequest: entry<{ module: string; other: string }>(
    7202,
    400,
    'A request sets two modules that exclude each other.',
    (a) => `the ${a.module} and ${a.other} modules exclude each other; send one of them.`,
  ),

  hostportPort443: entry<{ value: string }>(
    7116,
    400,
    'A hostport of a TLS or HTTPS edge is not on port 443.',
    (a) => `hostport '${a.value}' must use port 443 (a reserved domain as '<domain>:443').`,
  ),
  hostportNotDomain: entry<{ value: string }>(
    7133,
    400,
    'A hostport of a TLS or HTTPS edge is not a reserved domain of this account.',
    (a) => `hostport '${a.value}' is not a reserved domain of your account; reserve it with POST /reserved_domains and use '<domain>:443'.`,
  ),
  domainInUseByEdge: entry<{ id: string; edges: readonly string[] }>(
    446,
    409,
    'The reserved domain is still served by an edge.',
    (a) => `reserved domain ${a.id} is served by ${shortList(a.edges)}; remove it from the edge's hostports or delete the edge first.`,
  ),
  certificateAuthorityNotFound: entry<{ id: string }>(
    1957,
    400,
    'mutual_tls.certificate_authority_ids names no certificate authority of this account.',
    (a) => `certificate authority '${a.id}' in mutual_tls.certificate_authority_ids is not a certificate authority (ca_…) of this account.`,
  ),
  invalidTerminateAt: entry<{ value: string }>(
    224,
    400,
    'tls_termination.terminate_at is not edge or upstream.',
    (a) => `tls_termination.terminate_at '${a.value}' is not supported; use edge or upstream.`,
  ),
  invalidMinVersion: entry<{ value: string }>(
    7107,
    400,
    'tls_termination.min_version is not a TLS version from 1.0 to 1.3.',
    (a) => `tls_termination.min_version '${a.value}' is not supported; use 1.0, 1.1, 1.2 or 1.3.`,
  ),
  minVersionUpstream: entry(
    7108,
    400,
    'tls_termination.min_version is set while TLS terminates upstream.',
    () => 'tls_termination.min_version applies only when TLS terminates at the edge; leave it null with terminate_at upstream.',
  ),
  mutualTlsNeedsEdgeTermination: entry(
    1694,
    400,
    'Mutual TLS is set while TLS terminates upstream.',
    () => 'mutual_tls needs TLS terminated at the edge; set tls_termination.terminate_at to edge, or delete the mutual_tls module.',
  ),

  // Traffic policy (the policy and traffic_policy modules)
  invalidExpression: entry<{ where: string; rule: string; expression: string; position: string; reason: string }>(
    2200,
    400,
    'A CEL expression of a traffic policy rule does not parse or type-check against the variables of its phase, or has a matches pattern RE2 refuses.',
    (a) => `${a.where}, rule '${a.rule}': expression '${a.expression}' is invalid at ${a.position}: ${a.reason}.`,
  ),
  unknownActionType: entry<{ where: string; rule: string; type: string; valid: readonly string[] }>(
    2201,
    400,
    'An action of a traffic policy rule has a type that does not exist.',
    (a) => `${a.where}, rule '${a.rule}': action type '${a.type}' does not exist; the types here are ${list(a.valid)}.`,
  ),
  actionNotAllowed: entry<{ where: string; rule: string; type: string; valid: readonly string[] }>(
    2202,
    400,
    'An action type exists but is not allowed in this direction or phase.',
    (a) => `${a.where}, rule '${a.rule}': action '${a.type}' is not allowed here; the actions allowed here are ${list(a.valid)}.`,
  ),
  invalidActionConfig: entry<{ where: string; rule: string; type: string; problem: string }>(
    2203,
    400,
    'The config of a traffic policy action does not fit its type.',
    (a) => `${a.where}, rule '${a.rule}': the config of action '${a.type}' ${a.problem}.`,
  ),
  ruleWithoutActions: entry<{ where: string; rule: string }>(
    2206,
    400,
    'A traffic policy rule has no action.',
    (a) => `${a.where}, rule '${a.rule}' has no action; every rule needs at least one.`,
  ),
  ruleWithoutName: entry<{ where: string; index: number }>(
    2208,
    400,
    'A traffic policy rule has no name (the policy module requires one).',
    (a) => `${a.where}, rule ${a.index + 1} has no name; give every rule a name.`,
  ),
  tooManyRules: entry<{ where: string; count: number; max: number }>(
    2209,
    400,
    'A direction or phase of a traffic policy has more rules than the limit.',
    (a) => `${a.where} has ${a.count} rules; at most ${a.max} are allowed.`,
  ),
  tooManyExpressions: entry<{ where: string; rule: string; what: 'expressions' | 'actions'; count: number; max: number }>(
    2210,
    400,
    'A traffic policy rule has more expressions, or more actions, than the limit.',
    (a) => `${a.where}, rule '${a.rule}' has ${a.count} ${a.what}; at most ${a.max} are allowed.`,
  ),
  expressionTooLong: entry<{ where: string; rule: string; length: number; max: number }>(
    2211,
    400,
    'A CEL expression is longer than the limit.',
    (a) => `${a.where}, rule '${a.rule}': an expression has ${a.length} characters; at most ${a.max} are allowed.`,
  ),
  invalidPolicyDocument: entry<{ problem: string }>(
    2212,
    400,
    'The traffic_policy value is not a JSON or YAML traffic policy document.',
    (a) => `traffic_policy value ${a.problem}.`,
  ),
  unknownPhase: entry<{ phase: string; valid: readonly string[] }>(
    2213,
    400,
    'The traffic policy document names a phase that does not exist here.',
    (a) => `traffic policy phase '${a.phase}' does not exist on this resource; the phases here are ${list(a.valid)}.`,
  ),
  policyDocumentTooComplex: entry<{ problem: string }>(
    1970,
    400,
    'The traffic_policy document goes over a limit of its shape: tokens, nesting depth, anchors, aliases, tags, values or keys per mapping.',
    (a) => `traffic_policy value ${a.problem}; see the limits of traffic policy documents in the documentation.`,
  ),
  policyTooManyValues: entry<{ where: string; rule: string; max: number }>(
    1972,
    400,
    'The action configs of a traffic policy, all together, hold more values than the limit.',
    (a) =>
      `${a.where}, rule '${a.rule}': here the action configs of the policy go over ${a.max} values together (keys, strings, numbers, booleans, lists and objects); at most ${a.max} are allowed in one policy (restrict-ips can name IP policies instead of listing addresses).`,
  ),
  policyExpressionsTooLong: entry<{ where: string; rule: string; max: number }>(
    1971,
    400,
    'The CEL expressions of a traffic policy, all together, are longer than the limit.',
    (a) =>
      `${a.where}, rule '${a.rule}': here the CEL expressions of the policy (rule expressions and bucket keys, each as often as it appears) go over ${a.max} characters together; at most ${a.max} are allowed in one policy.`,
  ),

  // HTTPS edges and routes
  terminateAtNotAllowed: entry(
    7109,
    400,
    'terminate_at is sent in the TLS termination of an HTTPS edge, which always terminates at the edge.',
    () => "tls_termination.terminate_at is not allowed on an HTTPS edge: it always terminates TLS at the edge; send only 'enabled' and 'min_version'.",
  ),
  invalidMatchType: entry<{ value: string }>(
    7130,
    400,
    'The match_type of a route is not exact_path or path_prefix.',
    (a) => `match_type '${a.value.slice(0, 40)}' is not valid; it is exact_path or path_prefix.`,
  ),
  invalidRouteMatch: entry<{ value: string }>(
    7131,
    400,
    "The match of a route is not a path starting with '/'.",
    (a) => `match '${a.value.slice(0, 80)}' must be a path starting with '/', such as '/' or '/blog'.`,
  ),
  routeMatchTooLong: entry<{ length: number; max: number }>(
    7135,
    400,
    'The match of a route is longer than the limit.',
    (a) => `match is ${a.length} characters long; at most ${a.max} are allowed.`,
  ),
  duplicateRouteMatch: entry<{ match: string; route: string }>(
    7126,
    409,
    'Another route of the edge has the same match.',
    (a) => `route ${a.route} of this edge already matches '${a.match.slice(0, 80)}'; a match is used by one route of an edge.`,
  ),
  tooManyRoutes: entry<{ edge: string; max: number }>(
    7128,
    409,
    'The edge already has as many routes as allowed.',
    (a) => `edge ${a.edge} already has ${a.max} routes, the most an edge may have; delete one first.`,
  ),
  authModuleOnOtherRoute: entry<{ module: string; other: string; route: string }>(
    7155,
    409,
    'Another route of the edge already has an OAuth, OIDC or SAML module; one route of an edge may have one.',
    (a) =>
      `route ${a.route} of this edge already has the ${a.other} module; OAuth, OIDC and SAML are allowed on one route of an edge, so delete it there before setting ${a.module} here.`,
  ),
  eventStreamNotFound: entry<{ id: string }>(
    1623,
    400,
    'A logging module names an event stream; this API serves none.',
    (a) => `logging.event_stream_ids names '${a.id.slice(0, 80)}', but this API serves no event streams; send an empty list.`,
  ),
  moduleNotAllowedForType: entry<{ module: string; type: string; allowed: readonly string[] }>(
    1621,
    400,
    'The module is not allowed on an endpoint configuration of this type.',
    (a) => `the ${a.module} module is not allowed on an endpoint configuration of type ${a.type}; the modules of that type are ${list(a.allowed)}.`,
  ),

  // HTTPS route modules (headers, compression, circuit breaker, webhook verification, OAuth, SAML, OIDC, user agent filter)
  circuitBreakerThreshold: entry<{ value: number }>(
    7011,
    400,
    'circuit_breaker.error_threshold_percentage is not a fraction from 0.0 to 1.0.',
    (a) => `circuit_breaker.error_threshold_percentage must be a fraction from 0.0 to 1.0 (0.5 trips the breaker at 50 % errors); got ${a.value}.`,
  ),
  snsSecretNotAccepted: entry<{ module: string }>(
    7026,
    400,
    'An SNS webhook verification module has a secret, which SNS does not use.',
    (a) => `${a.module}: SNS webhook verification does not accept a secret; SNS messages are checked against the signing certificate AWS names in them.`,
  ),
  webhookSecretRequired: entry<{ module: string; provider: string }>(
    7027,
    400,
    'A webhook verification module has no secret, which its provider needs.',
    (a) => `${a.module}: provider '${a.provider}' requires a secret (the signing secret or key the provider shows for its webhooks).`,
  ),
  sendgridKeyInvalid: entry<{ module: string }>(
    7028,
    400,
    'A SendGrid webhook verification secret is not a base64 ECDSA public key.',
    (a) => `${a.module}: the sendgrid secret must be the verification key SendGrid shows: a base64 ECDSA public key (DER SubjectPublicKeyInfo).`,
  ),
  webhookProviderMissing: entry<{ module: string }>(
    7029,
    400,
    'A webhook verification module names no provider.',
    (a) => `${a.module}.provider is required: name the service that signs the webhooks (github, stripe, twilio, …).`,
  ),
  unknownWebhookProvider: entry<{ module: string; provider: string; supported: readonly string[] }>(
    7030,
    400,
    'A webhook verification module names a provider that is not supported.',
    (a) => `${a.module}.provider '${a.provider}' is not a supported webhook provider; supported providers are ${list(a.supported)}.`,
  ),
  oauthProviderCount: entry<{ count: number; supported: readonly string[] }>(
    7031,
    400,
    'An OAuth module does not name exactly one identity provider.',
    (a) => `oauth.provider must name exactly one identity provider (one of ${list(a.supported)}); ${a.count} were given.`,
  ),
  oauthClientPair: entry<{ provider: string }>(
    7032,
    400,
    'An OAuth module has a client_id without a client_secret, or the reverse.',
    (a) => `oauth.provider.${a.provider}: give client_id and client_secret together (your own OAuth application), or neither (the managed application).`,
  ),
  samlMetadataInvalid: entry<{ reason: string }>(
    7033,
    400,
    'saml.idp_metadata is not the SAML metadata of an identity provider.',
    (a) => `saml.idp_metadata ${a.reason}.`,
  ),
  webhookSecretTooLong: entry<{ module: string; length: number; max: number }>(
    7154,
    400,
    'A webhook verification secret is longer than the limit.',
    (a) => `${a.module}.secret is limited to ${a.max} characters; ${a.length} were given.`,
  ),
  userAgentRegexInvalid: entry<{ list: string; index: number; reason: string }>(
    2090,
    400,
    'A regular expression of a user agent filter does not compile or could take exponential time.',
    (a) => `user_agent_filter.${a.list}[${a.index}] ${a.reason}.`,
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
  // Agent sessions
  agentRefusedCommand: entry<{ command: string; id: string; error: string }>(
    8100,
    409,
    'The agent of the tunnel session refused the command (it does not support it, or cannot now); its answer is given.',
    (a) => `The agent of tunnel session ${a.id} refused to ${a.command}: ${a.error.slice(0, 300)}`,
  ),
  agentCommandFailed: entry<{ command: string; id: string; reason: string }>(
    8101,
    503,
    'The tunnel session ended, or its agent did not answer the command in time; retry, or list the sessions to see whether it is still online.',
    (a) => `The command to ${a.command} did not reach the agent of tunnel session ${a.id}: ${a.reason.slice(0, 300)}`,
    () => ({ 'Retry-After': '5' }),
  ),
  tooManyQueuedCommands: entry<{ id: string; max: number }>(
    8102,
    409,
    'The tunnel session already has the most commands that may wait for the instance that holds it; retry once they have run.',
    (a) => `Tunnel session ${a.id} already has ${a.max} commands waiting for the instance that holds it; retry in a few seconds.`,
  ),
  internal: entry(
    261,
    500,
    'An unexpected server fault; the operation id identifies it in the logs.',
    () => 'An unexpected error happened on the server; report the operation id to the operator.',
  ),
} as const;

type Catalogue = typeof catalogue;
type ArgsOf<E> = E extends Entry<infer A> ? A : never;

/** Error factories: `throw errors.notFound({ title, id })`. */
export const errors = Object.fromEntries(
  Object.entries(catalogue).map(([name, e]) => [
    name,
    (args: unknown) =>
      new ApiError(e.code, e.status, (e.message as (a: unknown) => string)(args), e.headers ? (e.headers as (a: unknown) => Record<string, string>)(args) : {}),
  ]),
) as { [K in keyof Catalogue]: ArgsOf<Catalogue[K]> extends void ? () => ApiError : (args: ArgsOf<Catalogue[K]>) => ApiError };
