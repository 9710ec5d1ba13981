// A policy module compiled for the edge: every expression, template, regular expression and
// action compiled once, here, and run on each connection, request or response.
//
// Rulings (docs/traffic-policy.md, "Evaluation at the edge", says the same to users):
// - The rules of a phase run in document order. A rule applies when all its expressions are true
//   (evaluated in order, stopping at the first false; none: it always applies); its actions then
//   run in order. An action that answers (deny, custom-response, redirect, rate-limit over its
//   limit, jwt-validation refusing, restrict-ips refusing) ends the phase: no later action or rule
//   runs. The others (add-headers, remove-headers, url-rewrite, log, compress-response, and a
//   redirect or url-rewrite whose `from` does not match) let the next one run.
// - Later rules see the request (and response) as earlier actions changed it: `req.url` after a
//   url-rewrite, `req.headers` after add-headers.
// - An expression that fails to evaluate (a missing key such as `req.headers['x-missing'][0]`, a
//   pattern RE2 refuses at run time, an int overflow, …), a template or bucket key that fails, a
//   header value that a template filled with CR or LF, an IP policy missing from the
//   configuration: the phase ends with an error decision naming the rule and the problem; the
//   ingress answers 500 (TCP: closes) and logs it. Nothing is skipped silently.
// - The policy module: `inbound` is the request phase (TCP: the connection), `outbound` the
//   response phase, in the environments with the old spellings. On TCP, `outbound` (only log
//   actions) runs when the connection ends.
import type { CelEnvName } from '../../edge-config/traffic-policy/cel.js';
import { parsePolicyDocument } from '../../edge-config/traffic-policy/document.js';
import { checkEndpointPolicy, checkTrafficPolicyDocument, type EndpointRule } from '../../edge-config/traffic-policy/traffic-policy.js';
import { compileAction, RunState, type ActionContext, type CompiledAction, type Stop } from './actions.js';
import { activationOf, compileProgram, reasonOf, type Program, type Scope } from './cel-runtime.js';
import type {
  ConnectDecision,
  HttpPolicy,
  PolicyConnection,
  PolicyDeps,
  PolicyError,
  PolicyModule,
  PolicyRequest,
  PolicyResponse,
  Refusal,
  ResponseDecision,
  TcpPolicy,
} from './types.js';

interface CompiledRule {
  label: string;
  conditions: { text: string; program: Program }[];
  actions: CompiledAction[];
}

interface CompiledPhase {
  where: string;
  aliases: boolean;
  rules: CompiledRule[];
}

type PhaseResult =
  { kind: 'continue'; compress?: string[]; forwardInternal?: { url: string; rule: string } } | { kind: 'respond'; response: Refusal } | PolicyError;

const clip = (text: string, max = 80) => (text.length > max ? `${text.slice(0, max - 3)}...` : text);

function compilePhase(
  rules: readonly EndpointRule[],
  place: { where: string; env: CelEnvName; phase: ActionContext['phase'] },
  deps: PolicyDeps,
  clock: () => Date,
): CompiledPhase {
  return {
    where: place.where,
    aliases: place.env.startsWith('policy_'),
    rules: rules.map((rule, index) => {
      const label = rule.name.trim() === '' ? `#${index + 1}` : rule.name;
      const ctx: ActionContext = { env: place.env, phase: place.phase, where: place.where, rule: label, deps, clock };
      return {
        label,
        conditions: rule.expressions.map((text) => ({ text, program: compileProgram(text, place.env) })),
        actions: rule.actions.map((action) => compileAction(action.type, action.config, ctx)),
      };
    }),
  };
}

/** Whether the rule applies; or the error of the first expression that failed. */
function applies(rule: CompiledRule, state: RunState): boolean | PolicyError {
  for (const condition of rule.conditions) {
    let value: unknown;
    try {
      value = condition.program(state.activation());
    } catch (error) {
      return { kind: 'error', rule: rule.label, problem: `the expression '${clip(condition.text.replace(/\s+/g, ' '))}' failed: ${reasonOf(error)}` };
    }
    if (value !== true) return false;
  }
  return true;
}

/** What an action's stop makes of the phase, or undefined to go on. */
function settle(stop: Stop, rule: CompiledRule, action: CompiledAction): PhaseResult | undefined {
  if (stop === undefined) return undefined;
  if ('error' in stop) return { kind: 'error', rule: rule.label, problem: `${action.type}: ${stop.error}` };
  if ('forward' in stop) return { kind: 'continue', forwardInternal: { url: stop.forward, rule: rule.label } };
  return { kind: 'respond', response: { ...stop.respond, rule: rule.label, action: action.type } };
}

const failed = (rule: CompiledRule, action: CompiledAction, error: unknown): PhaseResult => ({
  kind: 'error',
  rule: rule.label,
  problem: `${action.type}: ${reasonOf(error)}`,
});

/**
 * The phase from rule `from` (at its action `fromAction`, its expressions already true when that
 * is past 0): synchronous until an action answers with a promise (jwt-validation), then the rest
 * follows it.
 */
function runPhase(phase: CompiledPhase, state: RunState, from = 0, fromAction = 0): PhaseResult | Promise<PhaseResult> {
  for (let r = from; r < phase.rules.length; r++) {
    const rule = phase.rules[r]!;
    const start = r === from ? fromAction : 0;
    if (start === 0) {
      const ok = applies(rule, state);
      if (ok === false) continue;
      if (ok !== true) return ok;
    }
    for (let i = start; i < rule.actions.length; i++) {
      const action = rule.actions[i]!;
      let stop: Stop | Promise<Stop>;
      try {
        stop = action.run(state);
      } catch (error) {
        return failed(rule, action, error);
      }
      if (stop instanceof Promise)
        return stop.then(
          (value) => settle(value, rule, action) ?? runPhase(phase, state, r, i + 1),
          (error: unknown) => failed(rule, action, error),
        );
      const result = settle(stop, rule, action);
      if (result) return result;
    }
  }
  return state.compress ? { kind: 'continue', compress: state.compress } : { kind: 'continue' };
}

function stateFor(phase: CompiledPhase, scope: Omit<Scope, 'aliases'>): RunState {
  return new RunState({ ...scope, aliases: phase.aliases }, activationOf);
}

/** The phases of a module, as lists of rules, or undefined when it is disabled; throws when the module is not one the control plane accepts. */
function phasesOf(module: PolicyModule, protocol: 'http' | 'tcp'): Record<string, EndpointRule[]> | undefined {
  if (module.kind === 'policy') {
    if (!module.value.enabled) return undefined;
    const policy = checkEndpointPolicy(module.value, protocol);
    return { inbound: policy.inbound, outbound: policy.outbound ?? [] };
  }
  if (!module.enabled) return undefined;
  checkTrafficPolicyDocument(module.value, protocol);
  const doc = parsePolicyDocument(module.value) as Record<string, unknown[]>;
  const phases: Record<string, EndpointRule[]> = {};
  for (const [phase, rules] of Object.entries(doc)) {
    phases[phase] = (rules as Record<string, unknown>[]).map((rule) => ({
      name: typeof rule.name === 'string' ? rule.name : '',
      expressions: (rule.expressions as string[] | null | undefined) ?? [],
      actions: (rule.actions as { type: string; config?: Record<string, unknown> | null }[]).map((action) => ({
        type: action.type,
        config: action.config ?? null,
      })),
    }));
  }
  return phases;
}

/**
 * The HTTP policy of a module (an HTTPS edge route's `policy` or `traffic_policy`): undefined when
 * it is disabled or has no rules. Throws when the module is not one checkEndpointPolicy /
 * checkTrafficPolicyDocument accepts for HTTP (the control plane stores no other).
 */
export function compileHttpPolicy(module: PolicyModule, deps: PolicyDeps): HttpPolicy | undefined {
  const phases = phasesOf(module, 'http');
  if (!phases) return undefined;
  const clock = () => deps.now?.() ?? new Date();
  const old = module.kind === 'policy';
  const requestRules = (old ? phases.inbound : phases.on_http_request) ?? [];
  const responseRules = (old ? phases.outbound : phases.on_http_response) ?? [];
  if (requestRules.length === 0 && responseRules.length === 0) return undefined;
  const request = compilePhase(
    requestRules,
    { where: old ? 'inbound' : 'on_http_request', env: old ? 'policy_http_request' : 'http_request', phase: 'request' },
    deps,
    clock,
  );
  const response = compilePhase(
    responseRules,
    { where: old ? 'outbound' : 'on_http_response', env: old ? 'policy_http_response' : 'http_response', phase: 'response' },
    deps,
    clock,
  );
  const needsRequestBody = request.rules.some((rule) =>
    rule.actions.some((action) => (action as { validator?: { needsBody: boolean } }).validator?.needsBody === true),
  );

  return {
    needsRequestBody,
    async onRequest(conn: PolicyConnection, req: PolicyRequest) {
      if (request.rules.length === 0) return { kind: 'continue' };
      const result = await runPhase(request, stateFor(request, { conn, req, now: clock() }));
      // compress-response is not an action of the request phase.
      if (result.kind !== 'continue') return result;
      return result.forwardInternal ? { kind: 'continue', forwardInternal: result.forwardInternal } : { kind: 'continue' };
    },
    onResponse(conn: PolicyConnection, req: PolicyRequest, res: PolicyResponse): ResponseDecision {
      if (response.rules.length === 0) return { kind: 'continue' };
      const result = runPhase(response, stateFor(response, { conn, req, res, now: clock() }));
      if (result instanceof Promise) throw new Error('traffic policy: an action of the response phase is asynchronous');
      return result;
    },
  };
}

/** The TCP policy of a module (a TCP edge's): undefined when it is disabled or has no rules to run on connect. Throws as compileHttpPolicy does. */
export function compileTcpPolicy(module: PolicyModule, deps: PolicyDeps): TcpPolicy | undefined {
  const phases = phasesOf(module, 'tcp');
  if (!phases) return undefined;
  const clock = () => deps.now?.() ?? new Date();
  const old = module.kind === 'policy';
  const rules = (old ? phases.inbound : phases.on_tcp_connect) ?? [];
  // The policy module's outbound on TCP: its rules (log actions only) run when the connection ends.
  const closing = old ? (phases.outbound ?? []) : [];
  if (rules.length === 0 && closing.length === 0) return undefined;
  const connect = compilePhase(rules, { where: old ? 'inbound' : 'on_tcp_connect', env: 'tcp', phase: 'tcp' }, deps, clock);
  const close = compilePhase(closing, { where: 'outbound', env: 'tcp', phase: 'tcp' }, deps, clock);
  const run = (phase: typeof connect, conn: PolicyConnection): ConnectDecision => {
    if (phase.rules.length === 0) return { kind: 'allow' };
    const result = runPhase(phase, stateFor(phase, { conn, now: clock() }));
    if (result instanceof Promise) throw new Error('traffic policy: an action of the TCP phase is asynchronous');
    if (result.kind === 'continue') return result.forwardInternal ? { kind: 'allow', forwardInternal: result.forwardInternal } : { kind: 'allow' };
    if (result.kind === 'respond') return { kind: 'deny', rule: result.response.rule, action: result.response.action };
    return result;
  };
  return {
    onConnect: (conn) => run(connect, conn),
    onClose: (conn) => void run(close, conn),
  };
}
