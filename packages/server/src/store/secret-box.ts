// Secrets the service must read back (webhook signing secrets, signing keys in the database) are
// stored encrypted (AES-256-GCM) under a key kept outside the database: the file
// LEDGER_SECRETS_KEY_FILE, or secrets.key in the data dir, created with mode 0600. Every
// process on one PostgreSQL needs the same file.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ensurePrivateDir } from '../kernel/files.js';

/** The service's secrets key: LEDGER_SECRETS_KEY_FILE, or secrets.key in the data dir (created on first start). */
export function openSecretBox(config: { secretsKeyFile?: string | undefined; dataDir: string }): SecretBox {
  return SecretBox.open(config.secretsKeyFile ?? path.join(config.dataDir, 'secrets.key'), config.secretsKeyFile === undefined);
}

export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  static open(file: string, mayCreate: boolean): SecretBox {
    if (!fs.existsSync(file)) {
      if (!mayCreate) throw new Error(`secrets key file ${file} does not exist`);
      ensurePrivateDir(path.dirname(file));
      try {
        fs.writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
    const key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
    if (key.length !== 32) throw new Error(`secrets key file ${file} must hold 32 bytes in base64`);
    return new SecretBox(key);
  }

  /**
   * A keyed MAC of `data` for one purpose (HMAC-SHA256 under a key derived from the secrets key
   * with HKDF, info = purpose), base64url: the same on every process that shares the key file.
   */
  mac(purpose: string, data: string): string {
    const k = Buffer.from(hkdfSync('sha256', this.key, Buffer.alloc(0), `audit-ledger/${purpose}`, 32));
    return createHmac('sha256', k).update(data).digest('base64url');
  }

  /** "v1." + base64(iv ‖ tag ‖ ciphertext). */
  seal(plain: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return `v1.${Buffer.concat([iv, c.getAuthTag(), body]).toString('base64')}`;
  }

  open(sealed: string): string {
    if (!sealed.startsWith('v1.')) throw new Error('unknown secret format');
    const raw = Buffer.from(sealed.slice(3), 'base64');
    const d = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    d.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8');
  }
}
