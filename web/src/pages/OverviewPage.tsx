// The landing page: who you are and where to go.
import { Link } from 'react-router';
import { useCan, useUser } from '../session/session';

export function OverviewPage() {
  const user = useUser();
  const can = useCan();
  return (
    <main id="main" className="page">
      <h1>Welcome, {user.name}</h1>
      <p>Signed in as {user.email}, {user.role} in {user.scope} scope. You may: {user.permissions.join(', ')}.</p>
      <ul className="cards">
        {can('organizations:read') && <li><Link to="/organizations">Organizations and sites</Link></li>}
        {can('devices:read') && <li><Link to="/devices">Devices</Link>: status, logs, live event logs</li>}
        {can('organizations:read') && <li><Link to="/api-keys">API keys</Link> and <Link to="/enrollment-keys">enrollment keys</Link></li>}
        {can('audit:read') && <li><Link to="/audit">Audit log</Link>: who did what, with the chain's integrity</li>}
      </ul>
    </main>
  );
}
