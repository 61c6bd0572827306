// The "Single sign-on" section of the partner and organization pages (API.md §10): what is set up,
// and for callers who may change it (organizations:write and an MFA-verified session), the form,
// and Remove (ssoConfig: null) after a question that opens on Cancel.
import { useEffect, useRef, useState } from 'react';
import { ConfirmButton } from '../../ui/confirm';
import { ErrorMessage } from '../../ui/states';
import { useAction } from '../../ui/use-load';
import { Gated, WriteGateNote, useWriteGate } from '../../ui/write-gate';
import type { SsoInput, SsoView } from './sso-config';
import { SsoForm } from './sso-form';
import './sso.css';
import { useNotice } from '../../ui/notice';

export function SsoSettings({ tenant, name, config, writable, save, onChanged }: {
  /** What the configuration belongs to, in words: "partner" or "organization". */
  tenant: 'partner' | 'organization';
  name: string;
  config: SsoView | null;
  /** Whether the caller's scope and role may change it at all (the MFA part is checked here). */
  writable: boolean;
  save: (config: SsoInput | null) => Promise<unknown>;
  /** After a save or removal: reload the page's data. */
  onChanged: () => void;
}) {
  const gate = useWriteGate('single sign-on settings');
  const [editing, setEditing] = useState(false);
  const [notice, setNotice] = useNotice();
  const editButton = useRef<HTMLButtonElement>(null);
  const remove = useAction(async () => {
    await save(null);
    setNotice(`Single sign-on removed: the users of ${name} sign in with their password again.`);
    onChanged();
  });
  const done = (message: string | null) => {
    setEditing(false);
    setNotice(message);
    if (message) onChanged();
    else requestAnimationFrame(() => editButton.current?.focus());
  };

  return (
    <section className="tenancy-section sso-settings" aria-labelledby="sso-title">
      <div className="tenancy-header">
        <h2 id="sso-title">Single sign-on</h2>
        {writable && !editing && (
          <div className="actions">
            <Gated allowed={gate.allowed} label={config ? 'Edit single sign-on' : 'Set up single sign-on'}>
              <button ref={editButton} type="button" onClick={() => { setEditing(true); setNotice(null); remove.clearError(); }}>
                {config ? 'Edit single sign-on' : 'Set up single sign-on'}
              </button>
            </Gated>
            {config && (
              <Gated allowed={gate.allowed} label="Remove single sign-on">
                <ConfirmButton
                  label="Remove single sign-on"
                  question={<>Remove single sign-on from <strong>{name}</strong>? Its users can no longer sign in through {config.issuer}; those without a password here cannot sign in until they reset it. The stored client secret is deleted.</>}
                  confirmLabel="Remove single sign-on"
                  onConfirm={() => remove.run()}
                  disabled={remove.pending}
                />
              </Gated>
            )}
          </div>
        )}
      </div>
      {writable && <WriteGateNote gate={gate} />}
      <FocusedNotice message={notice} />
      <ErrorMessage error={remove.error} />
      {editing ? (
        <SsoForm
          stored={config}
          save={(input) => save(input)}
          onSaved={() => done(`Single sign-on of ${name} saved.`)}
          onCancel={() => done(null)}
        />
      ) : (
        <SsoSummary tenant={tenant} config={config} />
      )}
    </section>
  );
}

function SsoSummary({ tenant, config }: { tenant: string; config: SsoView | null }) {
  if (!config) return <p className="state state-empty">Not set up: the users of this {tenant} sign in with their password.</p>;
  const mapping = Object.entries(config.roleMapping);
  return (
    <div className="panel" role="group" aria-label="Single sign-on settings">
      <dl className="props sso-props">
        <dt>Status</dt><dd>{config.enabled ? 'Enabled' : 'Disabled (kept, not used)'}</dd>
        <dt>Issuer</dt><dd><code>{config.issuer}</code></dd>
        <dt>Client ID</dt><dd><code>{config.clientId}</code></dd>
        <dt>Client secret</dt><dd>{config.clientSecretSet ? 'Stored (never shown)' : 'None (public client)'}</dd>
        <dt>E-mail domains</dt><dd>{config.emailDomains.join(', ')}</dd>
        <dt>Accounts at first sign-in</dt><dd>{config.jitProvisioning ? `Created, with the role ${config.defaultRole} unless mapped` : 'Not created: only existing users sign in'}</dd>
        <dt>Role claim</dt><dd>{config.roleClaim ?? '—'}</dd>
        <dt>Role mapping</dt><dd>{mapping.length > 0 ? mapping.map(([value, role]) => `${value} → ${role}`).join(', ') : '—'}</dd>
        <dt>Password sign-in</dt><dd>{config.enforce ? 'Refused (single sign-on enforced)' : 'Allowed'}</dd>
        <dt>Provider’s MFA</dt><dd>{config.trustIdpMfa ? 'Trusted' : 'Not trusted: users with MFA enter their code too'}</dd>
      </dl>
    </div>
  );
}

/** The outcome of a save or removal, focused when it appears so it is read out where the user is. */
function FocusedNotice({ message }: { message: string | null }) {
  const ref = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (message) ref.current?.focus();
  }, [message]);
  if (!message) return null;
  return <p ref={ref} tabIndex={-1} className="notice" role="status">{message}</p>;
}
