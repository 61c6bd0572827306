// The forms of the API key screen, on the key form base: create (the key comes back once) and edit
// (name, scopes, rate limit).
import { useState } from 'react';
import { api, call } from '../../api/client';
import type { Organization } from '../../api/directory';
import type { paths } from '../../api/schema';
import type { Ok } from '../../api/types';
import { Checkbox } from '../../ui/forms';
import { CountField, KeyForm, NameField, NewKeyForm, integerError, nameError, useKeyForm, useNewKeyFields, type Range } from './key-form';

export type ApiKey = Ok<'/api/v1/api-keys/{id}', 'get'>;
export type NewApiKey = Ok<'/api/v1/api-keys', 'post'>;
type CreateBody = paths['/api/v1/api-keys']['post']['requestBody']['content']['application/json'];
type UpdateBody = NonNullable<paths['/api/v1/api-keys/{id}']['patch']['requestBody']>['content']['application/json'];
export type Scope = NonNullable<CreateBody['scopes']>[number];
type FieldName = 'orgId' | 'name' | 'scopes' | 'rateLimit' | 'expiresAt';

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
const RATE_LIMIT: Range = { min: 1, max: 100_000, default: 1000 };
const RATE_LIMIT_LABEL = 'Rate limit (requests per hour)';
const RATE_LIMIT_RANGE = `${RATE_LIMIT.min} to ${RATE_LIMIT.max.toLocaleString()}`;

export function ApiKeyCreateForm({ orgs, initialOrgId, onCreated, onCancel }: {
  orgs: Organization[];
  initialOrgId: string;
  onCreated: (key: NewApiKey) => void;
  onCancel: () => void;
}) {
  const fields = useNewKeyFields(initialOrgId);
  const [scopes, setScopes] = useState<Scope[]>([]);
  const [rateLimit, setRateLimit] = useState(String(RATE_LIMIT.default));
  const form = useKeyForm<FieldName, CreateBody, NewApiKey>((body) => call(api.POST('/api/v1/api-keys', { body })), onCreated);
  const submit = () => form.submit(
    { ...fields.errors(), rateLimit: integerError(rateLimit, RATE_LIMIT) },
    () => ({ ...fields.body(), scopes, rateLimit: Number(rateLimit) }),
  );

  return (
    <NewKeyForm
      form={form} fields={fields} orgs={orgs} title="New API key" titleId="new-api-key-title"
      nameHint="What uses the key, so you recognise it later."
      expiryHint="In your local time. Leave empty for a key that never expires."
      onSubmit={() => void submit()} onCancel={onCancel}
    >
      <ScopeChoices value={scopes} onChange={setScopes} error={form.fieldError('scopes')} />
      <CountField label={RATE_LIMIT_LABEL} range={RATE_LIMIT} value={rateLimit} onChange={setRateLimit} error={form.fieldError('rateLimit')} hint={`${RATE_LIMIT_RANGE}, counted over a sliding hour.`} />
    </NewKeyForm>
  );
}

/** Edits an active key; only what changed is sent. */
export function ApiKeyEditForm({ apiKey, onSaved, onCancel }: { apiKey: ApiKey; onSaved: (key: ApiKey) => void; onCancel: () => void }) {
  const [name, setName] = useState(apiKey.name);
  const [scopes, setScopes] = useState<Scope[]>(apiKey.scopes.filter(isScope));
  const [rateLimit, setRateLimit] = useState(String(apiKey.rateLimit));
  const form = useKeyForm<FieldName, UpdateBody, ApiKey>((body) => call(api.PATCH('/api/v1/api-keys/{id}', { params: { path: { id: apiKey.id } }, body })), onSaved);
  const submit = () => form.submit({ name: nameError(name), rateLimit: integerError(rateLimit, RATE_LIMIT) }, () => {
    const body: UpdateBody = {};
    if (name.trim() !== apiKey.name) body.name = name.trim();
    if (!sameSet(scopes, apiKey.scopes)) body.scopes = scopes;
    if (Number(rateLimit) !== apiKey.rateLimit) body.rateLimit = Number(rateLimit);
    return Object.keys(body).length === 0 ? null : body;
  });

  const titleId = `edit-${apiKey.id}`;
  return (
    <KeyForm form={form} titleId={titleId} title={<>Edit “{apiKey.name}”</>} inRow submitLabels={['Save changes', 'Saving…']} onSubmit={() => void submit()} onCancel={onCancel}>
      <NameField value={name} onChange={setName} error={form.fieldError('name')} />
      <ScopeChoices value={scopes} onChange={setScopes} error={form.fieldError('scopes')} />
      <CountField label={RATE_LIMIT_LABEL} range={RATE_LIMIT} value={rateLimit} onChange={setRateLimit} error={form.fieldError('rateLimit')} hint={`${RATE_LIMIT_RANGE}.`} />
    </KeyForm>
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
