// The forms of the API key screen: create (the key comes back once) and edit (name, scopes, rate limit).
import { useState, type FormEvent } from 'react';
import { api, call } from '../../api/client';
import type { paths } from '../../api/schema';
import type { Ok } from '../../api/types';
import { Checkbox, Field } from '../../ui/forms';
import { ErrorMessage } from '../../ui/states';
import { useAction } from '../../ui/use-load';
import { NAME_MAX, OrganizationChoice, futureTime, integerError, localNow, nameError, type Organization } from './common';

export type ApiKey = Ok<'/api/v1/api-keys/{id}', 'get'>;
export type NewApiKey = Ok<'/api/v1/api-keys/', 'post'>;
type CreateBody = paths['/api/v1/api-keys/']['post']['requestBody']['content']['application/json'];
type UpdateBody = NonNullable<paths['/api/v1/api-keys/{id}']['patch']['requestBody']>['content']['application/json'];
export type Scope = NonNullable<CreateBody['scopes']>[number];

/**
 * Every scope string the schema enumerates (API.md §5), with what it opens. A Record over the
 * schema's union: a scope added to or dropped from the API fails the console's build until it is here.
 */
const SCOPES: Record<Scope, string> = {
  'devices:read': 'list and read devices, their diagnostic and event logs; live event-log queries',
  'devices:write': 'move devices between sites and decommission them',
  'devices:execute': 'run actions on devices',
  'audit:read': 'read, search and verify the audit log, its reports and checkpoints',
  'audit:export': 'export the audit log',
  '*': 'every scope, including any added later',
};
const SCOPE_NAMES = Object.keys(SCOPES) as Scope[];
const isScope = (s: string): s is Scope => s in SCOPES;

/** The API key schema's rateLimit: an integer 1-100000 requests per hour, 1000 when not given. */
export const RATE_LIMIT = { min: 1, max: 100_000, default: 1000 } as const;

type Errors = Partial<Record<'orgId' | 'name' | 'scopes' | 'rateLimit' | 'expiresAt', string | undefined>>;
const hasErrors = (errors: Errors) => Object.values(errors).some(Boolean);

export function ApiKeyCreateForm({ orgs, initialOrgId, onCreated, onCancel }: {
  orgs: Organization[];
  initialOrgId: string;
  onCreated: (key: NewApiKey) => void;
  onCancel: () => void;
}) {
  const [orgId, setOrgId] = useState(initialOrgId);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>([]);
  const [rateLimit, setRateLimit] = useState(String(RATE_LIMIT.default));
  const [expires, setExpires] = useState('');
  const [errors, setErrors] = useState<Errors>({});
  const create = useAction((body: CreateBody) => call(api.POST('/api/v1/api-keys/', { body })));

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const expiry = futureTime(expires);
    const found: Errors = {
      orgId: orgId ? undefined : 'Choose an organization.',
      name: nameError(name),
      rateLimit: integerError(rateLimit, RATE_LIMIT.min, RATE_LIMIT.max),
      expiresAt: expiry.error,
    };
    setErrors(found);
    if (hasErrors(found) || expiry.error !== undefined) return;
    const body: CreateBody = { orgId, name: name.trim(), scopes, rateLimit: Number(rateLimit) };
    if (expiry.iso) body.expiresAt = expiry.iso;
    const created = await create.run(body);
    if (created) onCreated(created);
  };

  const fieldError = (field: keyof Errors) => errors[field] ?? create.error?.forField(field);
  return (
    <form className="panel" onSubmit={(e) => void submit(e)} noValidate aria-labelledby="new-api-key-title">
      <h2 id="new-api-key-title">New API key</h2>
      <OrganizationChoice orgs={orgs} value={orgId} onChange={setOrgId} error={fieldError('orgId')} />
      <Field label="Name" error={fieldError('name')} hint="What uses the key, so you recognise it later.">
        <input value={name} maxLength={NAME_MAX} onChange={(e) => setName(e.target.value)} required />
      </Field>
      <ScopeChoices value={scopes} onChange={setScopes} error={fieldError('scopes')} />
      <Field label="Rate limit (requests per hour)" error={fieldError('rateLimit')} hint={`${RATE_LIMIT.min} to ${RATE_LIMIT.max.toLocaleString()}, counted over a sliding hour.`}>
        <input type="number" inputMode="numeric" min={RATE_LIMIT.min} max={RATE_LIMIT.max} step={1} value={rateLimit} onChange={(e) => setRateLimit(e.target.value)} />
      </Field>
      <Field label="Expires (optional)" error={fieldError('expiresAt')} hint="In your local time. Leave empty for a key that never expires.">
        <input type="datetime-local" min={localNow()} value={expires} onChange={(e) => setExpires(e.target.value)} />
      </Field>
      <ErrorMessage error={create.error} />
      <div className="actions">
        <button type="submit" className="primary" disabled={create.pending}>{create.pending ? 'Creating…' : 'Create key'}</button>
        <button type="button" onClick={onCancel} disabled={create.pending}>Cancel</button>
      </div>
    </form>
  );
}

/** Edits an active key; only what changed is sent. */
export function ApiKeyEditForm({ apiKey, onSaved, onCancel }: { apiKey: ApiKey; onSaved: (key: ApiKey) => void; onCancel: () => void }) {
  const [name, setName] = useState(apiKey.name);
  const [scopes, setScopes] = useState<Scope[]>(apiKey.scopes.filter(isScope));
  const [rateLimit, setRateLimit] = useState(String(apiKey.rateLimit));
  const [errors, setErrors] = useState<Errors>({});
  const [unchanged, setUnchanged] = useState(false);
  const save = useAction((body: UpdateBody) => call(api.PATCH('/api/v1/api-keys/{id}', { params: { path: { id: apiKey.id } }, body })));

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const found: Errors = { name: nameError(name), rateLimit: integerError(rateLimit, RATE_LIMIT.min, RATE_LIMIT.max) };
    setErrors(found);
    setUnchanged(false);
    if (hasErrors(found)) return;
    const body: UpdateBody = {};
    if (name.trim() !== apiKey.name) body.name = name.trim();
    if (!sameSet(scopes, apiKey.scopes)) body.scopes = scopes;
    if (Number(rateLimit) !== apiKey.rateLimit) body.rateLimit = Number(rateLimit);
    if (Object.keys(body).length === 0) return setUnchanged(true);
    const saved = await save.run(body);
    if (saved) onSaved(saved);
  };

  const fieldError = (field: keyof Errors) => errors[field] ?? save.error?.forField(field);
  const titleId = `edit-${apiKey.id}`;
  return (
    <form onSubmit={(e) => void submit(e)} noValidate aria-labelledby={titleId}>
      <h3 id={titleId}>Edit “{apiKey.name}”</h3>
      <Field label="Name" error={fieldError('name')}>
        <input value={name} maxLength={NAME_MAX} onChange={(e) => setName(e.target.value)} required />
      </Field>
      <ScopeChoices value={scopes} onChange={setScopes} error={fieldError('scopes')} />
      <Field label="Rate limit (requests per hour)" error={fieldError('rateLimit')} hint={`${RATE_LIMIT.min} to ${RATE_LIMIT.max.toLocaleString()}.`}>
        <input type="number" inputMode="numeric" min={RATE_LIMIT.min} max={RATE_LIMIT.max} step={1} value={rateLimit} onChange={(e) => setRateLimit(e.target.value)} />
      </Field>
      {unchanged && <p className="hint" role="status">Nothing changed: there is nothing to save.</p>}
      <ErrorMessage error={save.error} />
      <div className="actions">
        <button type="submit" className="primary" disabled={save.pending}>{save.pending ? 'Saving…' : 'Save changes'}</button>
        <button type="button" onClick={onCancel} disabled={save.pending}>Cancel</button>
      </div>
    </form>
  );
}

function ScopeChoices({ value, onChange, error }: { value: Scope[]; onChange: (scopes: Scope[]) => void; error?: string | undefined }) {
  const toggle = (scope: Scope, on: boolean) => onChange(SCOPE_NAMES.filter((s) => (s === scope ? on : value.includes(s))));
  return (
    <fieldset className={`field${error ? ' field-invalid' : ''}`}>
      <legend>Scopes</legend>
      {SCOPE_NAMES.map((scope) => (
        <div key={scope}>
          <Checkbox label={<><code>{scope}</code> <span className="hint">{SCOPES[scope]}</span></>} checked={value.includes(scope)} onChange={(on) => toggle(scope, on)} />
        </div>
      ))}
      {value.length === 0 && <small className="hint">With no scope the key reaches no scope-protected route.</small>}
      {error && <small className="field-error" role="alert">{error}</small>}
    </fieldset>
  );
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const left = new Set(a);
  const right = new Set(b);
  return left.size === right.size && [...left].every((s) => right.has(s));
}
