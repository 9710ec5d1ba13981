// The rules of a policy, shared by its two forms (the policy module's directions and the phases
// of a traffic_policy document): each rule's name, its CEL expressions (all must hold for its
// actions to run) and its actions, each of a type allowed where the rule is and with a config
// that fits it (action-configs.ts). The policy's budgets of CEL characters and config values are
// drawn on rule by rule.
import { errors, type ApiError } from '../../core/errors.js';
import { checkExpression, type CelEnvName } from './cel.js';
import type { CelScope } from './config-check.js';
import { LIMITS } from './limits.js';
import type { ProtocolSpec } from './protocols.js';
import { clip, isObject, jsonType, unknownKey } from './values.js';
import { trafficPolicyErrors } from './traffic-policy.errors.js';

export interface EndpointRule {
  name: string;
  expressions: string[];
  actions: { type: string; config: Record<string, unknown> | null }[];
}

/** How a shape error is reported: a body field (policy module) or a place in the document. */
export type ShapeError = (path: string, problem: string) => ApiError;

export const fieldError: ShapeError = (path, problem) => errors.invalidField({ field: `policy.${path}`, problem });
export const documentError: ShapeError = (path, problem) => trafficPolicyErrors.invalidPolicyDocument({ problem: `at ${path} ${problem}` });

export interface RulesContext {
  /** `inbound`, `outbound` or the phase: how messages name the list. */
  where: string;
  env: CelEnvName;
  /** The action types allowed here, and the protocol (every type it knows, and their configs). */
  allowed: readonly string[];
  protocol: ProtocolSpec;
  /** The policy module requires rule names; a document does not. */
  nameRequired: boolean;
  shapeError: ShapeError;
  /** What the whole policy may still check: characters of CEL, values of configs. */
  budget: { cel: number; values: number };
}

/** A fresh budget for one policy. */
export const policyBudget = () => ({ cel: LIMITS.expressionsLength, values: LIMITS.configValues });

/** The values of a config (keys, scalars, arrays and objects), counted to just past `max`. */
function countValues(value: unknown, max: number, count = 0): number {
  count++;
  if (Array.isArray(value)) {
    for (const item of value) if ((count = countValues(item, max, count)) > max) break;
  } else if (isObject(value)) {
    for (const key of Object.keys(value)) if ((count = countValues(value[key], max, count + 1)) > max) break;
  }
  return count;
}

const RULE_KEYS = ['name', 'expressions', 'actions'] as const;
const ACTION_KEYS = ['type', 'config'] as const;

export function checkRules(list: unknown[], ctx: RulesContext): EndpointRule[] {
  if (list.length > LIMITS.rulesPerPhase) throw trafficPolicyErrors.tooManyRules({ where: ctx.where, count: list.length, max: LIMITS.rulesPerPhase });
  return list.map((rule, index) => checkRule(rule, index, ctx));
}

/** A value that is a list, or absent (null or undefined: an empty list). */
export function listAt(value: unknown, path: string, what: string, shapeError: ShapeError): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw shapeError(path, `must be a list of ${what}; got ${jsonType(value)}`);
  return value;
}

/** A rule, and the names messages give it: its path in the list, its name or number. */
interface RuleScope {
  ctx: RulesContext;
  path: string;
  label: string;
  cel: CelScope;
}

function checkRule(rule: unknown, index: number, ctx: RulesContext): EndpointRule {
  const { where, shapeError } = ctx;
  const path = `${where}[${index}]`;
  if (!isObject(rule)) throw shapeError(path, `must be an object (a rule); got ${jsonType(rule)}`);
  const extra = unknownKey(rule, RULE_KEYS);
  if (extra !== undefined) throw shapeError(`${path}.${clip(extra, 40)}`, `is not a field of a rule; the fields are ${RULE_KEYS.join(', ')}`);

  if (rule.name !== undefined && rule.name !== null && typeof rule.name !== 'string')
    throw shapeError(`${path}.name`, `must be a string; got ${jsonType(rule.name)}`);
  const name = typeof rule.name === 'string' ? rule.name : '';
  if (ctx.nameRequired && name.trim() === '') throw trafficPolicyErrors.ruleWithoutName({ where, index });
  const label = clip(name.trim() === '' ? `#${index + 1}` : name);

  const expressions = listAt(rule.expressions, `${path}.expressions`, 'CEL expressions', shapeError);
  const actions = listAt(rule.actions, `${path}.actions`, 'actions', shapeError);
  if (expressions.length > LIMITS.expressionsPerRule)
    throw trafficPolicyErrors.tooManyExpressions({ where, rule: label, what: 'expressions', count: expressions.length, max: LIMITS.expressionsPerRule });
  if (actions.length > LIMITS.actionsPerRule)
    throw trafficPolicyErrors.tooManyExpressions({ where, rule: label, what: 'actions', count: actions.length, max: LIMITS.actionsPerRule });
  if (actions.length === 0) throw trafficPolicyErrors.ruleWithoutActions({ where, rule: label });

  const cel: CelScope = {
    env: ctx.env,
    spend(expression) {
      ctx.budget.cel -= expression.length;
      if (ctx.budget.cel < 0) throw trafficPolicyErrors.policyExpressionsTooLong({ where, rule: label, max: LIMITS.expressionsLength });
    },
  };
  const scope: RuleScope = { ctx, path, label, cel };
  for (const [i, expression] of expressions.entries()) checkRuleExpression(expression, i, scope);
  return { name, expressions: expressions as string[], actions: actions.map((action, i) => checkAction(action, i, scope)) };
}

function checkRuleExpression(expression: unknown, index: number, { ctx, path, label, cel }: RuleScope): void {
  const { where } = ctx;
  if (typeof expression !== 'string') throw ctx.shapeError(`${path}.expressions[${index}]`, `must be a string; got ${jsonType(expression)}`);
  if (expression.length > LIMITS.expressionLength) {
    const length = Array.from(expression).length;
    if (length > LIMITS.expressionLength) throw trafficPolicyErrors.expressionTooLong({ where, rule: label, length, max: LIMITS.expressionLength });
  }
  cel.spend(expression);
  const checked = checkExpression(expression, ctx.env);
  if (!checked.ok)
    throw trafficPolicyErrors.invalidExpression({
      where,
      rule: label,
      expression: clip(expression.replace(/\s*\n\s*/g, ' ')),
      position: checked.position,
      reason: checked.reason,
    });
}

function checkAction(action: unknown, index: number, { ctx, path, label, cel }: RuleScope): EndpointRule['actions'][number] {
  const { where, shapeError } = ctx;
  const at = `${path}.actions[${index}]`;
  if (!isObject(action)) throw shapeError(at, `must be an object (an action); got ${jsonType(action)}`);
  const extraKey = unknownKey(action, ACTION_KEYS);
  if (extraKey !== undefined) throw shapeError(`${at}.${clip(extraKey, 40)}`, `is not a field of an action; the fields are ${ACTION_KEYS.join(', ')}`);
  if (typeof action.type !== 'string')
    throw shapeError(`${at}.type`, action.type === undefined ? 'is required' : `must be a string; got ${jsonType(action.type)}`);
  const type = action.type;
  const known = ctx.protocol.actions;
  if (!known.includes(type)) throw trafficPolicyErrors.unknownActionType({ where, rule: label, type: clip(type, 40), valid: known });
  if (!ctx.allowed.includes(type)) throw trafficPolicyErrors.actionNotAllowed({ where, rule: label, type, valid: ctx.allowed });
  const config = action.config ?? null;
  if (config !== null && !isObject(config)) throw shapeError(`${at}.config`, `must be an object; got ${jsonType(config)}`);
  if (config !== null) ctx.budget.values -= countValues(config, ctx.budget.values);
  if (ctx.budget.values < 0) throw trafficPolicyErrors.policyTooManyValues({ where, rule: label, max: LIMITS.configValues });
  const problem = ctx.protocol.checks[type]?.(config, cel);
  if (problem) throw trafficPolicyErrors.invalidActionConfig({ where, rule: label, type, problem });
  return { type, config };
}
