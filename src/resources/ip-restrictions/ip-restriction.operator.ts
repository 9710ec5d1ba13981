// Operator access to IP restrictions, for the CLI: an account that locked itself out of its
// own API can always be recovered by someone with access to the store.
import { toBool } from '../../db/schema.js';
import { scopedRead, scopedTx } from '../../db/scoped.js';
import type { Store } from '../../db/store.js';
import { bumpIpRevision } from '../ip-policies/ip-revision.js';

export interface RestrictionSummary {
  id: string;
  type: string;
  enforced: boolean;
  ip_policy_ids: string[];
  description: string;
}

export class IpRestrictionOperator {
  constructor(private readonly store: Store) {}

  async list(accountId: string): Promise<RestrictionSummary[]> {
    return scopedRead(this.store, { accountId }, async (db) => {
      const rows = await db.select('ip_restrictions', {}, { orderBy: ['id'] });
      const links = await db.select('ip_restriction_policies', { ip_restriction_id: rows.map((r) => r.id) }, { orderBy: ['position'] });
      return rows.map((r) => ({
        id: r.id,
        type: r.type,
        enforced: toBool(r.enforced),
        description: r.description,
        ip_policy_ids: links.filter((l) => l.ip_restriction_id === r.id).map((l) => l.ip_policy_id),
      }));
    });
  }

  /** Deletes one restriction (by id) or the account's restriction of a type; undefined when none matched. */
  async delete(accountId: string, which: { id?: string; type?: string }): Promise<string | undefined> {
    return scopedTx(this.store, { accountId }, async (db) => {
      const [row] = await db.select('ip_restrictions', { ...(which.id && { id: which.id }), ...(which.type && { type: which.type as never }) });
      if (!row) return undefined;
      await db.delete('ip_restriction_policies', { ip_restriction_id: row.id });
      await db.delete('ip_restrictions', { id: row.id });
      await bumpIpRevision(db);
      return row.id;
    });
  }
}
