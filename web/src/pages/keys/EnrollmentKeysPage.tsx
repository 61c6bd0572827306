// Enrollment keys: the list, create, rotate and delete (SPEC "Enrollment key", API.md §5). A new key is
// shown once, with the command line that starts the reference agent with it (API.md §7).
import { Fragment, useState } from 'react';
import { api, call } from '../../api/client';
import { useUser } from '../../session/session';
import { ConfirmButton } from '../../ui/confirm';
import { Field } from '../../ui/forms';
import { formatDateTime } from '../../ui/format';
import { Pager } from '../../ui/pager';
import { ErrorMessage, Loadable } from '../../ui/states';
import { useAction, useLoad } from '../../ui/use-load';
import {
  Gated, KeyReveal, NewKeyButton, OrganizationFilter, PAGE_SIZE, StatusBadge, WriteGateNote, initialOrg, loadSites, orgName, pagesOf,
  useListParams, useOrganizations, useWriteGate, type Revealed,
} from './common';
import { EnrollmentKeyCreateForm, EnrollmentKeyRotateForm, type EnrollmentKey, type NewEnrollmentKey } from './enrollment-key-forms';

const WARNING = 'Store this enrollment key now: it is shown only once and cannot be retrieved again. Anyone holding it can enroll devices into the organization until it expires or is used up.';

/** The command that enrolls the reference agent with a key, against the server this console runs on. */
export function agentCommand(key: string): string {
  return `npm run agent -- --server ${window.location.origin} --enrollment-key ${key}`;
}

export function EnrollmentKeysPage() {
  const user = useUser();
  const gate = useWriteGate();
  const orgs = useOrganizations();
  const { page, values, setPage, setFilter } = useListParams(['orgId', 'expired'] as const);
  const expired = values.expired === 'true' ? true : values.expired === 'false' ? false : undefined;
  const list = useLoad(
    () => call(api.GET('/api/v1/enrollment-keys/', { params: { query: { page, limit: PAGE_SIZE, orgId: values.orgId || undefined, expired } } })),
    [page, values.orgId, expired],
  );
  const pageOrgs = [...new Set(list.data?.data.filter((k) => k.siteId).map((k) => k.orgId) ?? [])].sort();
  const siteNames = useLoad(async () => {
    const names = new Map<string, string>();
    for (const sites of await Promise.all(pageOrgs.map(loadSites))) for (const s of sites) names.set(s.id, s.name);
    return names;
  }, [pageOrgs.join(',')]);
  const [creating, setCreating] = useState(false);
  const [rotating, setRotating] = useState<string | null>(null);
  const [revealed, setRevealed] = useState<Revealed | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [acting, setActing] = useState<string | null>(null);
  const remove = useAction(async (key: EnrollmentKey) => {
    setActing(key.id);
    setDone(null);
    await call(api.DELETE('/api/v1/enrollment-keys/{id}', { params: { path: { id: key.id } } }));
    setDone(`The enrollment key “${key.name}” is deleted.`);
    list.reload();
  });

  const reveal = (key: NewEnrollmentKey, title: string) => {
    setRevealed({ title, secret: key.key, warning: WARNING, command: agentCommand(key.key) });
    list.reload();
  };

  if (revealed) {
    return (
      <main id="main" className="page keys">
        <h1>Enrollment keys</h1>
        <KeyReveal revealed={revealed} onDone={() => setRevealed(null)} />
      </main>
    );
  }

  const multiOrg = (orgs.data?.length ?? 0) > 1;
  const columns = multiOrg ? 8 : 7;
  const siteName = (id: string | null) => (id === null ? <span className="hint">any</span> : siteNames.data?.get(id) ?? <code title={id}>{id.slice(0, 8)}…</code>);
  return (
    <main id="main" className="page keys">
      <h1>Enrollment keys</h1>
      <p>An enrollment key lets the agent on a new device join an organization, and optionally a site. It works until it expires or has been used its maximum number of times. A key is shown once, when it is created or rotated.</p>
      <WriteGateNote gate={gate} />
      {done && <p className="notice" role="status">{done}</p>}
      <ErrorMessage error={orgs.error} onRetry={orgs.reload} />

      {creating && orgs.data ? (
        <EnrollmentKeyCreateForm
          orgs={orgs.data}
          initialOrgId={initialOrg(user, orgs.data, values.orgId)}
          onCreated={(key) => {
            setCreating(false);
            reveal(key, `Enrollment key “${key.name}” created`);
          }}
          onCancel={() => setCreating(false)}
        />
      ) : (
        <NewKeyButton label="New enrollment key" gate={gate} orgs={orgs.data} onClick={() => { setDone(null); setCreating(true); }} />
      )}

      <form className="filters" aria-label="Filter enrollment keys" onSubmit={(e) => e.preventDefault()}>
        <OrganizationFilter orgs={orgs.data ?? []} value={values.orgId} onChange={(v) => setFilter('orgId', v)} />
        <Field label="Expiry">
          <select value={values.expired} onChange={(e) => setFilter('expired', e.target.value)}>
            <option value="">Any</option>
            <option value="false">Not expired</option>
            <option value="true">Expired</option>
          </select>
        </Field>
      </form>

      <Loadable state={list} isEmpty={(body) => body.data.length === 0} empty={values.orgId || values.expired ? 'No enrollment key matches these filters.' : 'No enrollment keys yet.'}>
        {(body) => (
          <>
            <table className="keys-table" aria-busy={list.loading}>
              <caption className="hint">Enrollment keys, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  {multiOrg && <th scope="col">Organization</th>}
                  <th scope="col">Site</th>
                  <th scope="col">Status</th>
                  <th scope="col">Uses</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Created</th>
                  <th scope="col"><span className="hint">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                {body.data.map((key) => (
                  <Fragment key={key.id}>
                    <tr>
                      <th scope="row">{key.name}</th>
                      {multiOrg && <td>{orgName(orgs.data, key.orgId)}</td>}
                      <td>{siteName(key.siteId)}</td>
                      <td><StatusBadge status={key.status} /></td>
                      <td className="nowrap">{key.usageCount.toLocaleString()} / {key.maxUsage === null ? 'unlimited' : key.maxUsage.toLocaleString()}</td>
                      <td>{formatDateTime(key.expiresAt)}</td>
                      <td>{formatDateTime(key.createdAt)}</td>
                      <td>
                        <div className="actions">
                          <Gated allowed={gate.allowed} label="Rotate">
                            <button type="button" aria-label={`Rotate “${key.name}”`} aria-expanded={rotating === key.id} onClick={() => setRotating(rotating === key.id ? null : key.id)}>Rotate</button>
                          </Gated>
                          <Gated allowed={gate.allowed} label="Delete">
                            <ConfirmButton
                              label="Delete"
                              disabled={remove.pending}
                              question={<>Delete the enrollment key “{key.name}”? Devices can no longer enroll with it; devices already enrolled are not affected. This cannot be undone.</>}
                              confirmLabel="Delete the key"
                              onConfirm={() => remove.run(key)}
                            />
                          </Gated>
                        </div>
                      </td>
                    </tr>
                    {acting === key.id && remove.error && (
                      <tr className="keys-detail"><td colSpan={columns}><ErrorMessage error={remove.error} /></td></tr>
                    )}
                    {rotating === key.id && (
                      <tr className="keys-detail"><td colSpan={columns}>
                        <EnrollmentKeyRotateForm
                          enrollmentKey={key}
                          onRotated={(rotated) => {
                            setRotating(null);
                            reveal(rotated, `New key for “${rotated.name}”`);
                          }}
                          onCancel={() => setRotating(null)}
                        />
                      </td></tr>
                    )}
                  </Fragment>
                ))}
              </tbody>
            </table>
            <Pager pagination={pagesOf(body.pagination)} onPage={setPage} label="Enrollment key pages" />
          </>
        )}
      </Loadable>
    </main>
  );
}
