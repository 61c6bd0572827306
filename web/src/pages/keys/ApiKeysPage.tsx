// API keys: the list with its filters, create, edit, rotate and revoke (SPEC "API key", API.md §5).
import { api, call } from '../../api/client';
import { formatDateTime } from '../../ui/format';
import { PAGE_SIZE } from '../../ui/list-query';
import { StatusBadge } from '../../ui/status-badge';
import { ApiKeyCreateForm, ApiKeyEditForm, type ApiKey, type NewApiKey } from './api-key-forms';
import { KeyAction, KeyScreen, RowFormButton, useKeyScreen, type KeyFilter } from './key-list';

const STATUSES = ['active', 'expired', 'revoked'] as const satisfies readonly ApiKey['status'][];
type Status = (typeof STATUSES)[number];
const isStatus = (s: string): s is Status => (STATUSES as readonly string[]).includes(s);
const STATUS_FILTER: KeyFilter<'status'> = { name: 'status', label: 'Status', options: [['', 'Any status'], ...STATUSES.map((s): [string, string] => [s, s])] };

export function ApiKeysPage() {
  const screen = useKeyScreen(STATUS_FILTER, ({ page, filters }) => call(api.GET('/api/v1/api-keys', {
    params: { query: { page, limit: PAGE_SIZE, orgId: filters.orgId || undefined, status: isStatus(filters.status) ? filters.status : undefined } },
  })));
  const reveal = (key: NewApiKey, title: string) => screen.reveal({ title, secret: key.key, warning: key.warning });
  const rotate = async (key: ApiKey) => {
    const rotated = await call(api.POST('/api/v1/api-keys/{id}/rotate', { params: { path: { id: key.id } } }));
    reveal(rotated, `New key for “${rotated.name}”`);
  };
  const revoke = async (key: ApiKey) => {
    await call(api.DELETE('/api/v1/api-keys/{id}', { params: { path: { id: key.id } } }));
    return `The key “${key.name}” (${key.keyPrefix}…) is revoked.`;
  };

  return (
    <KeyScreen
      screen={screen}
      noun="API key"
      intro="API keys let scripts and integrations call the API without a user session, within their scopes and rate limit. A key is shown once, when it is created or rotated."
      newKey={{ Form: ApiKeyCreateForm, onCreated: (key) => reveal(key, `API key “${key.name}” created`) }}
      headers={['Key prefix', 'Status', 'Scopes', 'Rate limit', 'Uses', 'Last used', 'Expires', 'Created']}
      row={(key) => {
        const active = key.status === 'active';
        const label = `“${key.name}” (${key.keyPrefix}…)`;
        return {
          cells: (
            <>
              <td className="nowrap"><code>{key.keyPrefix}…</code></td>
              <td><StatusBadge status={key.status} /></td>
              <td>{key.scopes.length ? key.scopes.map((s) => <code key={s}>{s} </code>) : <span className="hint">none</span>}</td>
              <td className="nowrap">{key.rateLimit.toLocaleString()}/h</td>
              <td>{key.usageCount.toLocaleString()}</td>
              <td>{formatDateTime(key.lastUsedAt)}</td>
              <td>{key.expiresAt ? formatDateTime(key.expiresAt) : 'never'}</td>
              <td>{formatDateTime(key.createdAt)}</td>
            </>
          ),
          actions: active ? (
            <div className="actions">
              <RowFormButton screen={screen} keyId={key.id} label="Edit" name={`Edit ${label}`} />
              <KeyAction
                screen={screen} target={key} run={() => rotate(key)} label="Rotate" confirmLabel="Rotate the key" danger={false}
                question={<>Rotate the API key {label}? The current key stops working at once; the new one is shown once. Name, scopes, rate limit and expiry are kept; the usage count starts again from 0.</>}
              />
              <KeyAction
                screen={screen} target={key} run={() => revoke(key)} label="Revoke" confirmLabel="Revoke the key"
                question={<>Revoke the API key {label}? Every request with it is refused from now on. This cannot be undone.</>}
              />
            </div>
          ) : (
            <span className="hint">{key.status === 'revoked' ? 'Revoked: cannot be changed' : 'Expired: cannot be changed'}</span>
          ),
          detail: screen.open === key.id && active && (
            <ApiKeyEditForm
              apiKey={key}
              onSaved={(saved) => {
                screen.setOpen(null);
                screen.setDone(`Saved the changes to “${saved.name}”.`);
                screen.list.reload();
              }}
              onCancel={() => screen.setOpen(null)}
            />
          ),
        };
      }}
    />
  );
}
