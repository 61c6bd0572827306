// The screen both key lists are: what the keys are for, who may change them, the new-key form, the
// filters (the organization and one of the list's own), the table with one row action at a time, and
// its pages. A new key replaces the whole screen until the user says it is stored.
import { Fragment, useState, type ComponentProps, type ComponentType, type ReactNode } from 'react';
import type { ApiError } from '../../api/client';
import type { Organization } from '../../api/directory';
import { useUser } from '../../session/session';
import { ConfirmButton } from '../../ui/confirm';
import { Field } from '../../ui/forms';
import { useListQuery, type ListQuery, type Pagination } from '../../ui/list-query';
import { Pager } from '../../ui/pager';
import { ErrorMessage, Loadable } from '../../ui/states';
import { useAction, useLoad, type Loaded } from '../../ui/use-load';
import { OrganizationFilter, initialOrg, orgName, useOrganizations } from './key-organizations';
import { KeyReveal, type Revealed } from './key-reveal';
import { Gated, NewKeyButton, WriteGateNote, useWriteGate, type WriteGate } from './write-gate';
import { useNotice } from '../../ui/notice';

interface Key { id: string; orgId: string; name: string }

/** The list's own filter besides the organization: a select of `options` ([value, text]; '' for any). */
export interface KeyFilter<F extends string> { name: F; label: string; options: [string, string][] }

export interface KeyScreenState<K extends Key> {
  setPage(page: number): void;
  orgId: string;
  setOrgId(orgId: string): void;
  filter: { label: string; options: [string, string][]; value: string; set(value: string): void };
  list: Loaded<{ data: K[]; pagination: Pagination }>;
  gate: WriteGate;
  orgs: Loaded<Organization[]>;
  creating: boolean;
  setCreating(creating: boolean): void;
  done: string | null;
  setDone(done: string | null): void;
  /** The row whose form is open (edit, rotate). */
  open: string | null;
  setOpen(id: string | null): void;
  /** A row action: `run` returns what to say when it is done; its error shows under the row. */
  act(key: K, run: () => Promise<string | void>): Promise<unknown>;
  acting: { pending: boolean; error: ApiError | null; id: string | null };
  revealed: Revealed | null;
  /** Shows a new key once, over the whole screen; the list behind it is read again. */
  reveal(next: Revealed): void;
  closeReveal(): void;
}

/** A key screen's state; `load` reads the page of keys the address names (organization and `filter`). */
export function useKeyScreen<K extends Key, F extends string>(
  filter: KeyFilter<F>,
  load: (query: ListQuery<'orgId' | F>) => Promise<{ data: K[]; pagination: Pagination }>,
): KeyScreenState<K> {
  const query = useListQuery<'orgId' | F>(['orgId', filter.name]);
  const setFilter = (name: 'orgId' | F, value: string) => query.setFilters({ [name]: value } as Partial<Record<'orgId' | F, string>>);
  const list = useLoad(() => load(query), [query.key]);
  const [creating, setCreating] = useState(false);
  const [revealed, setRevealed] = useState<Revealed | null>(null);
  const [done, setDone] = useNotice();
  const [open, setOpen] = useState<string | null>(null);
  const [actingId, setActingId] = useState<string | null>(null);
  const action = useAction(async (key: K, run: () => Promise<string | void>) => {
    setActingId(key.id);
    setDone(null);
    const said = await run();
    if (said) setDone(said);
    list.reload();
  });
  return {
    setPage: query.setPage,
    orgId: query.filters.orgId,
    setOrgId: (orgId) => setFilter('orgId', orgId),
    filter: { label: filter.label, options: filter.options, value: query.filters[filter.name], set: (value) => setFilter(filter.name, value) },
    list, gate: useWriteGate(), orgs: useOrganizations(), creating, setCreating, done, setDone, open, setOpen,
    act: action.run,
    acting: { pending: action.pending, error: action.error, id: actingId },
    revealed,
    reveal(next) {
      setRevealed(next);
      list.reload();
    },
    closeReveal: () => setRevealed(null),
  };
}

/** What a new-key form takes (NewKeyForm in key-form.tsx underneath). */
export interface CreateFormProps<N> { orgs: Organization[]; initialOrgId: string; onCreated: (key: N) => void; onCancel: () => void }

const capitalised = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}`;

export function KeyScreen<K extends Key, N>({ screen, noun, intro, newKey, headers, row }: {
  screen: KeyScreenState<K>;
  /** "API key": the title, labels and empty states say it. */
  noun: string;
  intro: string;
  /** The form that creates a key, and what follows (the reveal). */
  newKey: { Form: ComponentType<CreateFormProps<N>>; onCreated: (key: N) => void };
  /** The column headings between Name (with Organization) and Actions. */
  headers: string[];
  /** A key's cells under `headers`, its actions, and what opens under its row. */
  row: (key: K) => { cells: ReactNode; actions: ReactNode; detail?: ReactNode };
}) {
  const user = useUser();
  const { orgId, filter, list, orgs, gate, acting, setCreating } = screen;
  const title = `${capitalised(noun)}s`;
  if (screen.revealed) {
    return (
      <main id="main" className="page keys">
        <h1>{title}</h1>
        <KeyReveal revealed={screen.revealed} onDone={screen.closeReveal} />
      </main>
    );
  }

  const filtered = orgId !== '' || filter.options.some(([option]) => option !== '' && option === filter.value);
  const multiOrg = (orgs.data?.length ?? 0) > 1;
  const columns = headers.length + (multiOrg ? 3 : 2);
  return (
    <main id="main" className="page keys">
      <h1>{title}</h1>
      <p>{intro}</p>
      <WriteGateNote gate={gate} />
      {screen.done && <p className="notice" role="status">{screen.done}</p>}
      <ErrorMessage error={orgs.error} onRetry={orgs.reload} />

      {screen.creating && orgs.data ? (
        <newKey.Form
          orgs={orgs.data}
          initialOrgId={initialOrg(user, orgs.data, orgId)}
          onCreated={(key) => { setCreating(false); newKey.onCreated(key); }}
          onCancel={() => setCreating(false)}
        />
      ) : (
        <NewKeyButton label={`New ${noun}`} gate={gate} orgs={orgs.data} onClick={() => { screen.setDone(null); setCreating(true); }} />
      )}

      <form className="filters" aria-label={`Filter ${noun}s`} onSubmit={(e) => e.preventDefault()}>
        <OrganizationFilter orgs={orgs.data ?? []} value={orgId} onChange={screen.setOrgId} />
        <Field label={filter.label}>
          <select value={filter.value} onChange={(e) => filter.set(e.target.value)}>
            {filter.options.map(([option, text]) => <option key={option} value={option}>{text}</option>)}
          </select>
        </Field>
      </form>

      <Loadable state={list} isEmpty={(body) => body.data.length === 0} empty={filtered ? `No ${noun} matches these filters.` : `No ${noun}s yet.`}>
        {(body) => (
          <>
            <table className="keys-table" aria-busy={list.loading}>
              <caption className="hint">{title}, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  {multiOrg && <th scope="col">Organization</th>}
                  {headers.map((h) => <th key={h} scope="col">{h}</th>)}
                  <th scope="col"><span className="hint">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                {body.data.map((key) => {
                  const { cells, actions, detail } = row(key);
                  return (
                    <Fragment key={key.id}>
                      <tr>
                        <th scope="row">{key.name}</th>
                        {multiOrg && <td>{orgName(orgs.data, key.orgId)}</td>}
                        {cells}
                        <td>{actions}</td>
                      </tr>
                      {acting.id === key.id && acting.error && (
                        <tr className="keys-detail"><td colSpan={columns}><ErrorMessage error={acting.error} /></td></tr>
                      )}
                      {detail && <tr className="keys-detail"><td colSpan={columns}>{detail}</td></tr>}
                    </Fragment>
                  );
                })}
              </tbody>
            </table>
            <Pager list={body} onPage={screen.setPage} label={`${capitalised(noun)} pages`} />
          </>
        )}
      </Loadable>
    </main>
  );
}

/** Opens and closes the form under a key's row (Edit, Rotate). */
export function RowFormButton({ screen, keyId, label, name }: { screen: KeyScreenState<Key>; keyId: string; label: string; name: string }) {
  const open = screen.open === keyId;
  return (
    <Gated allowed={screen.gate.allowed} label={label}>
      <button type="button" aria-label={name} aria-expanded={open} onClick={() => screen.setOpen(open ? null : keyId)}>{label}</button>
    </Gated>
  );
}

/** A key's action (rotate, revoke, delete): asked first, one at a time across the list; `run` says how it went. */
export function KeyAction<K extends Key>({ screen, target, run, ...confirm }: {
  screen: KeyScreenState<K>;
  target: K;
  run: () => Promise<string | void>;
} & Omit<ComponentProps<typeof ConfirmButton>, 'onConfirm' | 'disabled'>) {
  return (
    <Gated allowed={screen.gate.allowed} label={confirm.label}>
      <ConfirmButton {...confirm} disabled={screen.acting.pending} onConfirm={() => screen.act(target, run)} />
    </Gated>
  );
}
