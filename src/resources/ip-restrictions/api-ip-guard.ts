// Enforcement of an account's `api` IP restriction on this API. The restriction's rules are
// compiled into an IpMatcher once per change and kept in memory, so a request pays no database
// round trip. Each account's entry is re-validated at most once a second by reading the
// account's IP revision (one indexed read), so a change made on another instance takes effect
// here within 2 s; a change made here drops the entry at once.
import type { IpScreen, Scope, Verdict } from '../../core/context.js';
import { IpMatcher } from '../../lib/ip/cidr.js';
import { toBool } from '../../db/schema.js';
import { scopedRead, type ScopedDb } from '../../db/scoped.js';
import type { Store } from '../../db/store.js';
import { readIpRevision } from '../ip-policies/ip-revision.js';

const REVALIDATE_MS = 1000;
const MAX_ACCOUNTS = 10_000;

interface Compiled {
  revision: number;
  checkedAt: number;
  restriction: { id: string; enforced: boolean; matcher: IpMatcher } | null;
}

const ALLOWED: Verdict = { allowed: true };

export class ApiIpGuard implements IpScreen {
  private readonly compiled = new Map<string, Compiled>();

  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {}

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
    const fresh = await scopedRead(this.store, scope, async (db) => {
      const revision = await readIpRevision(db);
      if (entry && entry.revision === revision) return { ...entry, checkedAt: this.now() };
      return { revision, checkedAt: this.now(), restriction: await load(db) };
    });
    if (this.compiled.size >= MAX_ACCOUNTS) this.compiled.clear();
    this.compiled.set(scope.accountId, fresh);
    return fresh;
  }
}

/** The account's `api` restriction compiled into a matcher, or null when it has none. */
async function load(db: ScopedDb): Promise<Compiled['restriction']> {
  const [restriction] = await db.select('ip_restrictions', { type: 'api' });
  if (!restriction) return null;
  const policies = await db.select('ip_restriction_policies', { ip_restriction_id: restriction.id });
  const rules = await db.select('ip_policy_rules', { ip_policy_id: policies.map((p) => p.ip_policy_id) });
  return { id: restriction.id, enforced: toBool(restriction.enforced), matcher: new IpMatcher(rules) };
}

function verdict(entry: Compiled, ip: string): Verdict {
  const r = entry.restriction;
  if (!r || r.matcher.allows(ip)) return ALLOWED;
  return { allowed: false, enforced: r.enforced, restrictionId: r.id };
}
