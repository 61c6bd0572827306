// Access tokens (JWT HS256, 15 minutes), MFA challenge tokens (5 minutes) and opaque refresh
// tokens (random, stored only as SHA-256). Algorithms are pinned: alg "none" or RS/HS confusion
// never verifies.
import { createHash, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import { accessTokenInvalid, mfaTokenInvalid, type AppError } from '../errors.js';

export const ACCESS_TOKEN_TTL_SECONDS = 900;
export const MFA_TOKEN_TTL_SECONDS = 300;
const ISSUER = 'device-management-service';
const ACCESS_AUDIENCE = 'dms:access';
const MFA_AUDIENCE = 'dms:mfa-challenge';
const VERIFIED_TOKEN_CACHE_SIZE = 20_000;

export interface AccessClaims {
  userId: string;
  sessionId: string;
  mfaVerified: boolean;
}

export interface TokenService {
  signAccess(claims: AccessClaims): Promise<string>;
  verifyAccess(token: string): Promise<AccessClaims>;
  /** `via: 'sso'`: the first factor was the tenant's identity provider (the session is marked so). */
  signMfaChallenge(userId: string, via?: 'sso'): Promise<string>;
  verifyMfaChallenge(token: string): Promise<{ userId: string; sso: boolean }>;
}

export function createTokenService(secret: string, now: () => number): TokenService {
  const key: KeyObject = createSecretKey(Buffer.from(secret, 'utf8'));
  const seconds = () => Math.floor(now() / 1000);

  async function sign(payload: Record<string, unknown>, subject: string, audience: string, ttl: number) {
    const iat = seconds();
    return new SignJWT(payload)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setAudience(audience)
      .setSubject(subject)
      .setIssuedAt(iat)
      .setExpirationTime(iat + ttl)
      .sign(key);
  }

  async function verify(token: string, audience: string, failure: AppError) {
    try {
      const { payload } = await jwtVerify(token, key, {
        algorithms: ['HS256'],
        issuer: ISSUER,
        audience,
        currentDate: new Date(now()),
        requiredClaims: ['sub', 'exp', 'iat'],
      });
      return payload;
    } catch {
      throw failure;
    }
  }

  // Clients reuse one access token for its whole life, and a signature check costs ~80 µs while the
  // rest of a cached request costs less. A token verified once keeps its (immutable) claims here;
  // expiry is still checked on every use, and session revocation is checked by the caller.
  // Keyed by the signature segment, the whole token compared on a hit: a Map lookup hashes its key,
  // and the token arrives as a new string on every request.
  const verified = new Map<string, { token: string; claims: AccessClaims; expiresAtMs: number }>();
  const signatureOf = (token: string) => token.slice(token.lastIndexOf('.') + 1);

  return {
    signAccess: (c) => sign({ sid: c.sessionId, mfa: c.mfaVerified }, c.userId, ACCESS_AUDIENCE, ACCESS_TOKEN_TTL_SECONDS),
    async verifyAccess(token) {
      const signature = signatureOf(token);
      const known = verified.get(signature);
      if (known && known.token === token) {
        if (known.expiresAtMs > now()) return known.claims;
        verified.delete(signature);
        throw accessTokenInvalid();
      }
      const p = await verify(token, ACCESS_AUDIENCE, accessTokenInvalid());
      if (typeof p.sid !== 'string' || typeof p.sub !== 'string') throw accessTokenInvalid();
      const claims = { userId: p.sub, sessionId: p.sid, mfaVerified: p.mfa === true };
      if (verified.size >= VERIFIED_TOKEN_CACHE_SIZE) verified.delete(verified.keys().next().value!);
      verified.set(signature, { token, claims, expiresAtMs: p.exp! * 1000 });
      return claims;
    },
    signMfaChallenge: (userId, via) => sign(via ? { via } : {}, userId, MFA_AUDIENCE, MFA_TOKEN_TTL_SECONDS),
    async verifyMfaChallenge(token) {
      const p = await verify(token, MFA_AUDIENCE, mfaTokenInvalid());
      return { userId: p.sub!, sso: p.via === 'sso' };
    },
  };
}

export function newRefreshToken(): string {
  return `rt_${randomBytes(32).toString('base64url')}`;
}

export function hashRefreshToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
