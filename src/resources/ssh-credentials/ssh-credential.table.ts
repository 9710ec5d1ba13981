// The SSH credentials' table, added to the store's `Database` (see src/db/schema.ts for why by augmentation).

/** A public key an account registers for `ssh -R`, with the same ACL and ownership as a credential. */
export interface SshCredentialsTable {
  id: string;
  account_id: string;
  owner_id: string;
  description: string;
  metadata: string;
  /** JSON array of ACL rules in their stored form, as a credential's (credential-acl.ts). */
  acl: string;
  /** The key in its canonical authorized_keys form: `<type> <base64 of the wire blob>`, no comment. */
  public_key: string;
  /** `SHA256:` and the unpadded base64 of SHA-256 of the wire blob (OpenSSH's fingerprint); unique per account. */
  key_fingerprint: string;
  created_at: string;
}

declare module '../../db/schema.js' {
  interface Database {
    ssh_credentials: SshCredentialsTable;
  }
}
