// SSH certificate authorities. The key pair is made off the event loop (node:crypto's
// asynchronous generateKeyPair runs on the thread pool) and before the transaction; the
// private key is sealed with the master key and never leaves the server. An RSA key takes
// seconds of a thread pool thread (the pool has 4 by default, shared with file and DNS work),
// so an account makes at most a few at once in each process and is told to retry past that.
import { createPrivateKey, generateKeyPair, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { newId } from '../../core/ids.js';
import { describedColumns } from '../../core/schema.js';
import { defineResource } from '../../crud/definition.js';
import type { ScopedDb } from '../../db/scoped.js';
import type { SshCertificateAuthoritiesTable } from './ssh-certificate-authority.table.js';
import type { Sealer } from '../../lib/crypto/sealer.js';
import { authorizedKeysLine, CURVES, toSshPublicKey, type SshPublicKey } from '../../lib/ssh/keys.js';
import { sshCertificateAuthorityCatalogue, sshCertificateAuthorityErrors } from './ssh-certificate-authority.errors.js';
import { SshCertificateAuthority, SshCertificateAuthorityCreate, SshCertificateAuthorityUpdate } from './ssh-certificate-authority.schema.js';

const generate = promisify(generateKeyPair);

async function newCaKey(type: 'rsa' | 'ecdsa' | 'ed25519', curve: keyof typeof CURVES, bits: number): Promise<KeyObject> {
  if (type === 'ed25519') return (await generate('ed25519')).privateKey;
  if (type === 'ecdsa') return (await generate('ec', { namedCurve: CURVES[curve].jwk })).privateKey;
  return (await generate('rsa', { modulusLength: bits })).privateKey;
}

/** RSA keys an account may have in the making at once, per process; more are 429 1976. */
export const RSA_KEYS_AT_ONCE = 2;
/** Seconds to wait before retrying: about what one RSA-4096 key takes here. */
const RSA_RETRY_AFTER = 2;
const rsaKeysInTheMaking = new Map<string, number>();

/** `newCaKey` for an RSA key, counted against the account's keys in the making. */
async function newRsaKey(accountId: string, bits: number): Promise<KeyObject> {
  const making = rsaKeysInTheMaking.get(accountId) ?? 0;
  if (making >= RSA_KEYS_AT_ONCE) throw sshCertificateAuthorityErrors.sshCaKeysBusy({ max: RSA_KEYS_AT_ONCE, retryAfter: RSA_RETRY_AFTER });
  rsaKeysInTheMaking.set(accountId, making + 1);
  try {
    return await newCaKey('rsa', 'p256', bits);
  } finally {
    const left = rsaKeysInTheMaking.get(accountId)! - 1;
    if (left === 0) rsaKeysInTheMaking.delete(accountId);
    else rsaKeysInTheMaking.set(accountId, left);
  }
}

export interface CaKey {
  key: KeyObject;
  publicKey: SshPublicKey;
}

// Unsealing and parsing a CA key costs more than signing with it, and a CA's key never changes:
// keep the parsed keys of recently used CAs, keyed by id and sealed value. The row is still
// read on every use, so a deleted CA or another account's id is never served from here.
const CA_KEY_CACHE_SIZE = 1000;
const caKeys = new Map<string, CaKey>();

/** The CA's private key, unsealed, or undefined when the id is no CA of the account. */
export async function loadCaKey(db: ScopedDb, sealer: Sealer, caId: string): Promise<CaKey | undefined> {
  if (!/^sshca_[0-9A-Za-z]{27}$/.test(caId)) return undefined;
  const row = await db.find('ssh_certificate_authorities', caId);
  if (!row) return undefined;
  const cacheKey = `${row.id}:${row.private_key_sealed}`;
  let ca = caKeys.get(cacheKey);
  if (!ca) {
    const key = createPrivateKey(sealer.open(row.private_key_sealed, row.id));
    ca = { key, publicKey: toSshPublicKey(key) };
    if (caKeys.size >= CA_KEY_CACHE_SIZE) caKeys.delete(caKeys.keys().next().value!);
    caKeys.set(cacheKey, ca);
  }
  return ca;
}

export function sshCertificateAuthorityDefinition(sealer: Sealer) {
  return defineResource({
    kind: 'ssh_certificate_authority',
    title: 'SSH certificate authority',
    errors: sshCertificateAuthorityCatalogue,
    prefix: 'sshca',
    path: '/ssh_certificate_authorities',
    listKey: 'ssh_certificate_authorities',
    table: 'ssh_certificate_authorities',
    schemas: { resource: SshCertificateAuthority, create: SshCertificateAuthorityCreate, update: SshCertificateAuthorityUpdate },
    inUse: (id, certificates) => sshCertificateAuthorityErrors.sshCaInUse({ id, certificates }),

    async prepare(ctx, body) {
      const type = body.private_key_type ?? 'ed25519';
      if (body.key_size !== undefined && type !== 'rsa') throw sshCertificateAuthorityErrors.keySizeNotForType({ type });
      if (body.elliptic_curve !== undefined && type !== 'ecdsa') throw sshCertificateAuthorityErrors.curveNotForType({ type });
      const bits = body.key_size ?? 4096;
      if (bits !== 2048 && bits !== 4096) throw sshCertificateAuthorityErrors.invalidKeySize({ value: bits });
      const key = type === 'rsa' ? await newRsaKey(ctx.scope.accountId, bits) : await newCaKey(type, body.elliptic_curve ?? 'p256', bits);
      const id = newId('sshca');
      const pem = key.export({ type: 'pkcs8', format: 'pem' }) as string;
      return {
        id,
        row: {
          ...describedColumns(body),
          key_type: type,
          public_key: authorizedKeysLine(toSshPublicKey(key)),
          private_key_sealed: sealer.seal(pem, id),
        },
      };
    },

    toApi: (row: SshCertificateAuthoritiesTable) => ({
      id: row.id,
      created_at: row.created_at,
      description: row.description,
      metadata: row.metadata,
      public_key: row.public_key,
      key_type: row.key_type,
    }),
  });
}
