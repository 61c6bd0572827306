// The single sign-on form of a partner or an organization: the provider (issuer, client ID, the
// write-only secret), the redirect URI to register there (with a copy button), the e-mail domains,
// the roles of users it creates, and the switches. "Test configuration" asks the provider without
// saving; Save writes the whole configuration (PATCH, the stored secret kept when the field is empty).
// Problems are shown at their field, the server's too (body.ssoConfig.<field>).
import { useEffect, useRef, useState, type FormEvent } from 'react';
import type { ApiError } from '../../api/client';
import { Checkbox, Field } from '../../ui/forms';
import { ErrorMessage } from '../../ui/states';
import { useAction } from '../../ui/use-load';
import { checkProvider, initialValues, mappingRow, redirectUri, ROLES, toInput, type SsoErrors, type SsoField, type SsoInput, type SsoValues, type SsoView } from './sso-config';
import { RoleMapping } from './sso-role-mapping';
import { testSsoConfig, type SsoTestResult } from './sso-test-call';
import { SsoTestOutcome } from './sso-test-outcome';

const FIELDS: SsoField[] = ['issuer', 'clientId', 'clientSecret', 'emailDomains', 'defaultRole', 'roleClaim', 'roleMapping'];

/** The message of a refused save for a field: a validation path under ssoConfig, or a code that belongs to it. */
function saveError(error: ApiError | null, field: SsoField): string | undefined {
  if (!error) return undefined;
  const named = error.forField(`ssoConfig.${field}`);
  if (named) return named;
  if (field === 'issuer' && error.code === 'SSO_CONFIG_INVALID') return error.message;
  if (field === 'emailDomains' && error.code === 'CONFLICT') return error.message;
  return undefined;
}

/** A refused test's validation message for a field of its body (issuer, clientId). */
const testError = (error: ApiError | null, field: SsoField) => error?.forField(field);

export function SsoForm({ stored, save, onSaved, onCancel }: {
  stored: SsoView | null;
  save: (config: SsoInput) => Promise<unknown>;
  onSaved: () => void;
  onCancel: () => void;
}) {
  const form = useRef<HTMLFormElement>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  // Opened by a button: its heading takes the focus, so the redirect URI below it is read next.
  useEffect(() => heading.current?.focus(), []);
  const [values, setValues] = useState<SsoValues>(() => initialValues(stored));
  const [errors, setErrors] = useState<SsoErrors>({});
  const [copied, setCopied] = useState<string | null>(null);
  const [tested, setTested] = useState<SsoTestResult | null>(null);
  const set = <K extends keyof SsoValues>(key: K, value: SsoValues[K]) => {
    setValues((v) => ({ ...v, [key]: value }));
    // What a test found is about the provider fields as they were.
    if (key === 'issuer' || key === 'clientId') setTested(null);
  };
  const focusInvalid = () => requestAnimationFrame(() => form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus());

  // The secret is not needed: the test reads the provider's discovery document only.
  const test = useAction(async () => testSsoConfig({ issuer: values.issuer.trim(), clientId: values.clientId.trim() }));
  const saving = useAction(async (input: SsoInput) => {
    await save(input);
    onSaved();
  });
  const fieldError = (field: SsoField) => errors[field] ?? saveError(saving.error, field) ?? testError(test.error, field);
  const placed = (error: ApiError | null, find: (e: ApiError | null, f: SsoField) => string | undefined) => FIELDS.some((f) => find(error, f));
  // A refusal that names a field: that field takes the focus once it shows the message.
  useEffect(() => {
    if (placed(saving.error, saveError) || placed(test.error, testError)) focusInvalid();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [saving.error, test.error]);

  const runTest = async () => {
    const found: SsoErrors = {};
    checkProvider(values, found);
    setErrors(found);
    setTested(null);
    saving.clearError();
    if (Object.keys(found).length > 0) return focusInvalid();
    const result = await test.run();
    if (result) setTested(result);
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const { input, errors: found } = toInput(values, stored);
    setErrors(found);
    test.clearError();
    if (Object.keys(found).length > 0) return focusInvalid();
    await saving.run(input);
  };

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(redirectUri());
      setCopied('Redirect URI copied to the clipboard.');
    } catch {
      setCopied('Copy failed: select the address and copy it by hand.');
    }
  };

  return (
    <form ref={form} className="panel tenancy-form sso-form" noValidate aria-label="Single sign-on settings" onSubmit={(e) => void submit(e)}>
      <h3 ref={heading} tabIndex={-1}>{stored ? 'Edit single sign-on' : 'Set up single sign-on'}</h3>
      <div className="sso-redirect">
        <p>Register this redirect URI at your identity provider (as the client’s allowed redirect or callback URL):</p>
        <div className="secret">
          <code data-testid="sso-redirect-uri">{redirectUri()}</code>
          <button type="button" data-keeps-notice onClick={() => void copy()}>Copy redirect URI</button>
        </div>
        <p className="hint" aria-live="polite">{copied ?? ''}</p>
      </div>
      <Checkbox label="Enabled: users of the domains below sign in through this identity provider" checked={values.enabled} onChange={(v) => set('enabled', v)} />
      <Field label="Issuer" error={fieldError('issuer')} hint="The identity provider’s issuer URL (its discovery document is ISSUER/.well-known/openid-configuration), e.g. https://login.microsoftonline.com/TENANT/v2.0.">
        <input type="url" inputMode="url" autoComplete="off" spellCheck={false} value={values.issuer} onChange={(e) => set('issuer', e.target.value)} required />
      </Field>
      <div className="side-by-side">
        <Field label="Client ID" error={fieldError('clientId')}>
          <input autoComplete="off" spellCheck={false} value={values.clientId} onChange={(e) => set('clientId', e.target.value)} required />
        </Field>
        <Field
          label="Client secret"
          error={fieldError('clientSecret')}
          hint={stored?.clientSecretSet ? 'A secret is stored (it is never shown). Leave empty to keep the stored secret.' : 'Leave empty for a public client (PKCE only).'}
        >
          <input type="password" autoComplete="new-password" value={values.clientSecret} disabled={values.removeSecret} onChange={(e) => set('clientSecret', e.target.value)} />
        </Field>
      </div>
      {stored?.clientSecretSet && (
        <Checkbox label="Remove the stored secret (a public client)" checked={values.removeSecret} onChange={(v) => setValues((s) => ({ ...s, removeSecret: v, clientSecret: '' }))} />
      )}
      <Field label="E-mail domains" error={fieldError('emailDomains')} hint="One per line (or separated by commas), e.g. contoso.com. Addresses of these domains sign in here; a domain can belong to one tenant’s enabled single sign-on only.">
        <textarea rows={3} spellCheck={false} value={values.emailDomains} onChange={(e) => set('emailDomains', e.target.value)} required />
      </Field>
      <fieldset className="address-fields">
        <legend>Accounts created at first sign-in</legend>
        <Checkbox label="Create the account of an unknown user of these domains at first sign-in (just-in-time provisioning)" checked={values.jitProvisioning} onChange={(v) => set('jitProvisioning', v)} />
        <Field label="Default role" error={fieldError('defaultRole')} hint="The role of a created account when no mapping below applies.">
          <select value={values.defaultRole} onChange={(e) => set('defaultRole', e.target.value as SsoValues['defaultRole'])}>
            {ROLES.map((r) => <option key={r} value={r}>{r}</option>)}
          </select>
        </Field>
        <Field label="Role claim" error={fieldError('roleClaim')} hint="Optional: an ID token claim (e.g. groups or roles) whose values the mapping below turns into roles.">
          <input autoComplete="off" spellCheck={false} value={values.roleClaim} onChange={(e) => set('roleClaim', e.target.value)} />
        </Field>
        <RoleMapping rows={values.mapping} error={fieldError('roleMapping')} onChange={(rows) => set('mapping', rows)} onAdd={() => set('mapping', [...values.mapping, mappingRow()])} />
      </fieldset>
      <fieldset className="address-fields">
        <legend>Sign-in rules</legend>
        <Checkbox label="Enforce: refuse password sign-in for these users" checked={values.enforce} onChange={(v) => set('enforce', v)} />
        <p className="hint">Test a sign-in through the provider before enforcing it: enforced, this tenant’s users (administrators too) can only sign in through it.</p>
        <Checkbox label="Trust the provider’s MFA: a sign-in the provider did with a second factor counts as MFA here" checked={values.trustIdpMfa} onChange={(v) => set('trustIdpMfa', v)} />
      </fieldset>
      {tested && <SsoTestOutcome result={tested} />}
      {test.error && !placed(test.error, testError) && <SsoTestOutcome error={test.error} />}
      {saving.error && !placed(saving.error, saveError) && <ErrorMessage error={saving.error} />}
      <div className="actions">
        <button type="button" disabled={test.pending} onClick={() => void runTest()}>{test.pending ? 'Testing…' : 'Test configuration'}</button>
        <button type="submit" className="primary" disabled={saving.pending}>{saving.pending ? 'Saving…' : 'Save single sign-on'}</button>
        <button type="button" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  );
}
