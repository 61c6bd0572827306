// What "Test configuration" found: the provider's endpoints from its discovery document, or why it
// cannot be used. It takes the focus when it appears, so it is read out where the user is.
import { useEffect, useRef } from 'react';
import type { ApiError } from '../../api/client';
import type { SsoTestResult } from './sso-test-call';

export function SsoTestOutcome({ result, error }: { result?: SsoTestResult; error?: ApiError }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => ref.current?.focus(), [result, error]);
  if (result) {
    return (
      <div ref={ref} tabIndex={-1} className="notice sso-test" role="status" aria-labelledby="sso-test-title">
        <strong id="sso-test-title">Test passed: the identity provider answered.</strong>
        <dl className="props">
          <dt>Issuer</dt><dd><code>{result.issuer}</code></dd>
          <dt>Authorization endpoint</dt><dd><code>{result.authorizationEndpoint}</code></dd>
          <dt>Token endpoint</dt><dd><code>{result.tokenEndpoint}</code></dd>
          <dt>Signing keys (JWKS)</dt><dd><code>{result.jwksUri}</code></dd>
        </dl>
        <p className="hint">Nothing is saved yet: save the configuration to use it. The client ID and secret are checked at the first sign-in through the provider.</p>
      </div>
    );
  }
  return (
    <div ref={ref} tabIndex={-1} className="state state-error sso-test" role="alert">
      <strong>Test failed.</strong>{' '}
      {error?.message}
    </div>
  );
}
