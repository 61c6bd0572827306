// Pieces the pages reachable while signed out share (sign-in, single sign-on, invitation, password
// reset): their frame and heading, the outcome that takes the focus, and reading the one-time value
// a mailed or redirected link carries in its fragment (which is then cleared from the address bar).
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { useLocation, useNavigate } from 'react-router';

/**
 * The frame of a signed-out page and its heading. The heading takes the focus when the reader
 * arrives by a link inside the console (not on a first load, where the page's first field may).
 */
export function PublicPage({ title, label, children }: { title: ReactNode; label?: string; children: ReactNode }) {
  const location = useLocation();
  const heading = useRef<HTMLHeadingElement>(null);
  const [navigated] = useState(() => location.key !== 'default');
  useEffect(() => {
    if (navigated) heading.current?.focus();
  }, [navigated]);
  return (
    <main className="sign-in public-page" id="main" aria-label={label}>
      <p className="public-brand">Device Management Console</p>
      <h1 ref={heading} tabIndex={-1}>{title}</h1>
      {children}
    </main>
  );
}

/** The outcome of an action, focused when its text changes so it is read out where the user is. */
export function Outcome({ children, tone = 'notice' }: { children: ReactNode; tone?: 'notice' | 'bad' }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return <div ref={ref} tabIndex={-1} className={`public-outcome ${tone === 'bad' ? 'state state-error' : 'notice'}`} role={tone === 'bad' ? 'alert' : 'status'}>{children}</div>;
}

/**
 * The values of the page's fragment (`#token=…`, `#code=…`, `#error=…`), read once when the page
 * opens; the fragment is then removed from the address bar and the history entry, so the one-time
 * value is not left on screen, in the history or in a bookmark.
 */
export function useFragment(): URLSearchParams {
  const location = useLocation();
  const navigate = useNavigate();
  const [values] = useState(() => new URLSearchParams(location.hash.replace(/^#/, '')));
  useEffect(() => {
    if (location.hash) void navigate({ pathname: location.pathname, search: location.search }, { replace: true, state: location.state });
  }, [location, navigate]);
  return values;
}

/** A password and its confirmation, as the API takes them (API.md §3: 8 to 256 characters). */
export function checkNewPassword(password: string, again: string): { password?: string; again?: string } {
  if (password.length < 8 || password.length > 256) return { password: 'The password needs 8 to 256 characters.' };
  if (again !== password) return { again: 'This does not match the password above.' };
  return {};
}
