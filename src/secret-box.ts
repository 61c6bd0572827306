// Secrets kept encrypted at rest (TOTP seeds, webhook signing secrets): AES-256-GCM under a key
// derived from the configured encryption key, one derived key per purpose.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

export interface SecretBox {
  seal(secret: string): string;
  open(sealed: string): string;
}

export function createSecretBox(encryptionKey: string, purpose: string): SecretBox {
  const key = Buffer.from(hkdfSync('sha256', encryptionKey, 'dms', purpose, 32));
  return {
    seal(secret) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
    },
    open(sealed) {
      const [version, iv, tag, body] = sealed.split('.');
      if (version !== 'v1' || !iv || !tag || !body) throw new Error(`unreadable sealed secret (${purpose})`);
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}
