// API keys: the list with its filters, create, edit, rotate and revoke (SPEC "API key", API.md §5).
import { Fragment, useState } from 'react';
import { api, call } from '../../api/client';
import { useUser } from '../../session/session';
import { ConfirmButton } from '../../ui/confirm';
import { Field } from '../../ui/forms';
import { formatDateTime } from '../../ui/format';
import { Pager } from '../../ui/pager';
import { ErrorMessage, Loadable } from '../../ui/states';
import { useAction, useLoad } from '../../ui/use-load';
import { ApiKeyCreateForm, ApiKeyEditForm, type ApiKey, type NewApiKey } from './api-key-forms';
import {
  Gated, KeyReveal, NewKeyButton, OrganizationFilter, PAGE_SIZE, StatusBadge, WriteGateNote, initialOrg, orgName, pagesOf,
  useListParams, useOrganizations, useWriteGate, type Revealed,
} from './common';

const STATUSES = ['active', 'expired', 'revoked'] as const satisfies readonly ApiKey['status'][];
type Status = (typeof STATUSES)[number];
const isStatus = (s: string): s is Status => (STATUSES as readonly string[]).includes(s);

export function ApiKeysPage() {
  const user = useUser();
  const gate = useWriteGate();
  const orgs = useOrganizations();
  const { page, values, setPage, setFilter } = useListParams(['orgId', 'status'] as const);
  const status = isStatus(values.status) ? values.status : undefined;
  const list = useLoad(
    () => call(api.GET('/api/v1/api-keys/', { params: { query: { page, limit: PAGE_SIZE, orgId: values.orgId || undefined, status } } })),
    [page, values.orgId, status],
  );
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<string | null>(null);
  const [revealed, setRevealed] = useState<Revealed | null>(null);
  const [done, setDone] = useState<string | null>(null);
  // One row action at a time; its error shows under that row.
  const [acting, setActing] = useState<string | null>(null);
  const rowAction = useAction(async (key: ApiKey, op: 'rotate' | 'revoke') => {
    setActing(key.id);
    setDone(null);
    if (op === 'rotate') {
      const rotated = await call(api.POST('/api/v1/api-keys/{id}/rotate', { params: { path: { id: key.id } } }));
      reveal(rotated, `New key for “${rotated.name}”`);
    } else {
      await call(api.DELETE('/api/v1/api-keys/{id}', { params: { path: { id: key.id } } }));
      setDone(`The key “${key.name}” (${key.keyPrefix}…) is revoked.`);
    }
    list.reload();
  });

  const reveal = (key: NewApiKey, title: string) => setRevealed({ title, secret: key.key, warning: key.warning });

  if (revealed) {
    return (
      <main id="main" className="page keys">
        <h1>API keys</h1>
        <KeyReveal revealed={revealed} onDone={() => setRevealed(null)} />
      </main>
    );
  }

  const multiOrg = (orgs.data?.length ?? 0) > 1;
  return (
    <main id="main" className="page keys">
      <h1>API keys</h1>
      <p>API keys let scripts and integrations call the API without a user session, within their scopes and rate limit. A key is shown once, when it is created or rotated.</p>
      <WriteGateNote gate={gate} />
      {done && <p className="notice" role="status">{done}</p>}
      <ErrorMessage error={orgs.error} onRetry={orgs.reload} />

      {creating && orgs.data ? (
        <ApiKeyCreateForm
          orgs={orgs.data}
          initialOrgId={initialOrg(user, orgs.data, values.orgId)}
          onCreated={(key) => {
            setCreating(false);
            reveal(key, `API key “${key.name}” created`);
            list.reload();
          }}
          onCancel={() => setCreating(false)}
        />
      ) : (
        <NewKeyButton label="New API key" gate={gate} orgs={orgs.data} onClick={() => { setDone(null); setCreating(true); }} />
      )}

      <form className="filters" aria-label="Filter API keys" onSubmit={(e) => e.preventDefault()}>
        <OrganizationFilter orgs={orgs.data ?? []} value={values.orgId} onChange={(v) => setFilter('orgId', v)} />
        <Field label="Status">
          <select value={status ?? ''} onChange={(e) => setFilter('status', e.target.value)}>
            <option value="">Any status</option>
            {STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </Field>
      </form>

      <Loadable state={list} isEmpty={(body) => body.data.length === 0} empty={values.orgId || status ? 'No API key matches these filters.' : 'No API keys yet.'}>
        {(body) => (
          <>
            <table className="keys-table" aria-busy={list.loading}>
              <caption className="hint">API keys, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  {multiOrg && <th scope="col">Organization</th>}
                  <th scope="col">Key prefix</th>
                  <th scope="col">Status</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Rate limit</th>
                  <th scope="col">Uses</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Created</th>
                  <th scope="col"><span className="hint">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                {body.data.map((key) => {
                  const active = key.status === 'active';
                  const label = `“${key.name}” (${key.keyPrefix}…)`;
                  const columns = multiOrg ? 11 : 10;
                  return (
                    <Fragment key={key.id}>
                      <tr>
                        <th scope="row">{key.name}</th>
                        {multiOrg && <td>{orgName(orgs.data, key.orgId)}</td>}
                        <td className="nowrap"><code>{key.keyPrefix}…</code></td>
                        <td><StatusBadge status={key.status} /></td>
                        <td>{key.scopes.length ? key.scopes.map((s) => <code key={s}>{s} </code>) : <span className="hint">none</span>}</td>
                        <td className="nowrap">{key.rateLimit.toLocaleString()}/h</td>
                        <td>{key.usageCount.toLocaleString()}</td>
                        <td>{formatDateTime(key.lastUsedAt)}</td>
                        <td>{key.expiresAt ? formatDateTime(key.expiresAt) : 'never'}</td>
                        <td>{formatDateTime(key.createdAt)}</td>
                        <td>
                          {active ? (
                            <div className="actions">
                              <Gated allowed={gate.allowed} label="Edit">
                                <button type="button" aria-label={`Edit ${label}`} aria-expanded={editing === key.id} onClick={() => setEditing(editing === key.id ? null : key.id)}>Edit</button>
                              </Gated>
                              <Gated allowed={gate.allowed} label="Rotate">
                                <ConfirmButton
                                  label="Rotate"
                                  danger={false}
                                  disabled={rowAction.pending}
                                  question={<>Rotate the API key {label}? The current key stops working at once; the new one is shown once. Name, scopes, rate limit and expiry are kept; the usage count starts again from 0.</>}
                                  confirmLabel="Rotate the key"
                                  onConfirm={() => rowAction.run(key, 'rotate')}
                                />
                              </Gated>
                              <Gated allowed={gate.allowed} label="Revoke">
                                <ConfirmButton
                                  label="Revoke"
                                  disabled={rowAction.pending}
                                  question={<>Revoke the API key {label}? Every request with it is refused from now on. This cannot be undone.</>}
                                  confirmLabel="Revoke the key"
                                  onConfirm={() => rowAction.run(key, 'revoke')}
                                />
                              </Gated>
                            </div>
                          ) : (
                            <span className="hint">{key.status === 'revoked' ? 'Revoked: cannot be changed' : 'Expired: cannot be changed'}</span>
                          )}
                        </td>
                      </tr>
                      {acting === key.id && rowAction.error && (
                        <tr className="keys-detail"><td colSpan={columns}><ErrorMessage error={rowAction.error} /></td></tr>
                      )}
                      {editing === key.id && active && (
                        <tr className="keys-detail"><td colSpan={columns}>
                          <ApiKeyEditForm
                            apiKey={key}
                            onSaved={(saved) => {
                              setEditing(null);
                              setDone(`Saved the changes to “${saved.name}”.`);
                              list.reload();
                            }}
                            onCancel={() => setEditing(null)}
                          />
                        </td></tr>
                      )}
                    </Fragment>
                  );
                })}
              </tbody>
            </table>
            <Pager pagination={pagesOf(body.pagination)} onPage={setPage} label="API key pages" />
          </>
        )}
      </Loadable>
    </main>
  );
}
