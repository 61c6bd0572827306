// API key material (SPEC "Limits": `svc_` + 32 base64url characters, the first 12 kept as keyPrefix).
// Only the SHA-256 of a key is stored; a key is a 192-bit CSPRNG secret, so a fast hash is the right
// one (nothing to brute-force), and it keeps the hot path at one hash per request.
import { createHash, randomBytes } from 'node:crypto';

export const KEY_PREFIX = 'svc_';
const KEY_PATTERN = /^svc_[A-Za-z0-9_-]{32}$/;

export interface KeyMaterial {
  key: string;
  keyPrefix: string;
  keyHash: string;
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function generateKey(): KeyMaterial {
  // 24 random bytes are exactly 32 base64url characters, no padding.
  const key = KEY_PREFIX + randomBytes(24).toString('base64url');
  return { key, keyPrefix: key.slice(0, 12), keyHash: hashKey(key) };
}

/** Why a header value cannot be a key, or null when it has the shape of one. */
export function malformedKeyReason(value: string): string | null {
  if (!value.startsWith(KEY_PREFIX)) return 'API key must start with svc_';
  if (!KEY_PATTERN.test(value)) return 'API key is not valid';
  return null;
}
