// The pages reachable without being signed in, besides sign-in itself: the mailed links (invitation,
// password reset) and the request for a reset link. They open in every session state.
import type { ReactElement } from 'react';
import './public.css';
import { AcceptInvitationPage } from './AcceptInvitationPage';
import { ForgotPasswordPage } from './ForgotPasswordPage';
import { ResetPasswordPage } from './ResetPasswordPage';

/** The page for a path that needs no session, or null. */
export function publicPageFor(pathname: string): ReactElement | null {
  if (pathname === '/accept-invitation') return <AcceptInvitationPage />;
  if (pathname === '/forgot-password') return <ForgotPasswordPage />;
  if (pathname === '/reset-password') return <ResetPasswordPage />;
  return null;
}
