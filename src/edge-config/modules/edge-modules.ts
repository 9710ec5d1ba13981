// The modules of edges, each declared once: its request, stored and response shapes, the ids it
// names and the rules it brings. TCP edges, TLS edges, HTTPS routes and endpoint configurations
// list the same definitions.
import { Type, type Static, type TObject } from '@sinclair/typebox';
import type { ApiError } from '../../core/errors.js';
import { IdString, Nullable, Ref, StringEnum } from '../../core/schema.js';
import { defineModule, type ModuleDefinition, type ModuleRule } from '../../crud/modules.js';
import { BACKEND_KINDS, backendNotFound, MAX_POLICIES_PER_RESTRICTION, policyNotFound } from '../values/named-resources.js';
import { checkEndpointPolicy, checkTrafficPolicyDocument, policyIdsOf, type EndpointPolicy, type PolicyProtocol } from '../traffic-policy/traffic-policy.js';
import { edgeModuleErrors } from './edge-module.errors.js';

/** `enabled` of every module's request: optional, true when absent. */
export const Enabled = Type.Optional(Type.Boolean({ description: 'default true' }));

export const backendModule = defineModule({
  name: 'backend',
  title: 'backend',
  request: Type.Object({ enabled: Enabled, backend_id: IdString('bkd', 'backend') }, { additionalProperties: false }),
  stored: Type.Object({ enabled: Type.Boolean(), backend_id: Type.String() }),
  response: Type.Object({ enabled: Type.Boolean(), backend: Ref }),
  parse: (body) => ({
    value: { enabled: body.enabled ?? true, backend_id: body.backend_id },
    refs: [body.backend_id],
  }),
  references: { kinds: BACKEND_KINDS, notFound: backendNotFound('backend.backend_id') },
  toApi: (value, view) => ({ enabled: value.enabled, backend: view.ref(value.backend_id) }),
});

/**
 * A module that names resources of the account by id (`ip_policy_ids`) and shows them as Refs
 * (`ip_policies`): IP restriction and mutual TLS.
 */
function idListModule(spec: {
  name: string;
  title: string;
  /** The request's list of ids, and the response's list of Refs. */
  field: string;
  shown: string;
  prefix: string;
  /** What an id names, one and many: the schema's descriptions. */
  what: string;
  whats: string;
  max: number;
  kinds: readonly string[];
  notFound(id: string): ApiError;
}) {
  return defineModule({
    name: spec.name,
    title: spec.title,
    request: Type.Object(
      {
        enabled: Enabled,
        [spec.field]: Type.Array(IdString(spec.prefix, spec.what), {
          maxItems: spec.max,
          uniqueItems: true,
          description: `up to ${spec.max} ${spec.whats} of the account, each once`,
        }),
      },
      { additionalProperties: false },
    ),
    stored: Type.Object({ enabled: Type.Boolean(), [spec.field]: Type.Array(Type.String()) }),
    response: Type.Object({ enabled: Type.Boolean(), [spec.shown]: Type.Array(Ref) }),
    parse: (body) => {
      const ids = body[spec.field] as string[];
      return { value: { enabled: body.enabled ?? true, [spec.field]: ids }, refs: ids };
    },
    references: { kinds: spec.kinds, notFound: spec.notFound },
    toApi: (value, view) => ({ enabled: value.enabled, [spec.shown]: (value[spec.field] as string[]).map((id) => view.ref(id)) }),
  });
}

/** A module that names IP policies of the account: the IP restriction of edges and routes, the `ip_policy` of endpoint configurations. */
function ipPolicyListModule(name: string, title: string) {
  return idListModule({
    name,
    title,
    field: 'ip_policy_ids',
    shown: 'ip_policies',
    prefix: 'ipp',
    what: 'IP policy',
    whats: 'IP policies',
    max: MAX_POLICIES_PER_RESTRICTION,
    kinds: ['ip_policy'],
    notFound: policyNotFound(`${name}.ip_policy_ids`),
  });
}

export const ipRestrictionModule = ipPolicyListModule('ip_restriction', 'IP restriction');

/** The IP restriction of an endpoint configuration: the same module under its older name. */
export const ipPolicyModule = ipPolicyListModule('ip_policy', 'IP policy');

/**
 * Logging of an endpoint configuration to event streams. This API serves no event streams, so
 * any id names nothing in the account (400); an empty list is accepted and shown.
 */
export const loggingModule = idListModule({
  name: 'logging',
  title: 'logging',
  field: 'event_stream_ids',
  shown: 'event_streams',
  prefix: 'esm',
  what: 'event stream',
  whats: 'event streams',
  max: 10,
  kinds: [],
  notFound: (id) => edgeModuleErrors.eventStreamNotFound({ id }),
});

const Action = Type.Object(
  {
    type: Type.String({ maxLength: 64 }),
    config: Type.Optional(Nullable(Type.Object({}, { additionalProperties: true }))),
  },
  { additionalProperties: false },
);
const Rule = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 255 })),
    expressions: Type.Optional(Type.Array(Type.String())),
    actions: Type.Optional(Type.Array(Action)),
  },
  { additionalProperties: false },
);
const RuleOut = Type.Object({
  name: Type.String(),
  expressions: Type.Array(Type.String()),
  actions: Type.Array(Type.Object({ type: Type.String(), config: Nullable(Type.Object({}, { additionalProperties: true })) })),
});

/** The `policy` module (the API's first form of traffic policy): inbound and outbound rules. */
export function policyModule(protocol: PolicyProtocol) {
  const stored = Type.Object({ enabled: Type.Boolean(), inbound: Type.Array(RuleOut), outbound: Nullable(Type.Array(RuleOut)) });
  return defineModule({
    name: 'policy',
    title: 'traffic policy',
    request: Type.Object(
      { enabled: Enabled, inbound: Type.Optional(Nullable(Type.Array(Rule))), outbound: Type.Optional(Nullable(Type.Array(Rule))) },
      { additionalProperties: false },
    ),
    stored,
    response: stored,
    parse: (body) => {
      const value: EndpointPolicy = checkEndpointPolicy(body, protocol);
      return { value, refs: policyIdsOf(value) };
    },
    references: { kinds: ['ip_policy'], notFound: policyNotFound('policy restrict-ips ip_policies') },
    toApi: (value) => ({ enabled: value.enabled, inbound: value.inbound, outbound: value.outbound }),
    excludes: ['traffic_policy'],
  });
}

/** The `traffic_policy` module (the API's current form): a JSON or YAML document of phases, echoed as sent. */
export function trafficPolicyModule(protocol: PolicyProtocol) {
  const document = Type.Object({ enabled: Type.Boolean(), value: Type.String() });
  return defineModule({
    name: 'traffic_policy',
    title: 'traffic policy document',
    request: Type.Object(
      // Its size (at most 256 KiB of UTF-8) is checked with the document, so that it has one code.
      { enabled: Enabled, value: Type.String({ description: 'a traffic policy document, JSON or YAML, at most 256 KiB' }) },
      { additionalProperties: false },
    ),
    stored: document,
    response: document,
    parse: (body) => {
      // Parsed once: the check gives the IP policies the document names.
      const refs = checkTrafficPolicyDocument(body.value, protocol);
      return { value: { enabled: body.enabled ?? true, value: body.value }, refs };
    },
    references: { kinds: ['ip_policy'], notFound: policyNotFound('traffic_policy restrict-ips ip_policies') },
    toApi: (value) => ({ enabled: value.enabled, value: value.value }),
    excludes: ['policy'],
  });
}

const TLS_VERSIONS = ['1.0', '1.1', '1.2', '1.3'];

const TlsTermination = Type.Object({ enabled: Type.Boolean(), terminate_at: StringEnum(['edge', 'upstream'] as const), min_version: Nullable(Type.String()) });

/** Client certificates are checked where TLS is terminated: with no tls_termination module, at the edge. */
const needsEdgeTermination: ModuleRule = ({ after }) => {
  const mutualTls = after.get('mutual_tls') as { enabled: boolean } | undefined;
  const termination = after.get('tls_termination') as Static<typeof TlsTermination> | undefined;
  return mutualTls?.enabled && termination?.enabled && termination.terminate_at === 'upstream' ? edgeModuleErrors.mutualTlsNeedsEdgeTermination() : undefined;
};

export const mutualTlsModule: ModuleDefinition = {
  ...idListModule({
    name: 'mutual_tls',
    title: 'mutual TLS',
    field: 'certificate_authority_ids',
    shown: 'certificate_authorities',
    prefix: 'ca',
    what: 'certificate authority',
    whats: 'certificate authorities',
    max: 50,
    kinds: ['certificate_authority'],
    notFound: (id) => edgeModuleErrors.certificateAuthorityNotFound({ id }),
  }),
  rules: [needsEdgeTermination],
};

/** TLS termination of a TLS edge: at the edge (with a minimum version) or upstream. */
export const tlsTerminationModule = tlsTermination(
  Type.Object(
    {
      enabled: Enabled,
      terminate_at: Type.Optional(Type.String({ maxLength: 16, description: 'edge (default) or upstream' })),
      min_version: Type.Optional(Nullable(Type.String({ maxLength: 8, description: '1.0, 1.1, 1.2 or 1.3; only with terminate_at edge' }))),
    },
    { additionalProperties: false },
  ),
);

/**
 * TLS termination of an HTTPS edge: always at the edge, so only the minimum version is chosen.
 * `terminate_at` is in the request shape so that sending it gets its own clear 400, not "unknown field".
 */
export const httpsTlsTerminationModule = tlsTermination(
  Type.Object(
    {
      enabled: Enabled,
      terminate_at: Type.Optional(Type.String({ maxLength: 16, description: 'not allowed: an HTTPS edge terminates TLS at the edge' })),
      min_version: Type.Optional(Nullable(Type.String({ maxLength: 8, description: '1.0, 1.1, 1.2 or 1.3' }))),
    },
    { additionalProperties: false },
  ),
  { edgeOnly: true },
);

/** The TLS termination module with a request shape; `edgeOnly`: `terminate_at` may not be sent. */
function tlsTermination(request: TObject, { edgeOnly = false } = {}) {
  return defineModule({
    name: 'tls_termination',
    title: 'TLS termination',
    request,
    stored: TlsTermination,
    response: Type.Object({ enabled: Type.Boolean(), terminate_at: Type.String(), min_version: Nullable(Type.String()) }),
    parse: (sent) => {
      const body = sent as { enabled?: boolean; terminate_at?: string; min_version?: string | null };
      if (edgeOnly && body.terminate_at !== undefined) throw edgeModuleErrors.terminateAtNotAllowed();
      const terminateAt = body.terminate_at ?? 'edge';
      if (terminateAt !== 'edge' && terminateAt !== 'upstream') throw edgeModuleErrors.invalidTerminateAt({ value: terminateAt });
      const minVersion = body.min_version ?? null;
      if (minVersion !== null && !TLS_VERSIONS.includes(minVersion)) throw edgeModuleErrors.invalidMinVersion({ value: minVersion });
      if (minVersion !== null && terminateAt === 'upstream') throw edgeModuleErrors.minVersionUpstream();
      return { value: { enabled: body.enabled ?? true, terminate_at: terminateAt as 'edge' | 'upstream', min_version: minVersion }, refs: [] };
    },
    toApi: (value) => ({ ...value }),
  });
}
