// The console's side of single sign-on (API.md §10): asking whether an address signs in through its
// tenant's identity provider, and remembering, across the trip to the provider, which console page
// to open once signed in (a deep link survives single sign-on as it survives a password sign-in).
import { useCallback, useEffect, useRef, useState } from 'react';
import { api, call, ApiError } from '../../api/client';

const RETURN_KEY = 'dms.afterSignIn';
/** An authorization URL is good for 10 minutes at the service; older ones are asked for again. */
const FRESH_MS = 5 * 60_000;

/** Where the browser goes for this address: the password field, or the identity provider. */
export type SignInRoute = { kind: 'password' } | { kind: 'sso'; authorizationUrl: string; at: number };
export interface Discovered { email: string; route: SignInRoute }

/** The form an address is compared in: discovery answers for the address, not for its spelling. */
export const addressKey = (email: string) => email.trim().toLowerCase();
const looksComplete = (email: string) => /^[^\s@]+@[^\s@]+\.[^\s@.]{2,}$/.test(email);

/** Keeps the console page to open after single sign-on (this tab only); null forgets it. */
export function rememberReturnTo(path: string | null): void {
  if (path && path.startsWith('/') && !path.startsWith('//')) sessionStorage.setItem(RETURN_KEY, path);
  else sessionStorage.removeItem(RETURN_KEY);
}

export function rememberedReturnTo(): string | null {
  return sessionStorage.getItem(RETURN_KEY);
}

/**
 * POST /auth/sso/discover for the address typed: asked once the address looks complete and typing
 * has paused (so the next step appears without a click), or at once with `lookup` (Continue).
 * A failed lookup falls back to the password field, with the error to show.
 */
export function useSsoDiscovery(email: string) {
  const [found, setFound] = useState<Discovered | null>(null);
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const latest = useRef(0);
  const asked = useRef<string | null>(null);

  const lookup = useCallback(async (address: string): Promise<Discovered> => {
    const run = ++latest.current;
    asked.current = addressKey(address);
    setPending(true);
    setError(null);
    let result: Discovered;
    try {
      const body = await call(api.POST('/api/v1/auth/sso/discover', { body: { email: address.trim() } }));
      result = { email: addressKey(address), route: body.sso ? { kind: 'sso', authorizationUrl: body.authorizationUrl, at: Date.now() } : { kind: 'password' } };
    } catch (err) {
      result = { email: addressKey(address), route: { kind: 'password' } };
      if (run === latest.current) setError(err instanceof ApiError ? err : new ApiError(0, 'CLIENT', (err as Error).message));
    }
    if (run === latest.current) {
      setFound(result);
      setPending(false);
    }
    return result;
  }, []);

  const key = addressKey(email);
  useEffect(() => {
    if (!looksComplete(key) || asked.current === key) return;
    const timer = setTimeout(() => void lookup(email), 500);
    return () => clearTimeout(timer);
    // The address, not its spelling, decides whether to ask again.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key, lookup]);

  /** The route for the address now typed: the last answer when it is for this address and still fresh, else a new one. */
  const current = useCallback(async (address: string): Promise<Discovered> => {
    const fresh = found && found.email === addressKey(address) && (found.route.kind === 'password' || Date.now() - found.route.at < FRESH_MS);
    return fresh ? found : lookup(address);
  }, [found, lookup]);

  return { found, pending, error, lookup, current, clearError: () => setError(null) };
}
