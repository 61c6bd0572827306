// Signed in at /sso: on to the console page asked for before the trip to the identity provider
// (remembered in this tab), else `fallback`; the remembered page is then forgotten.
import { useEffect, useState } from 'react';
import { Navigate } from 'react-router';
import { rememberReturnTo, rememberedReturnTo } from './sso-sign-in';

export function AfterSsoSignIn({ fallback }: { fallback: string }) {
  const [target] = useState(() => {
    const from = rememberedReturnTo();
    return from && from !== '/' && from !== '/sign-in' && from !== '/sso' ? from : fallback;
  });
  useEffect(() => rememberReturnTo(null), []);
  return <Navigate to={target} replace />;
}
