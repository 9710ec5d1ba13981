// The traffic policies of edges and routes, compiled once and kept while they are the same: a
// reload of an account's configuration (a new snapshot) does not recompile a policy that did not
// change, so its rate limits keep counting. A policy the evaluator cannot compile (a damaged row:
// the API stores only policies it checked) is `invalid`, and what it guards is refused.
import type { Logger } from 'pino';
import type { PolicyModule } from './edge-config.js';
import type { EdgeDirectory } from './edge-directory.js';
import { compileHttpPolicy, compileTcpPolicy, type HttpPolicy, type PolicyDeps, type TcpPolicy } from './traffic-policy/index.js';

/** Compiled policies kept at most; the least recently used go first. */
const MAX_COMPILED = 10_000;

type Compiled<P> = P | undefined | 'invalid';

export class CompiledPolicies {
  private readonly compiled = new Map<string, Compiled<HttpPolicy | TcpPolicy>>();

  constructor(
    private readonly edges: EdgeDirectory,
    private readonly log: Logger,
  ) {}

  /** The HTTP policy of a route (undefined: none to run). */
  http(accountId: string, ownerId: string, module: PolicyModule | undefined): Compiled<HttpPolicy> {
    return this.of('http', accountId, ownerId, module, compileHttpPolicy) as Compiled<HttpPolicy>;
  }

  /** The connect-time policy of a TCP or TLS edge (undefined: none to run). */
  tcp(accountId: string, ownerId: string, module: PolicyModule | undefined): Compiled<TcpPolicy> {
    return this.of('tcp', accountId, ownerId, module, compileTcpPolicy) as Compiled<TcpPolicy>;
  }

  private of(
    protocol: 'http' | 'tcp',
    accountId: string,
    ownerId: string,
    module: PolicyModule | undefined,
    compile: (module: PolicyModule, deps: PolicyDeps) => HttpPolicy | TcpPolicy | undefined,
  ): Compiled<HttpPolicy | TcpPolicy> {
    if (!module) return undefined;
    const key = `${protocol}\n${ownerId}\n${JSON.stringify(module)}`;
    if (this.compiled.has(key)) {
      const hit = this.compiled.get(key);
      this.compiled.delete(key);
      this.compiled.set(key, hit);
      return hit;
    }
    let made: Compiled<HttpPolicy | TcpPolicy>;
    try {
      made = compile(module, this.deps(accountId, ownerId));
    } catch (err) {
      this.log.error({ err, owner_id: ownerId, account_id: accountId }, 'edge: a stored traffic policy could not be compiled; what it guards is refused');
      made = 'invalid';
    }
    this.compiled.set(key, made);
    while (this.compiled.size > MAX_COMPILED) this.compiled.delete(this.compiled.keys().next().value!);
    return made;
  }

  private deps(accountId: string, ownerId: string): PolicyDeps {
    const log = this.log.child({ account_id: accountId, owner_id: ownerId });
    return {
      // The account's IP policies as the directory holds them now: a changed rule is in force at once.
      ipPolicy: (id) => this.edges.account(accountId)?.ipPolicies.get(id),
      log: (line, msg) => log.info(line, msg),
    };
  }
}
