// A partner user's own partner (GET/PATCH /orgs/partners/me): its name and its single sign-on, which
// the partner's administrators set up for the partner's own users (technicians of the MSP).
import { Link } from 'react-router';
import { api, call } from '../../api/client';
import { useCan } from '../../session/session';
import { Loadable } from '../../ui/states';
import { useLoad } from '../../ui/use-load';
import { PageHeading } from '../users/parts';
import { SsoSettings } from './sso-settings';

export function OwnPartnerPage() {
  const can = useCan();
  const loaded = useLoad(() => call(api.GET('/api/v1/orgs/partners/me')), []);
  return (
    <main id="main" className="page">
      {loaded.error && <h1>Your partner</h1>}
      <Loadable state={loaded}>
        {(partner) => (
          <>
            <PageHeading>{partner.name}</PageHeading>
            <p>The partner your account belongs to. Its organizations are on the <Link to="/organizations">Organizations</Link> page.</p>
            <SsoSettings
              tenant="partner"
              name={partner.name}
              config={partner.ssoConfig}
              writable={can('organizations:write')}
              save={(ssoConfig) => call(api.PATCH('/api/v1/orgs/partners/me', { body: { ssoConfig } }))}
              onChanged={loaded.reload}
            />
          </>
        )}
      </Loadable>
    </main>
  );
}
