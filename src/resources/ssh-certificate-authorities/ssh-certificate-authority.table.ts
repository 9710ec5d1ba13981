// The SSH certificate authorities' table, added to the store's `Database` (see src/db/schema.ts for why by augmentation).

export type SshKeyType = 'rsa' | 'ecdsa' | 'ed25519';

export interface SshCertificateAuthoritiesTable {
  id: string;
  account_id: string;
  description: string;
  metadata: string;
  created_at: string;
  key_type: SshKeyType;
  /** authorized-keys line */
  public_key: string;
  /** PKCS#8 PEM sealed with the master key (AES-256-GCM, bound to the CA id). */
  private_key_sealed: string;
}

declare module '../../db/schema.js' {
  interface Database {
    ssh_certificate_authorities: SshCertificateAuthoritiesTable;
  }
}
