// The SSH listener's host key: one ECDSA P-256 key for the whole service, kept in the store sealed
// with the master key (as the SSH CAs' and TLS keys are), so that every instance presents the same
// key and a client's known_hosts entry holds whichever instance it reaches. Made by the first
// instance that needs it; one that loses the race to insert reads the winner's. ECDSA rather than
// Ed25519: ssh2 reads Ed25519 keys only in OpenSSH's own private key format, which node:crypto
// does not write; it reads SEC1 PEM.
import { generateKeyPairSync } from 'node:crypto';
import type { Store } from '../db/store.js';
import type { Sealer } from '../lib/crypto/sealer.js';
import { authorizedKeysLine, toSshPublicKey } from '../lib/ssh/keys.js';

const ALGORITHM = 'ecdsa-sha2-nistp256';
const boundTo = (algorithm: string) => `ssh-host-key:${algorithm}`;

export interface SshHostKey {
  /** The private key, SEC1 PEM, for ssh2's Server. */
  pem: string;
  /** `ecdsa-sha2-nistp256 AAAA…`: what a known_hosts line names. */
  publicKey: string;
}

export async function loadSshHostKey(store: Store, sealer: Sealer): Promise<SshHostKey> {
  const read = () => store.db.selectFrom('ssh_host_keys').selectAll().where('algorithm', '=', ALGORITHM).executeTakeFirst();
  let row = await read();
  if (!row) {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = privateKey.export({ type: 'sec1', format: 'pem' }) as string;
    await store.db
      .insertInto('ssh_host_keys')
      .values({
        algorithm: ALGORITHM,
        private_key_sealed: sealer.seal(pem, boundTo(ALGORITHM)),
        public_key: authorizedKeysLine(toSshPublicKey(privateKey)),
        created_at: new Date().toISOString(),
      })
      .onConflict((oc) => oc.column('algorithm').doNothing())
      .execute();
    row = await read();
    if (!row) throw new Error('the SSH host key could not be stored');
  }
  return { pem: sealer.open(row.private_key_sealed, boundTo(row.algorithm)), publicKey: row.public_key };
}
