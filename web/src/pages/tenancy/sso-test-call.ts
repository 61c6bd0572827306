// POST /api/v1/auth/sso/test (organizations:write and an MFA-verified session): asks the identity
// provider for its discovery document without saving anything.
import { api, call } from '../../api/client';
import type { Ok } from '../../api/types';

export interface SsoTestBody { issuer: string; clientId: string }
/** What the provider's discovery document says, as the service found it. */
export type SsoTestResult = Ok<'/api/v1/auth/sso/test', 'post'>;

export function testSsoConfig(body: SsoTestBody): Promise<SsoTestResult> {
  return call(api.POST('/api/v1/auth/sso/test', { body }));
}
