// Passwords are stored as argon2id hashes (OWASP parameters, the library's defaults).
import { hash, verify } from '@node-rs/argon2';

export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

let dummyHash: Promise<string> | null = null;

/**
 * Checks a password against a stored hash. With no hash (unknown user) a dummy hash is verified
 * anyway, so the response time does not tell whether the e-mail exists.
 */
export async function verifyPassword(storedHash: string | null, password: string): Promise<boolean> {
  if (storedHash === null) {
    dummyHash ??= hash('not-a-real-password-only-for-timing');
    await verify(await dummyHash, password);
    return false;
  }
  try {
    return await verify(storedHash, password);
  } catch {
    return false;
  }
}
