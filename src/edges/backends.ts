// Backends resolved at connection time: what a connection or request is sent to, in the order to
// try. A tunnel group is its online labeled tunnels (taking turns); a static address a direct
// connection; an HTTP response an answer of its own; a weighted backend one of its backends,
// drawn by weight (weight 0 is never drawn); a failover backend its backends in order, the next
// tried when one cannot be reached. The API keeps backends free of cycles; nesting is bounded here
// all the same.
import type { IngressDirectory, TunnelTarget } from '../core/live-agents.js';
import type { Backend } from './edge-config.js';

export type Candidate =
  | { kind: 'tunnel'; backendId: string; target: TunnelTarget }
  | { kind: 'static'; backendId: string; host: string; port: number; tls: boolean }
  | { kind: 'response'; backendId: string; status: number; headers: Record<string, string>; body: string }
  /** A tunnel group with no tunnel online: unreachable, the next candidate is tried. */
  | { kind: 'offline'; backendId: string; labels: Record<string, string> };

/** Nesting deeper than this resolves to nothing (the API allows no cycle; this is a bound, not a rule). */
const MAX_DEPTH = 16;

export interface BackendResolver {
  backends: ReadonlyMap<string, Backend>;
  directory: Pick<IngressDirectory, 'labeled'>;
  accountId: string;
  /** A number in [0, 1) (Math.random by default; tests make it fixed). */
  random?: () => number;
}

/** The candidates of a backend, in the order to try them; empty when it names nothing (deleted meanwhile). */
export function candidates(resolver: BackendResolver, backendId: string, depth = 0): Candidate[] {
  const backend = resolver.backends.get(backendId);
  if (!backend || depth > MAX_DEPTH) return [];
  switch (backend.kind) {
    case 'tunnel_group': {
      const target = resolver.directory.labeled(resolver.accountId, backend.labels);
      return [target ? { kind: 'tunnel', backendId, target } : { kind: 'offline', backendId, labels: backend.labels }];
    }
    case 'static_address':
      return [{ kind: 'static', backendId, host: backend.host, port: backend.port, tls: backend.tls }];
    case 'http_response':
      return [{ kind: 'response', backendId, status: backend.status, headers: backend.headers, body: backend.body }];
    case 'failover':
      return backend.backends.flatMap((id) => candidates(resolver, id, depth + 1));
    case 'agent_endpoint':
      return [{ kind: 'tunnel', backendId, target: backend.target }];
    case 'weighted': {
      const chosen = drawByWeight(backend.backends, resolver.random ?? Math.random);
      return chosen ? candidates(resolver, chosen, depth + 1) : [];
    }
  }
}

/** One id drawn with probability weight / total; none when every weight is 0. */
export function drawByWeight(choices: readonly { id: string; weight: number }[], random: () => number): string | undefined {
  const total = choices.reduce((sum, c) => sum + Math.max(0, c.weight), 0);
  if (total <= 0) return undefined;
  let point = random() * total;
  for (const choice of choices) {
    if (choice.weight <= 0) continue;
    point -= choice.weight;
    if (point < 0) return choice.id;
  }
  // Rounding at the very top: the last one with a weight.
  return [...choices].reverse().find((c) => c.weight > 0)?.id;
}
