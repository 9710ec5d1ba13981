// Enforcement of an account's `api` IP restriction on this API. The restriction's rules are
// compiled into an IpMatcher once per change and kept in memory, so a request pays no database
// round trip. Each account's entry is re-validated at most once a second by reading the
// account's IP revision (one indexed read), so a change made on another instance takes effect
// here within 2 s; a change made here drops the entry at once.
import { IpMatcher, type Rule } from '../../lib/ip/cidr.js';
import { toBool } from '../../db/schema.js';
import { read, type Scope, type Store } from '../../db/store.js';
import { readIpRevision } from '../ip-policies/ip-revision.js';

const REVALIDATE_MS = 1000;
const MAX_ACCOUNTS = 10_000;

export type Verdict = { allowed: true } | { allowed: false; enforced: boolean; restrictionId: string };

interface Compiled {
  revision: number;
  checkedAt: number;
  restriction: { id: string; enforced: boolean; matcher: IpMatcher } | null;
}

const ALLOWED: Verdict = { allowed: true };

export class ApiIpGuard {
  private readonly compiled = new Map<string, Compiled>();

  constructor(private readonly store: Store, private readonly now: () => number = Date.now) {}

  /** Forget an account's compiled restriction (after a local change). */
  invalidate(accountId: string): void {
    this.compiled.delete(accountId);
  }

  /** The verdict for a caller's address: synchronous while the compiled entry is fresh. */
  check(scope: Scope, ip: string): Verdict | Promise<Verdict> {
    const entry = this.compiled.get(scope.accountId);
    if (entry && this.now() - entry.checkedAt < REVALIDATE_MS) return verdict(entry, ip);
    return this.refresh(scope, entry).then((fresh) => verdict(fresh, ip));
  }

  private async refresh(scope: Scope, entry: Compiled | undefined): Promise<Compiled> {
    const fresh = await read(async () => {
      const revision = await readIpRevision(this.store.db, scope);
      if (entry && entry.revision === revision) return { ...entry, checkedAt: this.now() };
      return { revision, checkedAt: this.now(), restriction: await this.load(scope) };
    });
    if (this.compiled.size >= MAX_ACCOUNTS) this.compiled.clear();
    this.compiled.set(scope.accountId, fresh);
    return fresh;
  }

  private async load(scope: Scope): Promise<Compiled['restriction']> {
    const restriction = await this.store.db
      .selectFrom('ip_restrictions')
      .select(['id', 'enforced'])
      .where('account_id', '=', scope.accountId)
      .where('type', '=', 'api')
      .executeTakeFirst();
    if (!restriction) return null;
    const rules: Rule[] = await this.store.db
      .selectFrom('ip_policy_rules as r')
      .innerJoin('ip_restriction_policies as p', 'p.ip_policy_id', 'r.ip_policy_id')
      .select(['r.cidr', 'r.action'])
      .where('p.ip_restriction_id', '=', restriction.id)
      .where('r.account_id', '=', scope.accountId)
      .execute();
    return { id: restriction.id, enforced: toBool(restriction.enforced), matcher: new IpMatcher(rules) };
  }
}

function verdict(entry: Compiled, ip: string): Verdict {
  const r = entry.restriction;
  if (!r || r.matcher.allows(ip)) return ALLOWED;
  return { allowed: false, enforced: r.enforced, restrictionId: r.id };
}
