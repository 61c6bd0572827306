// Pieces the user and account screens share: who may change users (users:write and an MFA-verified
// session), the names behind ids, a heading that takes the focus when the reader arrives, a notice that
// takes it when an action is done, and a table that scrolls inside its frame on a phone.
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { Link, useLocation } from 'react-router';
import { api, call } from '../../api/client';
import { loadOrganizations, loadPartnersInReach } from '../../api/directory';
import { useCan, useUser } from '../../session/session';
import { useLoad, type Loaded } from '../../ui/use-load';
import type { WriteGate } from '../../ui/write-gate';
import { orgName, partnerName, type User, type UserDirectory } from './user';

/** The write gate of the user screens: users:write, MFA on, and a session opened with a code (API.md §3). */
export function useUsersGate(): WriteGate {
  const user = useUser();
  const can = useCan();
  if (!can('users:write')) {
    return { allowed: false, reason: `Your role (${user.role}) may look at users but not change them: that needs the users:write permission.` };
  }
  if (!user.mfaEnabled) {
    return { allowed: false, reason: <>Inviting, changing and removing users needs multi-factor authentication, which is off for your account. <Link to="/account/mfa">Set up MFA</Link>, then sign in again with a code.</> };
  }
  if (!user.mfaVerified) {
    return { allowed: false, reason: 'Inviting, changing and removing users needs a session opened with an MFA code. Sign out and sign in again with a code from your authenticator app.' };
  }
  return { allowed: true, reason: null };
}

/** The organizations and partners in reach, and a partner user's own organization access. */
export function useUserDirectory(): Loaded<UserDirectory> {
  const user = useUser();
  return useLoad(async () => {
    const [orgs, partners, ownAccess] = await Promise.all([
      loadOrganizations(),
      loadPartnersInReach(user.scope),
      user.scope === 'partner'
        ? call(api.GET('/api/v1/users/{id}', { params: { path: { id: user.id } } })).then((me) => me.orgAccess, () => null)
        : Promise.resolve(null),
    ]);
    return { orgs, partners, ownAccess };
  }, [user.id, user.scope]);
}

/**
 * The page's heading. It takes the focus when the reader arrives by navigating inside the console
 * (a link, a create or delete), so a screen reader starts at the new page; not on a first load.
 */
export function PageHeading({ children }: { children: ReactNode }) {
  const location = useLocation();
  const ref = useRef<HTMLHeadingElement>(null);
  const [navigated] = useState(() => location.key !== 'default');
  useEffect(() => {
    if (navigated) ref.current?.focus();
  }, [navigated]);
  return <h1 ref={ref} tabIndex={-1}>{children}</h1>;
}

/**
 * The outcome of the last action. Focused when its text changes (not on re-renders), so it is read
 * out where the user is; `tone` bad for failures the server reported as outcomes.
 */
export function Notice({ message, tone = 'notice' }: { message: ReactNode; tone?: 'notice' | 'bad' }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (message) ref.current?.focus();
  }, [message]);
  if (!message) return null;
  return <div ref={ref} tabIndex={-1} className={tone === 'bad' ? 'state state-error' : 'notice users-notice'} role="status">{message}</div>;
}

/** A wide table scrolls inside this frame, not the page (narrow screens); keyboard users can scroll it too. */
export function TableScroll({ label, children }: { label: string; children: ReactNode }) {
  return <div className="users-scroll" role="region" aria-label={label} tabIndex={0}>{children}</div>;
}

/** Where a user (or invitation) belongs, its partner and organization names linked to their pages. */
export function WhereLinks({ item, directory }: { item: Pick<User, 'scope' | 'partnerId' | 'orgId'>; directory: UserDirectory | undefined }) {
  const user = useUser();
  if (item.scope === 'system') return <>Platform</>;
  if (item.scope === 'partner') {
    const name = item.partnerId ? partnerName(directory, item.partnerId) : null;
    if (!name) return <>Partner</>;
    return <>Partner {user.scope === 'system' ? <Link to={`/partners/${item.partnerId}`}>{name}</Link> : name}</>;
  }
  if (!item.orgId) return <>Organization</>;
  return <Link to={`/organizations/${item.orgId}`}>{orgName(directory, item.orgId)}</Link>;
}
