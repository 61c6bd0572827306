// Where the session's tokens live. The access token stays in memory only; the refresh token is kept
// in sessionStorage (this tab only, gone when it closes) so a reload or a deep link keeps the
// session. Neither is ever written to localStorage.
import { api, setTokenSource, type TokenSource } from '../api/client';
import type { Tokens } from '../api/types';

const REFRESH_KEY = 'dms.refreshToken';
let accessToken: string | null = null;
/** `unreachable`: the server could not be asked; the session is kept for another try. */
export type Renewal = Tokens | null | 'unreachable';
let renewal: Promise<Renewal> | null = null;
let onRenewed: (tokens: Tokens | null) => void = () => {};
/** The refresh token this document last read or wrote: another document of the tab may change it. */
let held: string | null = sessionStorage.getItem(REFRESH_KEY);

export function storeTokens(tokens: Tokens | null): void {
  accessToken = tokens?.accessToken ?? null;
  held = tokens?.refreshToken ?? null;
  if (tokens) sessionStorage.setItem(REFRESH_KEY, tokens.refreshToken);
  else sessionStorage.removeItem(REFRESH_KEY);
}

/**
 * True when another page of this tab signed out, signed in as someone else or renewed the session
 * since this page last looked: a page the browser brings back from its back-forward cache then
 * shows a state that no longer holds.
 */
export function sessionChangedElsewhere(): boolean {
  return sessionStorage.getItem(REFRESH_KEY) !== held;
}

export function storedRefreshToken(): string | null {
  return sessionStorage.getItem(REFRESH_KEY);
}

/** Exchanges the refresh token for a new pair; one exchange at a time, since refresh tokens rotate. */
export function renewTokens(): Promise<Renewal> {
  renewal ??= (async (): Promise<Renewal> => {
    const refreshToken = storedRefreshToken();
    if (!refreshToken) return null;
    try {
      const { data, response } = await api.POST('/api/v1/auth/refresh', { body: { refreshToken } });
      if (response.status >= 500) return 'unreachable';
      return (data as Tokens | undefined) ?? null;
    } catch {
      return 'unreachable';
    }
  })().then((result) => {
    if (result === 'unreachable') return result;
    storeTokens(result);
    onRenewed(result);
    return result;
  }).finally(() => {
    renewal = null;
  });
  return renewal;
}

/** The session provider learns of every renewal (a new user object, or the end of the session). */
export function watchRenewals(listener: (tokens: Tokens | null) => void): void {
  onRenewed = listener;
}

const source: TokenSource = {
  accessToken: () => accessToken,
  renew: async () => {
    const result = await renewTokens();
    return result !== null && result !== 'unreachable';
  },
};
setTokenSource(source);
