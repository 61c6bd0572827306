// TOTP (RFC 6238: SHA-1, 6 digits, 30 s, ±1 step). Seeds are kept encrypted at rest with
// AES-256-GCM under a key derived from the configured encryption key (secret-box.ts).
import { createSecretBox } from '../secret-box.js';
import * as OTPAuth from 'otpauth';

const ISSUER = 'Device Management';
const PERIOD_SECONDS = 30;

export interface TotpService {
  /** A fresh seed, base32. */
  newSecret(): string;
  /** The otpauth:// URL an authenticator app enrols the seed from. */
  otpauthUrl(secret: string, accountName: string): string;
  /** The time step the code belongs to, or null when it matches none of now-1, now, now+1. */
  matchStep(secret: string, code: string, atMs: number): number | null;
  seal(secret: string): string;
  open(sealed: string): string;
}

function totpFor(secret: string, label = 'user'): OTPAuth.TOTP {
  return new OTPAuth.TOTP({
    issuer: ISSUER,
    label,
    algorithm: 'SHA1',
    digits: 6,
    period: PERIOD_SECONDS,
    secret: OTPAuth.Secret.fromBase32(secret),
  });
}

export function createTotpService(encryptionKey: string): TotpService {
  const box = createSecretBox(encryptionKey, 'totp-seed-encryption');
  return {
    newSecret: () => new OTPAuth.Secret({ size: 20 }).base32,
    otpauthUrl: (secret, accountName) => totpFor(secret, accountName).toString(),
    matchStep(secret, code, atMs) {
      if (!/^\d{6}$/.test(code)) return null;
      const delta = totpFor(secret).validate({ token: code, timestamp: atMs, window: 1 });
      return delta === null ? null : Math.floor(atMs / 1000 / PERIOD_SECONDS) + delta;
    },
    seal: box.seal,
    open: box.open,
  };
}

/** The current code for a secret: for tests and the reference tooling, never for verification. */
export function totpCode(secret: string, atMs: number): string {
  return totpFor(secret).generate({ timestamp: atMs });
}
