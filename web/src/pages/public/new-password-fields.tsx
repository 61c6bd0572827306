// A new password and its confirmation (8 to 256 characters, API.md §3), for accepting an invitation
// and for a password reset.
import { Field } from '../../ui/forms';

export function NewPasswordFields({ password, again, onPassword, onAgain, errors, account, autoFocus = false }: {
  password: string;
  again: string;
  onPassword: (value: string) => void;
  onAgain: (value: string) => void;
  errors: { password?: string | undefined; again?: string | undefined };
  /** The account's address when known, so a password manager files the new password under it. */
  account?: string;
  autoFocus?: boolean;
}) {
  return (
    <>
      {account !== undefined && <input type="email" autoComplete="username" value={account} readOnly hidden />}
      <Field label="New password" error={errors.password} hint="8 to 256 characters. A long phrase is easier to remember and harder to guess.">
        <input type="password" autoComplete="new-password" value={password} onChange={(e) => onPassword(e.target.value)} required autoFocus={autoFocus} />
      </Field>
      <Field label="New password again" error={errors.again}>
        <input type="password" autoComplete="new-password" value={again} onChange={(e) => onAgain(e.target.value)} required />
      </Field>
    </>
  );
}
