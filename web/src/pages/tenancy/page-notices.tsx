// What a tenancy screen says above its content: the outcome of the step that led here, or why the
// screen is not for this caller.
import { useEffect, type ReactNode } from 'react';
import { useLocation, useNavigate } from 'react-router';
import { useNotice } from '../../ui/notice';

/** A notice passed with navigate(…, { state: { notice } }) after a create or delete. */
export function RouteNotice() {
  const location = useLocation();
  const navigate = useNavigate();
  const incoming = (location.state as { notice?: string } | null)?.notice;
  const [notice, setNotice] = useNotice(incoming);
  useEffect(() => {
    if (!incoming) return;
    setNotice(incoming);
    // Said once: a reload of the page does not say it again.
    void navigate({ pathname: location.pathname, search: location.search }, { replace: true, state: null });
  }, [incoming, location.pathname, location.search, navigate]);
  return notice ? <p className="notice" role="status">{notice}</p> : null;
}

/** The section's answer to a caller whose scope or role cannot use a screen. */
export function NotAvailable({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main id="main" className="page">
      <h1>{title}</h1>
      <p className="state state-empty" role="note">{children}</p>
    </main>
  );
}
