// The master key that seals private keys at rest: EDGEPLANE_MASTER_KEY (32 bytes as base64 or
// hex; required when several instances share a database), or else a key file created with mode
// 0600 in the data directory on first start.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from './config.js';

export function decodeMasterKey(text: string): Buffer | undefined {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, 'hex');
  const b = Buffer.from(t, 'base64');
  return b.length === 32 && /^[A-Za-z0-9+/]+={0,2}$/.test(t) ? b : undefined;
}

export function loadMasterKey(dataDir: string, configured: string | undefined): { key: Buffer; source: string } {
  if (configured !== undefined) {
    const key = decodeMasterKey(configured);
    if (!key) throw new ConfigError(['EDGEPLANE_MASTER_KEY must be 32 bytes, as 64 hex digits or base64 (openssl rand -base64 32)']);
    return { key, source: 'EDGEPLANE_MASTER_KEY' };
  }
  const file = path.join(dataDir, 'master.key');
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    fs.writeFileSync(file, randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  }
  const key = decodeMasterKey(fs.readFileSync(file, 'utf8'));
  if (!key) throw new ConfigError([`${file} does not hold a 32-byte key; restore it from your backup`]);
  return { key, source: file };
}
