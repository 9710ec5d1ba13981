// The config of each action, declared as a TypeBox schema of the values in config-values.ts:
// those the same on TCP and HTTP edges (log, restrict-ips), those of HTTP edges (deny with a
// status, custom-response, rate-limit, url-rewrite, add-headers, remove-headers, redirect,
// compress-response, jwt-validation), and deny on TCP, which takes none. Each is compiled once
// into the check of its config (config-check.ts).
import { Type, type TSchema } from '@sinclair/typebox';
import { EMPTY_ON, IF_NULL, Refined, configCheck, type ConfigCheck } from './config-check.js';
import {
  AnyObject,
  Cidr,
  Config,
  HeaderMap,
  HeaderName,
  IntegerFrom,
  InternalUrl,
  IpPolicyId,
  List,
  NonBlank,
  OneOf,
  RateWindow,
  Regex,
  StatusCode,
  TcpInternalUrl,
  ValueExpression,
} from './config-values.js';

/** Largest custom-response body, in UTF-8 bytes. */
export const MAX_RESPONSE_CONTENT_BYTES = 64 * 1024;

// The configs the same on every protocol.

const RestrictIps = Refined(
  Config(
    {
      enforce: Type.Optional(Type.Boolean()),
      allow: Type.Optional(List('CIDRs', Cidr)),
      deny: Type.Optional(List('CIDRs', Cidr)),
      ip_policies: Type.Optional(List('IP policy ids', IpPolicyId)),
    },
    { [IF_NULL]: 'is required: list at least one of allow, deny or ip_policies' },
  ),
  (config) => (config.allow?.length || config.deny?.length || config.ip_policies?.length ? undefined : 'must list at least one of allow, deny or ip_policies'),
);

const SHARED_CONFIGS = {
  log: Config({ metadata: Type.Optional(AnyObject) }),
  'restrict-ips': RestrictIps,
};

// The configs of HTTP edges.

const AllowList = Config({ allow_list: List('{value} objects', Config({ value: NonBlank() }), { minItems: 1 }) });

const JWT_TOKEN_TYPES = ['access_token', 'at+jwt', 'id_token', 'it+jwt', 'jwt', 'plain'] as const;

const SigningAlgorithm = Refined(NonBlank(), (value, at) =>
  value.toLowerCase() === 'none' ? `has '${at}' 'none'; unsigned tokens cannot be allowed` : undefined,
);

// The shape of jwt-validation's config (ngrok's), not its cryptography: issuers, audiences and
// where tokens are must be given; key sources are URLs the edge fetches.
const JwtValidation = Config({
  issuer: AllowList,
  audience: AllowList,
  http: Config({
    tokens: List(
      'tokens',
      Config({ type: OneOf(JWT_TOKEN_TYPES), method: OneOf(['header', 'body']), name: NonBlank(), prefix: Type.Optional(Type.String()) }),
      { minItems: 1 },
    ),
  }),
  jws: Config({
    allowed_algorithms: List('algorithm names', SigningAlgorithm, { minItems: 1 }),
    keys: Type.Optional(Config({ sources: Type.Optional(Config({ additional_jkus: Type.Optional(List('URLs', NonBlank())) })) })),
  }),
});

const HTTP_CONFIGS = {
  ...SHARED_CONFIGS,
  deny: Config({ status_code: Type.Optional(StatusCode) }),
  'custom-response': Config({
    status_code: StatusCode,
    content: Type.Optional(Type.String({ 'x-max-bytes': MAX_RESPONSE_CONTENT_BYTES })),
    headers: Type.Optional(HeaderMap()),
    content_type: Type.Optional(NonBlank()),
  }),
  'rate-limit': Config({
    name: Type.Optional(Type.String()),
    algorithm: Type.Optional(OneOf(['sliding_window'])),
    capacity: IntegerFrom(1, 2_000_000_000),
    rate: RateWindow,
    bucket_key: Type.Optional(List('CEL expressions', ValueExpression, { maxItems: 10 })),
  }),
  'url-rewrite': Config({ from: Regex, to: Type.String(), format: Type.Optional(NonBlank()) }),
  'add-headers': Config({ headers: HeaderMap({ minProperties: 1 }) }),
  'remove-headers': Config({ headers: List('header names', HeaderName, { minItems: 1 }) }),
  redirect: Config({
    to: NonBlank(),
    from: Type.Optional(Regex),
    status_code: Type.Optional(OneOf([301, 302, 303, 307, 308])),
    headers: Type.Optional(HeaderMap()),
  }),
  'compress-response': Config({ algorithms: Type.Optional(List('algorithm names', OneOf(['gzip', 'deflate', 'br', 'compress']))) }),
  'jwt-validation': JwtValidation,
  // Forwards the request to the account's internal endpoint (an agent's `https://<name>.internal`)
  // and ends the phase. on_error takes only `halt` (ngrok's default): an internal endpoint that is
  // offline is answered with an error page, never passed over to later actions.
  'forward-internal': Config({ url: InternalUrl, binding: Type.Optional(OneOf(['internal'])), on_error: Type.Optional(OneOf(['halt'])) }),
};

/**
 * On a TCP edge deny and close-connection take no config: an empty one, or none. forward-internal
 * (a traffic_policy document's on_tcp_connect only) sends the connection to the account's internal
 * TCP endpoint, `tcp://<name>.internal:<port>`.
 */
const TCP_CONFIGS = {
  ...SHARED_CONFIGS,
  deny: Config({}, { [EMPTY_ON]: 'a TCP edge' }),
  'close-connection': Config({}, { [EMPTY_ON]: 'a TCP edge' }),
  'forward-internal': Config({ url: TcpInternalUrl, binding: Type.Optional(OneOf(['internal'])), on_error: Type.Optional(OneOf(['halt'])) }),
};

const checksOf = (schemas: Record<string, TSchema>): Record<string, ConfigCheck> =>
  Object.fromEntries(Object.entries(schemas).map(([type, schema]) => [type, configCheck(schema)]));

/** The check of each action's config on TCP edges, and on HTTP ones. */
export const TCP_CHECKS = checksOf(TCP_CONFIGS);
export const HTTP_CHECKS = checksOf(HTTP_CONFIGS);
