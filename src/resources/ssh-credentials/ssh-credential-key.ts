// The public key of an SSH credential: one OpenSSH public key in authorized_keys form
// (`ssh-ed25519 AAAA… comment`), checked and kept in one canonical form, `<type> <base64>`.
//
// The key itself is parsed by src/lib/ssh/keys.ts (parseAuthorizedKey), which the SSH certificate
// kinds use too: it decodes the wire blob, checks that the type named inside the blob is the type
// written before it, and that the key is one node:crypto accepts (a point on its curve, an RSA
// modulus of 2048 to 16384 bits), then encodes it again from the checked key. It is used rather
// than a package: ssh2 (the SSH listener's) parses keys too, but leniently where this must refuse
// (it checks only that the inner type starts with the outer one, neither an ECDSA key's curve name
// nor an RSA key's size) and with one message for every failure. What is added here is what an
// authorized_keys *line* may hold that a credential's key may not: nothing, several lines, options
// before the key type, PEM or RFC 4716 text.
import { blobAlgorithm, KeyError, parseAuthorizedKey } from '../../lib/ssh/keys.js';
import { sshCredentialErrors } from './ssh-credential.errors.js';

/** The key types an SSH credential takes: those the SSH listener can verify a signature of. */
export const SSH_CREDENTIAL_KEY_TYPES = ['ssh-ed25519', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521', 'ssh-rsa'] as const;

/** Key type names OpenSSH knows that are refused with their own reason (parseAuthorizedKey's). */
const OTHER_KEY_TYPE = /^(ssh-dss|sk-ssh-ed25519@openssh\.com|sk-ecdsa-sha2-nistp256@openssh\.com|[a-z0-9-]+(@[a-z0-9.-]+)?-cert-v01@openssh\.com)$/;
const isKeyType = (word: string) => (SSH_CREDENTIAL_KEY_TYPES as readonly string[]).includes(word) || OTHER_KEY_TYPE.test(word);

/** The parsed key: its type (`ssh-ed25519`) and the wire blob, and the canonical line stored and shown. */
export interface SshCredentialKey {
  type: string;
  blob: Buffer;
  /** `<type> <base64 of blob>`: the comment is dropped. */
  publicKey: string;
}

const refuse = (reason: string) => sshCredentialErrors.invalidSshCredentialKey({ reason });

/** The one key of `text`, or the 400 that says what is wrong with it. */
export function readSshCredentialKey(text: string): SshCredentialKey {
  const trimmed = text.trim();
  if (trimmed === '') throw refuse('is empty; send one OpenSSH public key, such as the line of an id_ed25519.pub file');
  if (trimmed.includes('PRIVATE KEY')) throw refuse('is a private key; send the public key (the .pub file), never the private one');
  if (trimmed.startsWith('---- BEGIN SSH2 PUBLIC KEY'))
    throw refuse("is in the RFC 4716 form; send it in OpenSSH's authorized_keys form (ssh-keygen -i -f <file> converts it)");
  if (trimmed.startsWith('-----BEGIN'))
    throw refuse("is a PEM key; send it in OpenSSH's authorized_keys form (ssh-keygen -i -m PKCS8 -f <file> converts a PEM public key)");
  const lines = trimmed.split(/\r?\n/).filter((line) => line.trim() !== '');
  if (lines.length > 1) throw refuse(`holds ${lines.length} lines; an SSH credential has one key, so send one key per credential`);
  const words = trimmed.split(/\s+/);
  const first = words[0]!;
  if (!isKeyType(first) && words.slice(1).some(isKeyType))
    throw refuse(`has options before the key type ('${first.slice(0, 40)}'); send the key alone: <type> <base64> [comment]`);
  // A second key on the same line would be read as the first one's comment: refused rather than dropped.
  if (isKeyType(first) && words.slice(2).some(isKeyType)) throw refuse('holds several keys on one line; an SSH credential has one key');
  if (!/^[A-Za-z0-9][A-Za-z0-9.@-]*$/.test(first) || words.length < 2)
    throw refuse('is not an OpenSSH public key; send a line such as "ssh-ed25519 AAAA… comment"');
  let key;
  try {
    key = parseAuthorizedKey(trimmed);
  } catch (error) {
    if (error instanceof KeyError) throw refuse(error.message);
    throw error;
  }
  return { type: key.algorithm, blob: key.blob, publicKey: `${key.algorithm} ${key.blob.toString('base64')}` };
}

/**
 * The canonical blob of a key presented in an SSH login (its type and parameters as this module
 * stores them), or undefined when it is no key a credential could hold.
 */
export function canonicalSshKeyBlob(blob: Buffer): Buffer | undefined {
  const type = blobAlgorithm(blob);
  if (type === undefined || !(SSH_CREDENTIAL_KEY_TYPES as readonly string[]).includes(type)) return undefined;
  try {
    return parseAuthorizedKey(`${type} ${blob.toString('base64')}`).blob;
  } catch {
    return undefined;
  }
}
