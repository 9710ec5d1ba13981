// The errors of traffic policies (the policy and traffic_policy modules), as traffic-policy.ts
// reads them: the document, its rules, their CEL expressions and actions, and its limits.
import { commaList, entry, throwersOf } from '../../core/errors.js';

export const trafficPolicyCatalogue = {
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
    (a) => `${a.where}, rule '${a.rule}': action type '${a.type}' does not exist; the types here are ${commaList(a.valid)}.`,
  ),
  actionNotAllowed: entry<{ where: string; rule: string; type: string; valid: readonly string[] }>(
    2202,
    400,
    'An action type exists but is not allowed in this direction or phase.',
    (a) => `${a.where}, rule '${a.rule}': action '${a.type}' is not allowed here; the actions allowed here are ${commaList(a.valid)}.`,
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
    (a) => `traffic policy phase '${a.phase}' does not exist on this resource; the phases here are ${commaList(a.valid)}.`,
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
} as const;

/** Error factories: `throw trafficPolicyErrors.invalidExpression(…)`. */
export const trafficPolicyErrors = throwersOf(trafficPolicyCatalogue);
