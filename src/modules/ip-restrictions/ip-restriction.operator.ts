// Operator access to IP restrictions, for the CLI: an account that locked itself out of its
// own API can always be recovered by someone with access to the store.
import { toBool } from '../../db/schema.js';
import { read, withTx, type Store } from '../../db/store.js';
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
    return read(async () => {
      const rows = await this.store.db.selectFrom('ip_restrictions').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
      const links = rows.length === 0 ? [] : await this.store.db.selectFrom('ip_restriction_policies').selectAll().where('ip_restriction_id', 'in', rows.map((r) => r.id)).orderBy('position').execute();
      return rows.map((r) => ({
        id: r.id,
        type: r.type,
        enforced: toBool(r.enforced),
        description: r.description,
        ip_policy_ids: links.filter((l) => l.ip_restriction_id === r.id).map((l) => l.ip_policy_id),
      }));
    });
  }

  /** Deletes one restriction (by id) or the account's restriction of a type; false when none matched. */
  async delete(accountId: string, which: { id?: string; type?: string }): Promise<string | undefined> {
    return withTx(this.store, async (trx) => {
      let query = trx.selectFrom('ip_restrictions').select('id').where('account_id', '=', accountId);
      if (which.id) query = query.where('id', '=', which.id);
      if (which.type) query = query.where('type', '=', which.type as never);
      const row = await query.executeTakeFirst();
      if (!row) return undefined;
      await trx.deleteFrom('ip_restriction_policies').where('ip_restriction_id', '=', row.id).execute();
      await trx.deleteFrom('ip_restrictions').where('id', '=', row.id).execute();
      await bumpIpRevision(trx, { accountId });
      return row.id;
    });
  }
}
