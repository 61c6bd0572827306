// A page of sites as a table, with per-row Edit (inline form) and Delete when the user may write.
import { useState } from 'react';
import { Link } from 'react-router';
import { api, call } from '../../api/client';
import { ConfirmButton } from '../../ui/confirm';
import { formatDateTime } from '../../ui/format';
import { ErrorMessage } from '../../ui/states';
import { useAction } from '../../ui/use-load';
import type { Site } from './resources';
import { SiteForm, addressText } from './site-form';

export function SiteTable({ sites, orgNames, canWrite, onChanged }: {
  sites: Site[];
  /** With names, an Organization column (the Sites page). */
  orgNames?: Map<string, string>;
  canWrite: boolean;
  /** After an edit or delete: reload the list. */
  onChanged: (notice: string) => void;
}) {
  const [editing, setEditing] = useState<Site | null>(null);
  const remove = useAction(async (site: Site) => {
    await call(api.DELETE('/api/v1/orgs/sites/{id}', { params: { path: { id: site.id } } }));
    onChanged(`Site ${site.name} deleted.`);
  });
  const columns = 4 + (orgNames ? 1 : 0) + (canWrite ? 1 : 0);

  return (
    <>
      <ErrorMessage error={remove.error} />
      {editing && (
        <SiteForm
          key={editing.id}
          site={editing}
          onCancel={() => setEditing(null)}
          onDone={(saved) => { setEditing(null); onChanged(`Site ${saved.name} saved.`); }}
        />
      )}
      <table aria-label="Sites">
        <thead>
          <tr>
            <th scope="col">Name</th>
            {orgNames && <th scope="col">Organization</th>}
            <th scope="col">Timezone</th>
            <th scope="col">Address</th>
            <th scope="col">Created</th>
            {canWrite && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {sites.map((site) => (
            <tr key={site.id}>
              <td><Link to={`/sites/${site.id}`}>{site.name}</Link></td>
              {orgNames && <td><Link to={`/organizations/${site.orgId}`}>{orgNames.get(site.orgId) ?? 'Organization'}</Link></td>}
              <td>{site.timezone}</td>
              <td>{addressText(site.address)}</td>
              <td>{formatDateTime(site.createdAt)}</td>
              {canWrite && (
                <td>
                  <div className="row-actions">
                    <button type="button" aria-label={`Edit ${site.name}`} onClick={() => { remove.clearError(); setEditing(site); }}>Edit</button>
                    <ConfirmButton
                      label="Delete"
                      name={`Delete ${site.name}`}
                      confirmLabel="Delete site"
                      question={<>Delete the site <strong>{site.name}</strong> permanently? This cannot be undone.</>}
                      onConfirm={() => remove.run(site)}
                      disabled={remove.pending}
                    />
                  </div>
                </td>
              )}
            </tr>
          ))}
          {sites.length === 0 && <tr><td colSpan={columns}>No sites on this page.</td></tr>}
        </tbody>
      </table>
    </>
  );
}
