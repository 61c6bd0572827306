// The service's own logins (dms_app, the sealer, retention) default to DATABASE_URL's server with
// the role as user and no password, which trust, peer or cert authentication admits. A server that
// asks for a password refuses that; then the owner gives the role a password derived from the
// service's secret (every instance shares it, so every instance derives the same one) and the
// login carries it. Operators who set passwords themselves give the DATABASE_*_URL variables.
import { createHmac } from 'node:crypto';
import pg from 'pg';

// invalid_password, invalid_authorization_specification (e.g. "password authentication failed").
const AUTH_FAILURES = new Set(['28P01', '28000']);

export async function loginWithPasswordFallback(owner: pg.Client, url: string, role: string, secret: string | undefined): Promise<string> {
  if (!secret || new URL(url).password !== '') return url;
  const probe = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  try {
    await probe.connect();
    return url;
  } catch (err) {
    // Anything but a refused password is for the start-up check to report as it is.
    if (!AUTH_FAILURES.has((err as { code?: string }).code ?? '')) return url;
  } finally {
    await probe.end().catch(() => {});
  }
  const password = createHmac('sha256', secret).update(`database-login:${role}`).digest('base64url');
  await owner.query(`ALTER ROLE ${owner.escapeIdentifier(role)} PASSWORD ${owner.escapeLiteral(password)}`);
  const withPassword = new URL(url);
  withPassword.password = password;
  return withPassword.toString();
}
