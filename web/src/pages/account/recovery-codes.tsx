// MFA recovery codes (API.md §10): ten codes, each signing in once in place of an authenticator code
// (for a lost phone). Shown once with copy and download; new codes replace every earlier one. Creating
// them needs MFA on and a session opened with a code.
import { useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { api, call } from '../../api/client';
import { useUser } from '../../session/session';
import { ConfirmButton } from '../../ui/confirm';
import { SecretReveal } from '../../ui/secret-reveal';
import { ErrorMessage } from '../../ui/states';
import { useAction } from '../../ui/use-load';
import { Notice } from '../users/parts';
import { useNotice } from '../../ui/notice';

const WARNING = 'Store these codes somewhere safe now, away from your phone: they are shown only once. Each one signs you in once in place of a code from your authenticator app. Codes you created before these no longer work.';

export function RecoveryCodes() {
  const user = useUser();
  const [codes, setCodes] = useState<string[] | null>(null);
  const [done, setDone] = useNotice();
  const region = useRef<HTMLDivElement>(null);
  const create = useAction(async () => {
    setDone(null);
    setCodes((await call(api.POST('/api/v1/auth/mfa/recovery-codes'))).codes);
  });
  // The codes take the focus when they appear, so they are read out where the user is.
  useEffect(() => {
    if (codes) region.current?.focus();
  }, [codes]);

  const download = () => {
    const text = `Recovery codes for ${user.email} (Device Management)\nEach works once in place of an authenticator code.\n\n${codes!.join('\n')}\n`;
    const link = document.createElement('a');
    link.href = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
    link.download = 'recovery-codes.txt';
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
  };

  let body;
  if (!user.mfaEnabled) {
    body = <p>Recovery codes stand in for your authenticator app if you lose it. They need MFA, which is off: <Link to="/account/mfa">set up MFA</Link> first.</p>;
  } else if (codes) {
    body = (
      <div ref={region} tabIndex={-1}>
        <SecretReveal title="Your new recovery codes" secret={codes.join('\n')} warning={WARNING} onDone={() => { setCodes(null); setDone('Recovery codes stored. Use one on the sign-in page with “Use a recovery code” when your app is not at hand.'); }}>
          <button type="button" onClick={download}>Download as a text file</button>
        </SecretReveal>
      </div>
    );
  } else {
    body = (
      <>
        <p>Each code signs you in once in place of a code from your authenticator app, for when your phone is lost. Creating new codes makes every earlier code stop working.</p>
        {!user.mfaVerified && <p className="notice" id="recovery-reason" role="note">Creating recovery codes needs a session opened with an MFA code. Sign out and sign in again with a code from your app.</p>}
        {user.mfaVerified ? (
          <ConfirmButton
            label="Create recovery codes" confirmLabel="Create new codes" disabled={create.pending}
            question={<>Create ten new recovery codes? Any recovery codes you created before stop working at once. The new ones are shown only once.</>}
            onConfirm={() => create.run()}
          />
        ) : (
          <button type="button" disabled aria-describedby="recovery-reason">Create recovery codes</button>
        )}
      </>
    );
  }
  return (
    <section className="users-section" aria-labelledby="recovery-title">
      <h2 id="recovery-title">Recovery codes</h2>
      <Notice message={done} />
      <ErrorMessage error={create.error} />
      {body}
    </section>
  );
}
