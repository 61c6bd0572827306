// The signed-in user, as React state: sign-in (with the MFA step), renewal, sign-out and expiry.
import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { api, call } from '../api/client';
import type { Me, MfaChallenge, Permission, Tokens } from '../api/types';
import { renewTokens, sessionChangedElsewhere, storeTokens, storedRefreshToken, watchRenewals } from './token-store';

export type SessionState =
  | { status: 'loading' }
  /** `keepPlace`: after signing in, return to the page the user was on (expiry, deep link), not after a sign-out. */
  | { status: 'signed-out'; notice: string | null; keepPlace: boolean }
  | { status: 'signed-in'; user: Me };

export interface Session {
  state: SessionState;
  /** The signed-in user, or the MFA challenge to answer with verifyMfa. */
  signIn(email: string, password: string): Promise<MfaChallenge | { user: Me }>;
  /**
   * Takes the login body of another way in (single sign-on, an accepted invitation): the user, or
   * the MFA challenge to answer with verifyMfa. A session this tab already had is ended first.
   */
  adoptLogin(body: Tokens | MfaChallenge): Promise<MfaChallenge | { user: Me }>;
  /** Answers the MFA challenge with an authenticator code, or with one of the user's recovery codes. */
  verifyMfa(mfaToken: string, proof: string | { recoveryCode: string }): Promise<void>;
  /** Ends the session on the server and here; `notice` is shown on the sign-in page. */
  signOut(notice?: string): Promise<void>;
  /** Reloads the user after a change to it (MFA enabled). */
  reloadUser(): Promise<void>;
}

const SessionContext = createContext<Session | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState<SessionState>({ status: 'loading' });
  // Set by a sign-out until the next sign-in: a request still in flight when the user signed out is
  // refused (401) and its renewal fails, which must not turn "You have signed out" into "expired".
  const signedOutByUser = useRef(false);

  const adopt = useCallback((tokens: Tokens) => {
    signedOutByUser.current = false;
    storeTokens(tokens);
    setState({ status: 'signed-in', user: tokens.user });
  }, []);

  useEffect(() => {
    watchRenewals((tokens) => {
      if (tokens) setState({ status: 'signed-in', user: tokens.user });
      else if (signedOutByUser.current) return;
      else setState({ status: 'signed-out', notice: 'Your session has expired. Sign in again to continue.', keepPlace: true });
    });
    if (!storedRefreshToken()) {
      setState({ status: 'signed-out', notice: null, keepPlace: true });
      return;
    }
    // A reload: the access token was in memory only, so renew it from this tab's refresh token.
    void renewTokens().then((result) => {
      if (result === 'unreachable') setState({ status: 'signed-out', notice: 'Cannot reach the server to restore your session. Check your connection and sign in again.', keepPlace: true });
    });
  }, []);

  // Back or Forward may bring a page back from the browser's back-forward cache as it was, signed-in
  // content included, after a sign-out elsewhere in this tab. The server keeps the console's page out
  // of that cache (Cache-Control: no-store); should a browser cache it anyway, a page whose session
  // changed meanwhile is hidden at once and loaded afresh, which restores whatever session holds now.
  useEffect(() => {
    const shown = (e: PageTransitionEvent) => {
      if (!e.persisted || !sessionChangedElsewhere()) return;
      document.documentElement.style.visibility = 'hidden';
      window.location.reload();
    };
    window.addEventListener('pageshow', shown);
    return () => window.removeEventListener('pageshow', shown);
  }, []);

  const session = useMemo<Session>(() => ({
    state,
    async signIn(email, password) {
      const body = await call(api.POST('/api/v1/auth/login', { body: { email, password } }));
      if ('mfaRequired' in body) return body;
      adopt(body);
      return { user: body.user };
    },
    async adoptLogin(body) {
      if ('mfaRequired' in body) return body;
      const previous = storedRefreshToken();
      if (previous && previous !== body.refreshToken) await api.POST('/api/v1/auth/logout', { body: { refreshToken: previous } }).catch(() => undefined);
      adopt(body);
      return { user: body.user };
    },
    async verifyMfa(mfaToken, proof) {
      const body = typeof proof === 'string' ? { mfaToken, code: proof } : { mfaToken, recoveryCode: proof.recoveryCode };
      adopt(await call(api.POST('/api/v1/auth/mfa/verify', { body })));
    },
    async signOut(notice = 'You have signed out.') {
      const refreshToken = storedRefreshToken();
      // Forgotten here first, so no renewal starts from it while the server revokes it.
      signedOutByUser.current = true;
      storeTokens(null);
      // Revoke the session on the server; sign out locally even if that request fails.
      if (refreshToken) await api.POST('/api/v1/auth/logout', { body: { refreshToken } }).catch(() => undefined);
      storeTokens(null); // again: a renewal already under way when the user signed out may have stored its answer
      setState({ status: 'signed-out', notice, keepPlace: false });
    },
    async reloadUser() {
      const user = await call(api.GET('/api/v1/auth/me'));
      setState({ status: 'signed-in', user });
    },
  }), [state, adopt]);

  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside SessionProvider');
  return session;
}

/** The signed-in user; only for pages behind the sign-in gate. */
export function useUser(): Me {
  const { state } = useSession();
  if (state.status !== 'signed-in') throw new Error('useUser without a signed-in user');
  return state.user;
}

/** What the signed-in user may do, as the API decides it (API.md §3 roles → permissions). */
export function useCan(): (permission: Permission) => boolean {
  const user = useUser();
  return useCallback((permission: Permission) => user.permissions.includes(permission), [user]);
}
