// The tables of SSH host and user certificates, added to the store's `Database` (see src/db/schema.ts for why by augmentation).
import type { SshKeyType } from '../ssh-certificate-authorities/ssh-certificate-authority.table.js';

export interface SshHostCertificatesTable {
  id: string;
  account_id: string;
  description: string;
  metadata: string;
  created_at: string;
  ssh_certificate_authority_id: string;
  public_key: string;
  key_type: SshKeyType;
  /** JSON array */
  principals: string;
  valid_after: string;
  valid_until: string;
  /** uint64 as decimal text */
  serial: string;
  certificate: string;
}

export interface SshUserCertificatesTable extends SshHostCertificatesTable {
  /** JSON object */
  critical_options: string;
  /** JSON object */
  extensions: string;
}

declare module '../../db/schema.js' {
  interface Database {
    ssh_user_certificates: SshUserCertificatesTable;
    ssh_host_certificates: SshHostCertificatesTable;
  }
}
