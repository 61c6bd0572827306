// Changing one's own password (API.md §10 POST /auth/password/change): the current one proves it is
// the user at the keyboard. Every other session ends; this one stays. An account that signs in only
// through single sign-on has no password here (409), which is said plainly.
import { useEffect, useRef, useState } from 'react';
import { api, call } from '../../api/client';
import { useUser } from '../../session/session';
import { Field } from '../../ui/forms';
import { ErrorMessage } from '../../ui/states';
import { useAction } from '../../ui/use-load';
import { Notice } from '../users/parts';
import { useNotice } from '../../ui/notice';

type FieldName = 'currentPassword' | 'newPassword' | 'confirm';

export function PasswordForm({ onChanged }: { onChanged: () => void }) {
  const user = useUser();
  const form = useRef<HTMLFormElement>(null);
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [confirm, setConfirm] = useState('');
  const [errors, setErrors] = useState<Partial<Record<FieldName, string>>>({});
  const [done, setDone] = useNotice();
  const change = useAction(async () => {
    await call(api.POST('/api/v1/auth/password/change', { body: { currentPassword: current, newPassword: next } }));
    setCurrent('');
    setNext('');
    setConfirm('');
    setDone('Password changed. Your other sessions have ended; this one stays signed in.');
    onChanged();
  });
  const focusInvalid = () => requestAnimationFrame(() => form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus());
  // A field the server refused (the current password) takes the focus once the error is shown.
  useEffect(() => {
    if (change.error) focusInvalid();
  }, [change.error]);

  const submit = async () => {
    setDone(null);
    const found: Partial<Record<FieldName, string>> = {};
    if (!current) found.currentPassword = 'Enter your current password.';
    if (next.length < 8 || next.length > 256) found.newPassword = 'The new password needs 8 to 256 characters.';
    else if (next === current) found.newPassword = 'The new password is the same as the current one.';
    if (!found.newPassword && confirm !== next) found.confirm = 'This does not match the new password.';
    setErrors(found);
    if (Object.keys(found).length > 0) return focusInvalid();
    await change.run();
  };

  const sso = change.error?.status === 409;
  const wrongCurrent = change.error?.forField('currentPassword');
  const serverError = (field: FieldName) => (field === 'currentPassword' && wrongCurrent ? 'This is not your current password.' : change.error?.forField(field));
  const fieldError = (field: FieldName) => errors[field] ?? serverError(field);
  return (
    <form ref={form} className="panel users-form users-section" noValidate aria-labelledby="password-title" onSubmit={(e) => { e.preventDefault(); void submit(); }}>
      <h2 id="password-title">Change password</h2>
      <p className="hint">Changing it signs out every other session of your account.</p>
      {/* The account name lets a password manager store the new password under the right entry. */}
      <input type="email" autoComplete="username" value={user.email} readOnly hidden />
      <Field label="Current password" error={fieldError('currentPassword')}>
        <input type="password" autoComplete="current-password" value={current} onChange={(e) => setCurrent(e.target.value)} required />
      </Field>
      <Field label="New password" error={fieldError('newPassword')} hint="8 to 256 characters. A long phrase is easier to remember and harder to guess.">
        <input type="password" autoComplete="new-password" value={next} onChange={(e) => setNext(e.target.value)} required />
      </Field>
      <Field label="New password again" error={fieldError('confirm')}>
        <input type="password" autoComplete="new-password" value={confirm} onChange={(e) => setConfirm(e.target.value)} required />
      </Field>
      <Notice message={done} />
      {sso ? (
        <p className="state state-empty" role="alert">
          Your account signs in through your organization’s identity provider (single sign-on), so it has no password here to change. Change it with your identity provider.
        </p>
      ) : (
        !wrongCurrent && <ErrorMessage error={change.error} />
      )}
      <div className="actions">
        <button type="submit" className="primary" disabled={change.pending}>{change.pending ? 'Changing…' : 'Change password'}</button>
      </div>
    </form>
  );
}
