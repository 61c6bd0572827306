// The audit log: the chain's integrity for the chosen organization, full-text search, filters, the
// entries table and export. Every choice is kept in the URL query (query.ts).
import { useState, type FormEvent } from 'react';
import { useLocation } from 'react-router';
import { api, call } from '../../api/client';
import { loadOrganizations } from '../../api/directory';
import { useCan, useUser } from '../../session/session';
import { Field } from '../../ui/forms';
import { PAGE_SIZE, useListQuery } from '../../ui/list-query';
import { Pager } from '../../ui/pager';
import { ErrorMessage, Loadable } from '../../ui/states';
import { useLoad, type Loaded } from '../../ui/use-load';
import { isoToLocalInput, localInputToIso } from '../../ui/format';
import { AuditTable } from './AuditTable';
import { ChainStatus } from './ChainStatus';
import { ExportButtons } from './ExportButtons';
import { AUDIT_KEYS, apiFilters, trimmed, type AuditQuery, type Organization } from './query';
import { ACTION_LABELS, AUDIT_ACTIONS } from './action-labels';

export function AuditPage() {
  const user = useUser();
  const can = useCan();
  const list = useListQuery(AUDIT_KEYS);
  const query = trimmed(list.filters);
  const { search } = useLocation();
  // Partner and system callers read several chains and may narrow to one; an organization caller has one.
  const multiOrg = user.scope !== 'organization';
  const filters = apiFilters(query, multiOrg);
  const orgs = useLoad(
    () => (multiOrg ? loadOrganizations() : Promise.resolve([] as Organization[])),
    [multiOrg],
  );

  const entries = useLoad(() => {
    const paging = { page: list.page, limit: PAGE_SIZE };
    return query.q
      ? call(api.GET('/api/v1/audit-logs/search', { params: { query: { ...filters, ...paging, q: query.q } } }))
      : call(api.GET('/api/v1/audit-logs/logs', { params: { query: { ...filters, ...paging } } }));
  }, [list.key, multiOrg]);

  const orgLabel = organizationLabel(query.orgId, orgs.data);
  const filtersKey = [query.user, query.action, query.resource, query.from, query.to].join('\u0000');

  return (
    <main id="main" className="page audit">
      <h1>Audit log</h1>

      {multiOrg && (
        <OrganizationSelect
          value={query.orgId}
          orgs={orgs}
          platform={user.scope === 'system'}
          onChange={(orgId) => list.setFilters({ orgId })}
        />
      )}

      <ChainStatus orgId={multiOrg ? query.orgId : ''} needsOrg={multiOrg} label={multiOrg ? orgLabel : 'your organization'} />

      <section className="panel" aria-labelledby="audit-find">
        <h2 id="audit-find">Find entries</h2>
        <SearchForm key={`q:${query.q}`} q={query.q} onSearch={(q) => list.setFilters({ q })} />
        <FilterForm key={filtersKey} query={query} onApply={list.setFilters} />
      </section>

      {can('audit:export') && <ExportButtons filters={filters} orgLabel={multiOrg ? orgLabel : null} searching={query.q !== ''} />}

      <section aria-labelledby="audit-results">
        <h2 id="audit-results">{query.q ? <>Search results for “{query.q}”</> : 'Entries'}</h2>
        <Loadable state={entries} isEmpty={(body) => body.data.length === 0} empty={emptyText(query, list.page)}>
          {(body) => (
            <>
              <AuditTable entries={body.data} busy={entries.loading} back={search} />
              <Pager list={body} onPage={list.setPage} label="Audit log pages" />
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
  return filtered ? 'No entries match. Change or clear the search and filters.' : 'No audit entries yet.';
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
    <div className="filters audit-org">
      <Field label="Organization" hint={platform ? 'The platform chain holds events with no organization, such as partner changes.' : undefined}>
        <select value={value} onChange={(e) => onChange(e.target.value)}>
          <option value="">All organizations</option>
          {platform && <option value="platform">Platform (no organization)</option>}
          {known.map((o) => <option key={o.id} value={o.id}>{o.name}</option>)}
          {!listed && <option value={value}>{value === 'platform' ? 'Platform (system scope only)' : orgs.data ? `Unknown organization (${value})` : value}</option>}
        </select>
      </Field>
      {orgs.loading && !orgs.data && <span className="hint" role="status">Loading organizations…</span>}
      <ErrorMessage error={orgs.error} onRetry={orgs.reload} />
    </div>
  );
}

function SearchForm({ q, onSearch }: { q: string; onSearch: (q: string) => void }) {
  const [text, setText] = useState(q);
  const [error, setError] = useState<string>();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!text.trim()) return setError('Enter the text to search for.');
    setError(undefined);
    onSearch(text.trim());
  };
  return (
    <form className="filters" role="search" aria-label="Search the audit log" onSubmit={submit} noValidate>
      <Field label="Search" error={error} hint="Matches action, actor e-mail, resource and details.">
        <input type="search" value={text} onChange={(e) => { setText(e.target.value); setError(undefined); }} size={36} />
      </Field>
      <div className="actions">
        <button type="submit" className="primary">Search</button>
        {q && <button type="button" onClick={() => onSearch('')}>Clear search</button>}
      </div>
    </form>
  );
}

function FilterForm({ query, onApply }: { query: AuditQuery; onApply: (change: Partial<AuditQuery>) => void }) {
  const [user, setUser] = useState(query.user);
  const [action, setAction] = useState(query.action);
  const [resource, setResource] = useState(query.resource);
  const [from, setFrom] = useState(isoToLocalInput(query.from));
  const [to, setTo] = useState(isoToLocalInput(query.to));
  const [error, setError] = useState<string>();
  const active = Boolean(query.user || query.action || query.resource || query.from || query.to);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const fromIso = localInputToIso(from);
    const toIso = localInputToIso(to);
    if (fromIso && toIso && fromIso > toIso) return setError('“From” must not be later than “To”.');
    setError(undefined);
    onApply({ user: user.trim(), action: action.trim(), resource: resource.trim(), from: fromIso, to: toIso });
  };
  return (
    <form className="filters" aria-label="Filter the audit log" onSubmit={submit} noValidate>
      <Field label="User">
        <input value={user} onChange={(e) => setUser(e.target.value)} placeholder="E-mail or name" />
      </Field>
      <Field label="Action">
        <input value={action} onChange={(e) => setAction(e.target.value)} placeholder="e.g. api_key." list="audit-actions" />
      </Field>
      {/* Suggestions from the service's catalogue; any text still filters by substring. */}
      <datalist id="audit-actions">
        {AUDIT_ACTIONS.map((name) => <option key={name} value={name}>{ACTION_LABELS[name]}</option>)}
      </datalist>
      <Field label="Resource">
        <input value={resource} onChange={(e) => setResource(e.target.value)} placeholder="Type or name" />
      </Field>
      <Field label="From" error={error}>
        <input type="datetime-local" step={1} value={from} onChange={(e) => { setFrom(e.target.value); setError(undefined); }} />
      </Field>
      <Field label="To">
        <input type="datetime-local" step={1} value={to} onChange={(e) => { setTo(e.target.value); setError(undefined); }} />
      </Field>
      <div className="actions">
        <button type="submit" className="primary">Apply filters</button>
        {active && <button type="button" onClick={() => onApply({ user: '', action: '', resource: '', from: '', to: '' })}>Clear filters</button>}
      </div>
    </form>
  );
}
