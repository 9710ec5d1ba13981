// The IP policy rules' table, added to the store's `Database` (see src/db/schema.ts for why by augmentation).

export type IpRuleAction = 'allow' | 'deny';

export interface IpPolicyRulesTable {
  id: string;
  account_id: string;
  ip_policy_id: string;
  /** Canonical network form: `10.0.0.0/8`, `2001:db8::/32`. */
  cidr: string;
  action: IpRuleAction;
  description: string;
  metadata: string;
  created_at: string;
}

declare module '../../db/schema.js' {
  interface Database {
    ip_policy_rules: IpPolicyRulesTable;
  }
}
