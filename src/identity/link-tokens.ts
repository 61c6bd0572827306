// One-use tokens mailed in links (invitations, password reset): 32 random bytes, stored only as
// their SHA-256 (high entropy, so a fast hash suffices), with a prefix saying what each is for so
// that one kind is never taken for the other and a malformed token costs no database lookup.
import { createHash, randomBytes } from 'node:crypto';

export type LinkTokenKind = 'inv' | 'pwr';

const PATTERNS: Record<LinkTokenKind, RegExp> = {
  inv: /^inv_[A-Za-z0-9_-]{43}$/,
  pwr: /^pwr_[A-Za-z0-9_-]{43}$/,
};

export function newLinkToken(kind: LinkTokenKind): string {
  return `${kind}_${randomBytes(32).toString('base64url')}`;
}

export function isLinkToken(kind: LinkTokenKind, token: string): boolean {
  return PATTERNS[kind].test(token);
}

export function hashLinkToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
