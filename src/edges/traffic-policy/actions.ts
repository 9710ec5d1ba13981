// Each action type compiled once from its config (checked by the control plane, so its shape is
// the one action-configs.ts declares) into what it does when its rule applies: change the
// request or the response in place, log, or stop the phase with a response (or an error).
import { STATUS_CODES } from 'node:http';
import type { CelEnvName } from '../../edge-config/traffic-policy/cel.js';
import { isFieldValue, isToken } from '../../lib/http/syntax.js';
import { IpMatcher } from '../../lib/ip/cidr.js';
import { compileRe2 } from '../../lib/regex/re2-runtime.js';
import { celText, compileProgram, fullUrl, type Activation, type Program, type Scope } from './cel-runtime.js';
import { JwtValidator, type JwtConfig } from './jwt.js';
import { SlidingWindow, durationMs } from './rate-limit.js';
import { compileTemplate, type Template } from './templates.js';
import type { HeaderField, PolicyDeps } from './types.js';

/** One run of a phase: what its expressions see, cached until an action changes the request or response. */
export class RunState {
  private cached?: Activation;
  /** compress-response's algorithms, when one ran. */
  compress?: string[];

  constructor(
    readonly scope: Scope,
    private readonly build: (scope: Scope) => Activation,
  ) {}

  activation(): Activation {
    return (this.cached ??= this.build(this.scope));
  }

  /** The request or response changed: later rules see it as it is now. */
  changed(): void {
    this.cached = undefined;
  }
}

export type Answer = { status: number; headers: HeaderField[]; body: string };
/**
 * What an action does to its phase: nothing (the next action runs), a response that ends it, an
 * error that ends it, or (forward-internal) the internal endpoint the request goes to, which ends it.
 */
export type Stop = undefined | { respond: Answer } | { error: string } | { forward: string };

export interface CompiledAction {
  type: string;
  run(state: RunState): Stop | Promise<Stop>;
}

export interface ActionContext {
  env: CelEnvName;
  /** Which message the actions work on. */
  phase: 'request' | 'response' | 'tcp';
  /** The phase (`on_http_request`, …) or direction (`inbound`, `outbound`), for log lines. */
  where: string;
  rule: string;
  deps: PolicyDeps;
  clock: () => Date;
}

type Config = Record<string, unknown>;

const TEXT = 'text/plain; charset=utf-8';

/** A plain-text answer: `403 Forbidden`. */
export function plainAnswer(status: number, headers: HeaderField[] = [], detail?: string): Answer {
  const reason = STATUS_CODES[status] ?? '';
  return { status, headers: [['content-type', TEXT], ...headers], body: `${status} ${reason}${detail ? `: ${detail}` : ''}\n` };
}

/** A template of the action, whose compile problem is logged once, now. */
function template(ctx: ActionContext, type: string, text: string, groupReferences = false): Template {
  const compiled = compileTemplate(text, { env: ctx.env, groupReferences });
  if (compiled.problem)
    ctx.deps.log({ policy_rule: ctx.rule, phase: ctx.where, action: type, problem: compiled.problem }, 'traffic policy template does not compile');
  return compiled;
}

/** Header templates: names as configured, values rendered and checked again for CR, LF and NUL (a template could put them in). */
function headerTemplates(ctx: ActionContext, type: string, headers: unknown): (activation: Activation) => HeaderField[] {
  const list = Object.entries((headers ?? {}) as Record<string, string>).map(([name, value]) => [name, template(ctx, type, value)] as const);
  return (activation) =>
    list.map(([name, value]) => {
      const text = value.render(activation);
      if (!isToken(name)) throw new Error(`'${name}' is not a header name`);
      if (!isFieldValue(text)) throw new Error(`the value of header '${name}' holds a control character (CR, LF or NUL)`);
      return [name, text];
    });
}

const withoutHeaders = (headers: HeaderField[], names: readonly string[]) => {
  const drop = new Set(names.map((name) => name.toLowerCase()));
  return headers.filter(([name]) => !drop.has(name.toLowerCase()));
};

/** `headers` without the fields of `names` (any case), changed in place. */
function removeFields(headers: HeaderField[], names: readonly string[]): void {
  const kept = withoutHeaders(headers, names);
  headers.splice(0, headers.length, ...kept);
}

/** The headers of the request phase (the request) or of the response phase (the response). */
function target(state: RunState, ctx: ActionContext): { headers: HeaderField[] } {
  const message = ctx.phase === 'response' ? state.scope.res : state.scope.req;
  if (!message) throw new Error(`no ${ctx.phase} to change`);
  return message;
}

function log(ctx: ActionContext, config: Config | null): CompiledAction {
  const render = (value: unknown): ((a: Activation) => unknown) => {
    if (typeof value === 'string') {
      const t = template(ctx, 'log', value);
      return (a) => t.render(a);
    }
    if (Array.isArray(value)) {
      const items = value.map(render);
      return (a) => items.map((item) => item(a));
    }
    if (typeof value === 'object' && value !== null) {
      const entries = Object.entries(value).map(([k, v]) => [k, render(v)] as const);
      return (a) => Object.fromEntries(entries.map(([k, v]) => [k, v(a)]));
    }
    return () => value;
  };
  const metadata = render(config?.metadata ?? {});
  return {
    type: 'log',
    run(state) {
      const { conn, req, res } = state.scope;
      ctx.deps.log(
        {
          policy_rule: ctx.rule,
          phase: ctx.where,
          action: 'log',
          metadata: metadata(state.activation()),
          client_ip: conn.clientIp,
          endpoint_id: conn.endpoint.id,
          ...(req ? { method: req.method, url: fullUrl(req).toString() } : {}),
          ...(res ? { status: res.status } : {}),
        },
        'traffic policy log',
      );
      return undefined;
    },
  };
}

function deny(_ctx: ActionContext, config: Config | null): CompiledAction {
  const status = (config?.status_code as number | undefined) ?? 403;
  return { type: 'deny', run: () => ({ respond: plainAnswer(status) }) };
}

/** A set of CIDRs to match addresses against. */
const setOf = (cidrs: readonly string[]) => new IpMatcher(cidrs.map((cidr) => ({ cidr, action: 'allow' as const })));

function restrictIps(ctx: ActionContext, config: Config | null): CompiledAction {
  const enforce = (config?.enforce as boolean | undefined) ?? true;
  const own = { allow: (config?.allow as string[] | undefined) ?? [], deny: (config?.deny as string[] | undefined) ?? [] };
  const ids = (config?.ip_policies as string[] | undefined) ?? [];
  const ownSets = { allow: setOf(own.allow), deny: setOf(own.deny) };
  // The matchers of an IP policy, built once per object deps.ipPolicy returns.
  const matchers = new WeakMap<object, { allow: IpMatcher; deny: IpMatcher }>();
  return {
    type: 'restrict-ips',
    run(state) {
      const ip = state.scope.conn.clientIp;
      const sets = [{ ...ownSets, hasAllow: own.allow.length > 0 }];
      for (const id of ids) {
        const policy = ctx.deps.ipPolicy(id);
        if (!policy) return { error: `restrict-ips names IP policy ${id}, which the edge's configuration does not have` };
        let m = matchers.get(policy);
        if (!m) matchers.set(policy, (m = { allow: setOf(policy.allow), deny: setOf(policy.deny) }));
        sets.push({ ...m, hasAllow: policy.allow.length > 0 });
      }
      // Denied when a deny CIDR holds the address, or when there are allow CIDRs and none holds it.
      const anyAllow = sets.some((s) => s.hasAllow);
      const denied = sets.some((s) => s.deny.allows(ip)) || (anyAllow && !sets.some((s) => s.allow.allows(ip)));
      if (!denied) return undefined;
      if (!enforce) {
        ctx.deps.log(
          { policy_rule: ctx.rule, phase: ctx.where, action: 'restrict-ips', client_ip: ip, enforce: false },
          'traffic policy restrict-ips would refuse',
        );
        return undefined;
      }
      return { respond: plainAnswer(403) };
    },
  };
}

function customResponse(ctx: ActionContext, config: Config | null): CompiledAction {
  const status = config?.status_code as number;
  const content = template(ctx, 'custom-response', (config?.content as string | undefined) ?? '');
  const headers = headerTemplates(ctx, 'custom-response', config?.headers);
  const contentType = config?.content_type as string | undefined;
  return {
    type: 'custom-response',
    run(state) {
      const a = state.activation();
      let list = headers(a);
      if (contentType !== undefined) {
        if (!isFieldValue(contentType)) return { error: 'content_type holds a control character (CR, LF or NUL)' };
        list = [...withoutHeaders(list, ['content-type']), ['content-type', contentType]];
      }
      const body = content.render(a);
      if (body !== '' && !list.some(([name]) => name.toLowerCase() === 'content-type')) list.push(['content-type', TEXT]);
      return { respond: { status, headers: list, body } };
    },
  };
}

function addHeaders(ctx: ActionContext, config: Config | null): CompiledAction {
  const headers = headerTemplates(ctx, 'add-headers', config?.headers);
  return {
    type: 'add-headers',
    run(state) {
      const added = headers(state.activation());
      target(state, ctx).headers.push(...added);
      state.changed();
      return undefined;
    },
  };
}

function removeHeaders(ctx: ActionContext, config: Config | null): CompiledAction {
  const names = (config?.headers as string[] | undefined) ?? [];
  return {
    type: 'remove-headers',
    run(state) {
      removeFields(target(state, ctx).headers, names);
      state.changed();
      return undefined;
    },
  };
}

function redirect(ctx: ActionContext, config: Config | null): CompiledAction {
  const from = config?.from as string | undefined;
  const to = template(ctx, 'redirect', config?.to as string, from !== undefined);
  const status = (config?.status_code as number | undefined) ?? 302;
  const headers = headerTemplates(ctx, 'redirect', config?.headers);
  return {
    type: 'redirect',
    run(state) {
      const req = state.scope.req!;
      const a = state.activation();
      const rendered = to.render(a);
      const location = from === undefined ? rendered : compileRe2(from).replace(fullUrl(req).toString(), rendered);
      // `from` does not match: no redirect, the next action runs.
      if (location === undefined) return undefined;
      if (!isFieldValue(location)) return { error: 'the redirect location holds a control character (CR, LF or NUL)' };
      return {
        respond: { status, headers: [...headers(a), ['location', location], ['content-type', TEXT]], body: `${status} ${STATUS_CODES[status] ?? ''}\n` },
      };
    },
  };
}

/**
 * url-rewrite: `from` runs on the full URL (`scheme://host/path?query`), and the first match is
 * replaced by `to` (its group references expanded). Of the result, only the path and query are
 * taken (resolved against the request's URL, so `to` may also be a path): the request's target
 * becomes them; its scheme and host stay. `format`, which ngrok's old config had, changes nothing.
 */
function urlRewrite(ctx: ActionContext, config: Config | null): CompiledAction {
  const from = config?.from as string;
  const to = template(ctx, 'url-rewrite', config?.to as string, true);
  return {
    type: 'url-rewrite',
    run(state) {
      const req = state.scope.req!;
      const current = fullUrl(req).toString();
      const rewritten = compileRe2(from).replace(current, to.render(state.activation()));
      if (rewritten === undefined) return undefined;
      let url: URL;
      try {
        url = new URL(rewritten, current);
      } catch {
        return { error: `url-rewrite made '${rewritten.slice(0, 200)}', which is not a URL` };
      }
      req.url = `${url.pathname}${url.search}`;
      state.changed();
      return undefined;
    },
  };
}

const COMPRESSIONS = ['gzip', 'deflate', 'br', 'compress'];

function compressResponse(_ctx: ActionContext, config: Config | null): CompiledAction {
  const algorithms = (config?.algorithms as string[] | undefined) ?? [];
  const chosen = algorithms.length > 0 ? [...algorithms] : COMPRESSIONS;
  return {
    type: 'compress-response',
    run(state) {
      state.compress = chosen;
      return undefined;
    },
  };
}

function rateLimit(ctx: ActionContext, config: Config | null): CompiledAction {
  const capacity = config?.capacity as number;
  const windowMs = durationMs(config?.rate as string);
  const keys: Program[] = ((config?.bucket_key as string[] | undefined) ?? []).map((expression) => compileProgram(expression, ctx.env));
  const window = new SlidingWindow(capacity, windowMs);
  return {
    type: 'rate-limit',
    run(state) {
      const a = state.activation();
      let key: string;
      try {
        key = keys.length === 0 ? state.scope.conn.clientIp : keys.map((program) => celText(program(a))).join('\u0000');
      } catch (error) {
        return { error: `rate-limit's bucket_key failed: ${String((error as { summary?: string }).summary ?? (error as Error).message).split('\n')[0]}` };
      }
      const taken = window.take(key, ctx.clock().getTime());
      if (taken.allowed) return undefined;
      const seconds = Math.max(1, Math.ceil(taken.retryAfterMs / 1000));
      return { respond: plainAnswer(429, [['retry-after', String(seconds)]]) };
    },
  };
}

function jwtValidation(ctx: ActionContext, config: Config | null): CompiledAction & { validator: JwtValidator } {
  const validator = new JwtValidator(config as unknown as JwtConfig, ctx.deps.fetch ?? fetch, ctx.clock);
  return {
    type: 'jwt-validation',
    validator,
    async run(state) {
      const outcome = await validator.validate(state.scope.req!);
      if (outcome.ok) return undefined;
      if ('error' in outcome) return { error: outcome.error };
      return { respond: { status: outcome.status, headers: outcome.headers, body: outcome.body } };
    },
  };
}

/** forward-internal: the request goes to the account's internal endpoint at `url` (the ingress finds it); the phase ends here. */
function forwardInternal(_ctx: ActionContext, config: Config | null): CompiledAction {
  const url = new URL(String(config?.url ?? ''));
  // Kept as the registry keys internal endpoints: scheme and lower-case name, no default port.
  const target = `${url.protocol}//${url.hostname.toLowerCase()}${url.port === '' ? '' : `:${url.port}`}`;
  return { type: 'forward-internal', run: () => ({ forward: target }) };
}

/** close-connection (on_tcp_connect): the connection is closed, as deny closes it on a TCP edge. */
function closeConnection(): CompiledAction {
  return { type: 'close-connection', run: () => ({ respond: plainAnswer(403) }) };
}

const ACTIONS: Record<string, (ctx: ActionContext, config: Config | null) => CompiledAction> = {
  log,
  deny,
  'close-connection': closeConnection,
  'restrict-ips': restrictIps,
  'custom-response': customResponse,
  'add-headers': addHeaders,
  'remove-headers': removeHeaders,
  redirect,
  'url-rewrite': urlRewrite,
  'compress-response': compressResponse,
  'rate-limit': rateLimit,
  'jwt-validation': jwtValidation,
  'forward-internal': forwardInternal,
};

export function compileAction(type: string, config: Config | null, ctx: ActionContext): CompiledAction {
  const compile = ACTIONS[type];
  if (!compile) throw new Error(`traffic policy: no action '${type}'`);
  return compile(ctx, config);
}
