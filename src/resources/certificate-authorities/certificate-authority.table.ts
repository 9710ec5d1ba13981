// The certificate authorities' table, added to the store's `Database` (see src/db/schema.ts for why by augmentation).

export interface CertificateAuthoritiesTable {
  id: string;
  account_id: string;
  description: string;
  metadata: string;
  created_at: string;
  ca_pem: string;
  /** JSON object: the response fields derived from the certificate. */
  details: string;
}

declare module '../../db/schema.js' {
  interface Database {
    certificate_authorities: CertificateAuthoritiesTable;
  }
}
