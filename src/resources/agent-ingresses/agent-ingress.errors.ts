// The errors of agent ingresses. Those of their domain names, and of names that overlap other
// accounts' ingresses, are thrown by the rules they share with reserved domains
// (src/resources/reserved-domains/reserved-domain.errors.ts).
import { entry, throwersOf } from '../../core/errors.js';

export const agentIngressCatalogue = {
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
} as const;

/** Error factories: `throw agentIngressErrors.ingressUnderServiceDomain(…)`. */
export const agentIngressErrors = throwersOf(agentIngressCatalogue);
