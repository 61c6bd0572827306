// The audit log: the chain's integrity for the chosen organization (a one-line summary that
// expands), one form for the full-text search and every filter, the entries table and export.
// The address is the source of truth (query.ts): the form is filled from it, so back and forward
// restore it, and a submission writes only the values that are set.
import { useId, useState, type FormEvent, type ReactElement, type ReactNode } from 'react';
import { cloneElement } from 'react';
import { useLocation } from 'react-router';
import { api, call } from '../../api/client';
import { loadOrganizations } from '../../api/directory';
import { useCan, useUser } from '../../session/session';
import { PAGE_SIZE } from '../../ui/list-query';
import { Pager } from '../../ui/pager';
import { ErrorMessage, Loadable } from '../../ui/states';
import { useLoad, type Loaded } from '../../ui/use-load';
import { isoToLocalInput, localInputToIso } from '../../ui/format';
import { AuditTable } from './AuditTable';
import { ChainStatus } from './ChainStatus';
import { ExportButtons } from './ExportButtons';
import { EMPTY_QUERY, apiFilters, isFiltered, useAuditLocation, type AuditQuery, type Organization } from './query';
import { ACTION_LABELS, AUDIT_ACTIONS } from './action-labels';

export function AuditPage() {
  const user = useUser();
  const can = useCan();
  const address = useAuditLocation();
  const { query, page } = address;
  const { search } = useLocation();
  // Partner and system callers read several chains and may narrow to one; an organization caller has one.
  const multiOrg = user.scope !== 'organization';
  const filters = apiFilters(query, multiOrg);
  const orgs = useLoad(
    () => (multiOrg ? loadOrganizations() : Promise.resolve([] as Organization[])),
    [multiOrg],
  );

  const entries = useLoad(() => {
    const paging = { page, limit: PAGE_SIZE };
    return query.q
      ? call(api.GET('/api/v1/audit-logs/search', { params: { query: { ...filters, ...paging, q: query.q } } }))
      : call(api.GET('/api/v1/audit-logs/logs', { params: { query: { ...filters, ...paging } } }));
  }, [address.key, multiOrg]);

  const orgLabel = organizationLabel(query.orgId, orgs.data);
  // Submitting what the address already says still fetches the entries again.
  const apply = (next: AuditQuery) => {
    if (!address.apply(next)) entries.reload();
  };

  return (
    <main id="main" className="page audit">
      <h1>Audit log</h1>

      <ChainStatus orgId={multiOrg ? query.orgId : ''} needsOrg={multiOrg} label={multiOrg ? orgLabel : 'your organization'} />

      <AuditForm
        key={address.queryKey}
        query={query}
        multiOrg={multiOrg}
        platform={user.scope === 'system'}
        orgs={orgs}
        onApply={apply}
      />

      <section aria-labelledby="audit-results" className="audit-results">
        <div className="audit-results-head">
          <h2 id="audit-results">{query.q ? <>Search results for “{query.q}”</> : 'Entries'}</h2>
          {can('audit:export') && <ExportButtons filters={filters} orgLabel={multiOrg ? orgLabel : null} searching={query.q !== ''} />}
        </div>
        <Loadable state={entries} isEmpty={(body) => body.data.length === 0} empty={emptyText(query, page)}>
          {(body) => (
            <>
              <AuditTable entries={body.data} busy={entries.loading} back={search} />
              <Pager list={body} onPage={address.setPage} label="Audit log pages" />
            </>
          )}
        </Loadable>
      </section>
    </main>
  );
}

/** How the selected chain reads in sentences: "Acme", "the platform chain", "all organizations". */
function organizationLabel(orgId: string, orgs: Organization[] | undefined): string {
  if (!orgId) return 'all organizations';
  if (orgId === 'platform') return 'the platform (no organization)';
  return orgs?.find((o) => o.id === orgId)?.name ?? `organization ${orgId}`;
}

function emptyText(query: AuditQuery, page: number): string {
  const filtered = query.q || query.user || query.action || query.resource || query.from || query.to;
  if (page > 1) return 'No entries on this page. Go back to the first page.';
  return filtered ? 'No entries match. Change the search and filters, or clear them.' : 'No audit entries yet.';
}

/**
 * A labelled control in the compact grid. `label` is what the eye reads; `more` completes the
 * accessible name so it says what the control filters ("Action" → "Action contains").
 */
function GridField({ label, more, error, hint, className, children }: {
  label: string;
  more?: string;
  error?: string | undefined;
  hint?: ReactNode;
  className?: string;
  children: ReactElement<Record<string, unknown>>;
}) {
  const id = useId();
  const describedBy = [hint ? `${id}-hint` : null, error ? `${id}-error` : null].filter(Boolean).join(' ') || undefined;
  return (
    <div className={`field${error ? ' field-invalid' : ''}${className ? ` ${className}` : ''}`}>
      <label htmlFor={id}>{label}{more && <span className="visually-hidden"> {more}</span>}</label>
      {cloneElement(children, { id, 'aria-invalid': error ? true : undefined, 'aria-describedby': describedBy })}
      {hint && <small id={`${id}-hint`} className="hint">{hint}</small>}
      {error && <small id={`${id}-error`} className="field-error" role="alert">{error}</small>}
    </div>
  );
}

/**
 * One form for the search text and every filter, submitted by its button or Enter in any box. The
 * organization applies as soon as it is chosen (the chain status follows it), together with the rest
 * of the form. It is remounted (key) whenever the address's query changes, so it always starts from
 * the address: back and forward restore it.
 */
function AuditForm({ query, multiOrg, platform, orgs, onApply }: {
  query: AuditQuery;
  multiOrg: boolean;
  platform: boolean;
  orgs: Loaded<Organization[]>;
  onApply: (query: AuditQuery) => void;
}) {
  const initial = { ...query, from: isoToLocalInput(query.from), to: isoToLocalInput(query.to) };
  const [values, setValues] = useState<AuditQuery>(initial);
  const [error, setError] = useState<string>();
  const set = (name: keyof AuditQuery) => (e: { target: { value: string } }) => {
    setValues((v) => ({ ...v, [name]: e.target.value }));
    if (name === 'from' || name === 'to') setError(undefined);
  };

  const applyValues = (next: AuditQuery) => {
    const from = localInputToIso(next.from);
    const to = localInputToIso(next.to);
    if (from && to && from > to) return setError('“From” must not be later than “To”.');
    setError(undefined);
    onApply({ ...next, from, to, orgId: multiOrg ? next.orgId : '' });
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    applyValues(values);
  };
  const clear = () => {
    setValues(EMPTY_QUERY);
    setError(undefined);
    onApply(EMPTY_QUERY);
  };
  const dirty = isFiltered(values) || isFiltered(query);

  return (
    <form className="panel audit-find" role="search" aria-label="Search and filter the audit log" onSubmit={submit} noValidate>
      <div className={`audit-grid${multiOrg ? ' audit-grid-org' : ''}`}>
        <GridField label="Search" more="text in actions, actor e-mails, resources and details" className="audit-q">
          <input type="search" value={values.q} onChange={set('q')} placeholder="Action, e-mail, resource or details" />
        </GridField>
        <GridField label="Action" more="contains">
          <input value={values.action} onChange={set('action')} placeholder="e.g. api_key." list="audit-actions" />
        </GridField>
        <GridField label="User" more="e-mail or name contains">
          <input value={values.user} onChange={set('user')} placeholder="E-mail or name" />
        </GridField>
        {multiOrg && (
          <OrganizationSelect
            value={values.orgId}
            orgs={orgs}
            platform={platform}
            onChange={(orgId) => {
              // Applies the whole form at once, as its button would.
              const next = { ...values, orgId };
              setValues(next);
              applyValues(next);
            }}
          />
        )}
        <GridField label="Resource" more="type or name contains">
          <input value={values.resource} onChange={set('resource')} placeholder="Type or name" />
        </GridField>
        <GridField label="From" more="date and time (entries at or after)" error={error}>
          <input type="datetime-local" step={1} value={values.from} onChange={set('from')} />
        </GridField>
        <GridField label="To" more="date and time (entries at or before)">
          <input type="datetime-local" step={1} value={values.to} onChange={set('to')} />
        </GridField>
        <div className="audit-find-actions">
          <button type="submit" className="primary">Search</button>
          <button type="button" onClick={clear} disabled={!dirty}>Clear filters</button>
        </div>
      </div>
      {/* Suggestions from the service's catalogue; any text still filters by substring. */}
      <datalist id="audit-actions">
        {AUDIT_ACTIONS.map((name) => <option key={name} value={name}>{ACTION_LABELS[name]}</option>)}
      </datalist>
      {multiOrg && <ErrorMessage error={orgs.error} onRetry={orgs.reload} />}
    </form>
  );
}

function OrganizationSelect({ value, orgs, platform, onChange }: {
  value: string;
  orgs: Loaded<Organization[]>;
  platform: boolean;
  onChange: (orgId: string) => void;
}) {
  const known = orgs.data ?? [];
  // A value from a shared link that is not in the list (yet, or at all) still shows as selected.
  const listed = value === '' || (platform && value === 'platform') || known.some((o) => o.id === value);
  return (
    <GridField label="Organization">
      <select
        value={value}
        onChange={(e) => onChange(e.target.value)}
        aria-busy={orgs.loading && !orgs.data ? true : undefined}
        title={platform ? 'The platform chain holds events with no organization, such as partner changes.' : undefined}
      >
        <option value="">{orgs.loading && !orgs.data ? 'All organizations (loading the list…)' : 'All organizations'}</option>
        {platform && <option value="platform">Platform (no organization)</option>}
        {known.map((o) => <option key={o.id} value={o.id}>{o.name}</option>)}
        {!listed && <option value={value}>{value === 'platform' ? 'Platform (system scope only)' : orgs.data ? `Unknown organization (${value})` : value}</option>}
      </select>
    </GridField>
  );
}
