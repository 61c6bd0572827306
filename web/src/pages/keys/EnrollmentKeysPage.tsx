// Enrollment keys: the list, create, rotate and delete (SPEC "Enrollment key", API.md §5). A new key is
// shown once, with the command line that starts the reference agent with it (API.md §7).
import { api, call } from '../../api/client';
import { loadSitesOf } from '../../api/directory';
import { formatDateTime } from '../../ui/format';
import { PAGE_SIZE } from '../../ui/list-query';
import { StatusBadge } from '../../ui/status-badge';
import { useLoad } from '../../ui/use-load';
import { EnrollmentKeyCreateForm, EnrollmentKeyRotateForm, type EnrollmentKey, type NewEnrollmentKey } from './enrollment-key-forms';
import { KeyAction, KeyScreen, RowFormButton, useKeyScreen, type KeyFilter } from './key-list';

const WARNING = 'Store this enrollment key now: it is shown only once and cannot be retrieved again. Anyone holding it can enroll devices into the organization until it expires or is used up.';

/** The command that enrolls the reference agent with a key, against the server this console runs on. */
function agentCommand(key: string): string {
  return `npm run agent -- --server ${window.location.origin} --enrollment-key ${key}`;
}

const EXPIRY_FILTER: KeyFilter<'expired'> = { name: 'expired', label: 'Expiry', options: [['', 'Any'], ['false', 'Not expired'], ['true', 'Expired']] };
const expiredFilter = (value: string) => (value === 'true' ? true : value === 'false' ? false : undefined);

export function EnrollmentKeysPage() {
  const screen = useKeyScreen(EXPIRY_FILTER, ({ page, filters }) => call(api.GET('/api/v1/enrollment-keys', {
    params: { query: { page, limit: PAGE_SIZE, orgId: filters.orgId || undefined, expired: expiredFilter(filters.expired) } },
  })));
  const pageOrgs = [...new Set(screen.list.data?.data.filter((k) => k.siteId).map((k) => k.orgId) ?? [])].sort();
  const siteNames = useLoad(async () => {
    const names = new Map<string, string>();
    for (const sites of await Promise.all(pageOrgs.map(loadSitesOf))) for (const s of sites) names.set(s.id, s.name);
    return names;
  }, [pageOrgs.join(',')]);
  const siteName = (id: string | null) => (id === null ? <span className="hint">any</span> : siteNames.data?.get(id) ?? <code title={id}>{id.slice(0, 8)}…</code>);
  const reveal = (key: NewEnrollmentKey, title: string) => screen.reveal({ title, secret: key.key, warning: WARNING, command: agentCommand(key.key) });
  const remove = async (key: EnrollmentKey) => {
    await call(api.DELETE('/api/v1/enrollment-keys/{id}', { params: { path: { id: key.id } } }));
    return `The enrollment key “${key.name}” is deleted.`;
  };

  return (
    <KeyScreen
      screen={screen}
      noun="enrollment key"
      intro="An enrollment key lets the agent on a new device join an organization, and optionally a site. It works until it expires or has been used its maximum number of times. A key is shown once, when it is created or rotated."
      newKey={{ Form: EnrollmentKeyCreateForm, onCreated: (key) => reveal(key, `Enrollment key “${key.name}” created`) }}
      headers={['Site', 'Status', 'Uses', 'Expires', 'Created']}
      row={(key) => ({
        cells: (
          <>
            <td>{siteName(key.siteId)}</td>
            <td><StatusBadge status={key.status} /></td>
            <td className="nowrap">{key.usageCount.toLocaleString()} / {key.maxUsage === null ? 'unlimited' : key.maxUsage.toLocaleString()}</td>
            <td>{formatDateTime(key.expiresAt)}</td>
            <td>{formatDateTime(key.createdAt)}</td>
          </>
        ),
        actions: (
          <div className="actions">
            <RowFormButton screen={screen} keyId={key.id} label="Rotate" name={`Rotate “${key.name}”`} />
            <KeyAction
              screen={screen} target={key} run={() => remove(key)} label="Delete" confirmLabel="Delete the key"
              question={<>Delete the enrollment key “{key.name}”? Devices can no longer enroll with it; devices already enrolled are not affected. This cannot be undone.</>}
            />
          </div>
        ),
        detail: screen.open === key.id && (
          <EnrollmentKeyRotateForm
            enrollmentKey={key}
            onRotated={(rotated) => { screen.setOpen(null); reveal(rotated, `New key for “${rotated.name}”`); }}
            onCancel={() => screen.setOpen(null)}
          />
        ),
      })}
    />
  );
}
