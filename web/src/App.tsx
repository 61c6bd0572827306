// The console's routes and frame. Pages behind the sign-in gate see a signed-in user; every page of
// a section is in pages/<section>/.
import { useEffect, useId, useRef, useState } from 'react';
import { NavLink, Navigate, Route, Routes, useLocation } from 'react-router';
import { useCan, useSession, useUser } from './session/session';
import { SignInPage } from './pages/SignInPage';
import { MfaSetupPage } from './pages/MfaSetupPage';
import { NotFoundPage } from './pages/NotFoundPage';
import { OverviewPage } from './pages/OverviewPage';
import { OrganizationPage, OrganizationsPage, PartnerPage, PartnersPage, SitePage, SitesPage } from './pages/tenancy';
import { DevicePage, DevicesPage } from './pages/devices';
import { ApiKeysPage, EnrollmentKeysPage } from './pages/keys';
import { AuditEntryPage, AuditPage } from './pages/audit';
import { DestinationPage, DestinationsPage } from './pages/destinations';
import { UserPage, UsersPage } from './pages/users';
import { AccountPage } from './pages/account';
import { publicPageFor } from './pages/public';
import { AfterSsoSignIn, SsoPage } from './pages/sso';
import { Spinner } from './ui/states';

export function App() {
  const { state } = useSession();
  const location = useLocation();
  if (state.status === 'loading') return <main id="main" className="page"><Spinner label="Restoring your session…" /></main>;
  // The pages of mailed links open whatever the session (an invitation may reach someone signed in).
  const open = publicPageFor(location.pathname);
  if (open) return open;
  if (state.status === 'signed-out') {
    if (location.pathname === '/sso') return <SsoPage />;
    if (location.pathname !== '/sign-in') {
      return <Navigate to="/sign-in" replace state={state.keepPlace ? { from: location.pathname + location.search } : null} />;
    }
    return <SignInPage notice={state.notice} />;
  }
  return <SignedIn />;
}

function SignedIn() {
  const location = useLocation();
  const user = useUser();
  if (location.pathname === '/sign-in') {
    // Just signed in: back to the page that was asked for (a deep link, an expired session), else
    // the MFA enrolment first when MFA is off.
    const from = (location.state as { from?: string } | null)?.from;
    const target = from && from !== '/' && from !== '/sign-in' ? from : !user.mfaEnabled ? '/account/mfa' : '/';
    return <Navigate to={target} replace />;
  }
  // Just signed in through single sign-on (or the MFA step after it).
  if (location.pathname === '/sso') return <AfterSsoSignIn fallback={!user.mfaEnabled ? '/account/mfa' : '/'} />;
  return (
    <Frame>
      <Routes>
        <Route path="/" element={<OverviewPage />} />
        <Route path="/account" element={<AccountPage />} />
        <Route path="/account/mfa" element={<MfaSetupPage />} />
        <Route path="/partners" element={<PartnersPage />} />
        <Route path="/partners/:partnerId" element={<PartnerPage />} />
        <Route path="/organizations" element={<OrganizationsPage />} />
        <Route path="/organizations/:orgId" element={<OrganizationPage />} />
        <Route path="/sites" element={<SitesPage />} />
        <Route path="/sites/:siteId" element={<SitePage />} />
        <Route path="/devices" element={<DevicesPage />} />
        <Route path="/devices/:deviceId/*" element={<DevicePage />} />
        <Route path="/api-keys" element={<ApiKeysPage />} />
        <Route path="/enrollment-keys" element={<EnrollmentKeysPage />} />
        <Route path="/destinations" element={<DestinationsPage />} />
        <Route path="/destinations/:destinationId" element={<DestinationPage />} />
        <Route path="/users" element={<UsersPage />} />
        <Route path="/users/:userId" element={<UserPage />} />
        <Route path="/audit" element={<AuditPage />} />
        <Route path="/audit/:entryId" element={<AuditEntryPage />} />
        <Route path="*" element={<NotFoundPage />} />
      </Routes>
    </Frame>
  );
}

/**
 * After a page change inside the console, the new page's main heading takes the focus (made
 * focusable with tabIndex=-1), so keyboard and screen-reader users start at the new page rather than
 * at the top of the document. Not on a first load, and not when something else took the focus
 * meanwhile (a field the page focuses itself). Pages that render their heading after loading are
 * waited for, up to a few seconds. Only a new pathname counts: filters in the query string do not.
 */
function useFocusHeadingOnNavigation(pathname: string, firstLoad: boolean) {
  const first = useRef(firstLoad);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    const before = document.activeElement;
    let timer = 0;
    let tries = 0;
    const attempt = () => {
      const active = document.activeElement;
      if (active !== before && active !== document.body && active !== null) return;
      const heading = document.querySelector<HTMLElement>('main h1');
      if (heading) {
        if (!heading.hasAttribute('tabindex')) heading.tabIndex = -1;
        heading.focus();
        return;
      }
      if (++tries < 60) timer = window.setTimeout(attempt, 50);
    };
    timer = window.setTimeout(attempt, 0);
    return () => window.clearTimeout(timer);
  }, [pathname]);
}

function Frame({ children }: { children: React.ReactNode }) {
  const user = useUser();
  const can = useCan();
  const { signOut } = useSession();
  const location = useLocation();
  const menuId = useId();
  const menuButton = useRef<HTMLButtonElement>(null);
  // The menu's open state matters below 800 px only, where the navigation collapses behind a button.
  const [menuOpen, setMenuOpen] = useState(false);
  useFocusHeadingOnNavigation(location.pathname, location.key === 'default');

  // Choosing a page closes the menu.
  useEffect(() => setMenuOpen(false), [location.pathname]);
  // Escape closes it, and the focus goes back to its button.
  useEffect(() => {
    if (!menuOpen) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape' || e.defaultPrevented) return;
      // An open dialog's Escape belongs to the dialog.
      if (document.querySelector('dialog[open]')) return;
      setMenuOpen(false);
      menuButton.current?.focus();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [menuOpen]);

  return (
    <div className="frame">
      <a className="skip-link" href="#main">Skip to content</a>
      <header className="top">
        <span className="brand">Device Management</span>
        <button
          ref={menuButton}
          type="button"
          className="menu-button"
          aria-expanded={menuOpen}
          aria-controls={menuId}
          onClick={() => setMenuOpen((open) => !open)}
        >
          <span aria-hidden="true" className="menu-icon">{menuOpen ? '✕' : '☰'}</span> Menu
        </button>
        {/* A link chosen in the menu closes it (also when it is the page already shown). */}
        <div id={menuId} className={`menu${menuOpen ? ' open' : ''}`} onClick={(e) => { if ((e.target as Element).closest('a')) setMenuOpen(false); }}>
          <nav aria-label="Sections">
            <NavLink to="/" end>Overview</NavLink>
            {user.scope === 'system' && <NavLink to="/partners">Partners</NavLink>}
            {user.scope === 'partner' && user.partnerId && can('organizations:read') && <NavLink to={`/partners/${user.partnerId}`}>Partner</NavLink>}
            {can('organizations:read') && <NavLink to="/organizations">Organizations</NavLink>}
            {can('organizations:read') && <NavLink to="/sites">Sites</NavLink>}
            {can('devices:read') && <NavLink to="/devices">Devices</NavLink>}
            {can('organizations:read') && <NavLink to="/api-keys">API keys</NavLink>}
            {can('organizations:read') && <NavLink to="/enrollment-keys">Enrollment keys</NavLink>}
            {can('organizations:read') && <NavLink to="/destinations">Destinations</NavLink>}
            {can('users:read') && <NavLink to="/users">Users</NavLink>}
            {can('audit:read') && <NavLink to="/audit">Audit log</NavLink>}
          </nav>
          <div className="who">
            <NavLink to="/account" aria-label={`My account: ${user.name} · ${user.role} (${user.scope})`}>{user.name} · {user.role} ({user.scope})</NavLink>
            <button type="button" onClick={() => void signOut()}>Sign out</button>
          </div>
        </div>
      </header>
      {!user.mfaEnabled && (
        <p className="banner" role="note">Multi-factor authentication is off: actions that change keys and settings need it. <NavLink to="/account/mfa">Set it up</NavLink></p>
      )}
      {user.mfaEnabled && !user.mfaVerified && (
        <p className="banner" role="note">This session was opened without a code: actions that need MFA are refused. Sign out and in again to use them.</p>
      )}
      {children}
    </div>
  );
}
