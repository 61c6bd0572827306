// The destination forms: create (a webhook's secret comes back once) and edit (name, address,
// filter and, for syslog, the CA certificate). Checks the schema makes are made here first and shown
// beside their fields; what only the server can tell (DESTINATION_NOT_ALLOWED…) is its detail.
import { useEffect, useRef, useState, type ReactNode, type RefObject } from 'react';
import { api, call, type ApiError } from '../../api/client';
import { Checkbox, Field } from '../../ui/forms';
import { ErrorMessage } from '../../ui/states';
import { useAction } from '../../ui/use-load';
import { CoverageChoice, coverBody, type Cover } from './coverage';
import {
  RESULTS, RESULT_LABELS, certificateError, nameError, parseActions, urlError,
  type CreateBody, type Destination, type Directory, type Kind, type NewDestination, type Result, type UpdateBody,
} from './destination';

type FieldName = 'cover' | 'name' | 'url' | 'filter' | 'caCertificate';
type Errors = Partial<Record<FieldName, string | undefined>>;

/** A form's checks, its request, and the errors of both, by field. */
function useDestinationForm<B, R>(send: (body: B) => Promise<R>, onDone: (result: R) => void) {
  const form = useRef<HTMLFormElement>(null);
  const [errors, setErrors] = useState<Errors>({});
  const [unchanged, setUnchanged] = useState(false);
  const action = useAction(send);
  return {
    ref: form,
    pending: action.pending,
    error: action.error,
    unchanged,
    fieldError: (field: FieldName) => errors[field] ?? action.error?.forField(field === 'cover' ? 'orgId' : field),
    async submit(found: Errors, build: () => B | null) {
      setErrors(found);
      setUnchanged(false);
      if (Object.values(found).some(Boolean)) {
        // The first field to fix gets the focus, so its message is read out.
        requestAnimationFrame(() => form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus());
        return;
      }
      const body = build();
      if (body === null) return setUnchanged(true);
      const result = await action.run(body);
      if (result) onDone(result);
    },
  };
}

function FormFrame({ form, titleId, title, labels: [label, pendingLabel], onSubmit, onCancel, children }: {
  form: { ref: RefObject<HTMLFormElement | null>; pending: boolean; error: ApiError | null; unchanged: boolean };
  titleId: string;
  title: ReactNode;
  labels: [string, string];
  onSubmit: () => void;
  onCancel: () => void;
  children: ReactNode;
}) {
  // Opened by a button: the form's first field takes the focus.
  useEffect(() => form.ref.current?.querySelector<HTMLElement>('input:not([readonly]), select, textarea')?.focus(), [form.ref]);
  return (
    <form ref={form.ref} className="panel destinations-form" onSubmit={(e) => { e.preventDefault(); onSubmit(); }} noValidate aria-labelledby={titleId}>
      <h2 id={titleId}>{title}</h2>
      {children}
      {form.unchanged && <p className="hint" role="status">Nothing changed: there is nothing to save.</p>}
      <ErrorMessage error={form.error} />
      <div className="actions">
        <button type="submit" className="primary" disabled={form.pending}>{form.pending ? pendingLabel : label}</button>
        <button type="button" onClick={onCancel} disabled={form.pending}>Cancel</button>
      </div>
    </form>
  );
}

export function DestinationCreateForm({ directory, initialCover, onCreated, onCancel }: {
  directory: Directory;
  initialCover: Cover;
  onCreated: (destination: NewDestination) => void;
  onCancel: () => void;
}) {
  const [cover, setCover] = useState(initialCover);
  const [name, setName] = useState('');
  const [kind, setKind] = useState<Kind>('webhook');
  const [url, setUrl] = useState('');
  const [actions, setActions] = useState('');
  const [results, setResults] = useState<Result[]>([]);
  const [certificate, setCertificate] = useState('');
  const [enabled, setEnabled] = useState(true);
  const form = useDestinationForm((body: CreateBody) => call(api.POST('/api/v1/event-destinations', { body })), onCreated);
  const submit = () => {
    const parsed = parseActions(actions);
    const pem = kind === 'syslog' ? certificate.trim() : '';
    return form.submit(
      {
        cover: cover ? undefined : 'Choose what the destination covers.',
        name: nameError(name),
        url: urlError(kind, url),
        filter: parsed.error,
        caCertificate: pem ? certificateError(pem) : undefined,
      },
      () => ({
        ...coverBody(cover), name: name.trim(), kind, url: url.trim(), enabled,
        filter: { actions: parsed.actions, results },
        ...(pem ? { caCertificate: pem } : {}),
      }),
    );
  };

  return (
    <FormFrame form={form} titleId="new-destination-title" title="New event destination" labels={['Create destination', 'Creating…']} onSubmit={() => void submit()} onCancel={onCancel}>
      <CoverageChoice directory={directory} value={cover} onChange={setCover} error={form.fieldError('cover')} />
      <Field label="Name" error={form.fieldError('name')} hint="What receives the events, so you recognise it later.">
        <input value={name} onChange={(e) => setName(e.target.value)} required />
      </Field>
      <Field label="Kind">
        <select value={kind} onChange={(e) => setKind(e.target.value as Kind)}>
          <option value="webhook">Webhook: signed HTTPS POST per event</option>
          <option value="syslog">Syslog: RFC 5424 over TLS or TCP (SIEM)</option>
        </select>
      </Field>
      <UrlField kind={kind} value={url} onChange={setUrl} error={form.fieldError('url')} />
      <FilterFields actions={actions} onActions={setActions} results={results} onResults={setResults} error={form.fieldError('filter')} />
      {kind === 'syslog' && (
        <CertificateField label="CA certificate (optional)" value={certificate} onChange={setCertificate} error={form.fieldError('caCertificate')}
          hint="PEM. Trusted besides the system’s CAs when the collector’s certificate is checked (syslog+tls)." />
      )}
      <Checkbox label="Enabled: deliver events from now on" checked={enabled} onChange={setEnabled} />
    </FormFrame>
  );
}

/** Edits name, address and filter (and a syslog destination's CA certificate); only what changed is sent. */
export function DestinationEditForm({ destination, onSaved, onCancel }: { destination: Destination; onSaved: (d: Destination) => void; onCancel: () => void }) {
  const [name, setName] = useState(destination.name);
  const [url, setUrl] = useState(destination.url);
  const [actions, setActions] = useState(destination.filter.actions.join('\n'));
  const [results, setResults] = useState<Result[]>(destination.filter.results);
  const [certificate, setCertificate] = useState('');
  const form = useDestinationForm(
    (body: UpdateBody) => call(api.PATCH('/api/v1/event-destinations/{id}', { params: { path: { id: destination.id } }, body })),
    onSaved,
  );
  const submit = () => {
    const parsed = parseActions(actions);
    const pem = certificate.trim();
    return form.submit(
      { name: nameError(name), url: urlError(destination.kind, url), filter: parsed.error, caCertificate: pem ? certificateError(pem) : undefined },
      () => {
        const body: UpdateBody = {};
        if (name.trim() !== destination.name) body.name = name.trim();
        if (url.trim() !== destination.url) body.url = url.trim();
        const filter = { actions: parsed.actions, results: RESULTS.filter((r) => results.includes(r)) };
        if (!sameList(filter.actions, destination.filter.actions) || !sameList(filter.results, destination.filter.results)) body.filter = filter;
        if (pem) body.caCertificate = pem;
        return Object.keys(body).length === 0 ? null : body;
      },
    );
  };

  return (
    <FormFrame form={form} titleId="edit-destination-title" title={<>Edit “{destination.name}”</>} labels={['Save changes', 'Saving…']} onSubmit={() => void submit()} onCancel={onCancel}>
      <Field label="Name" error={form.fieldError('name')}>
        <input value={name} onChange={(e) => setName(e.target.value)} required />
      </Field>
      <UrlField kind={destination.kind} value={url} onChange={setUrl} error={form.fieldError('url')} />
      <FilterFields actions={actions} onActions={setActions} results={results} onResults={setResults} error={form.fieldError('filter')} />
      {destination.kind === 'syslog' && (
        <CertificateField label="Replace the CA certificate (optional)" value={certificate} onChange={setCertificate} error={form.fieldError('caCertificate')}
          hint="PEM. Leave empty to keep the current one." />
      )}
    </FormFrame>
  );
}

function UrlField({ kind, value, onChange, error }: { kind: Kind; value: string; onChange: (url: string) => void; error: string | undefined }) {
  const hint = kind === 'webhook'
    ? 'https://… (http:// only where the service allows private addresses). Loopback and private addresses are refused unless the service allows them.'
    : 'syslog+tls://host:port (RFC 5425) or syslog+tcp://host:port.';
  return (
    <Field label="URL" error={error} hint={hint}>
      <input type="url" inputMode="url" value={value} spellCheck={false} autoComplete="off" onChange={(e) => onChange(e.target.value)} required />
    </Field>
  );
}

function FilterFields({ actions, onActions, results, onResults, error }: {
  actions: string;
  onActions: (text: string) => void;
  results: Result[];
  onResults: (results: Result[]) => void;
  error: string | undefined;
}) {
  const toggle = (result: Result, on: boolean) => onResults(RESULTS.filter((r) => (r === result ? on : results.includes(r))));
  return (
    <fieldset className="destinations-filter">
      <legend>Filter</legend>
      <Field label="Actions" error={error} hint="Exact action names or prefixes ending in *, separated by commas or new lines (user.login, api_key.*). Empty: every action.">
        <textarea rows={3} value={actions} spellCheck={false} onChange={(e) => onActions(e.target.value)} />
      </Field>
      <fieldset className="destinations-results">
        <legend>Results</legend>
        {RESULTS.map((r) => <Checkbox key={r} label={RESULT_LABELS[r]} checked={results.includes(r)} onChange={(on) => toggle(r, on)} />)}
        <small className="hint">None checked: every result.</small>
      </fieldset>
    </fieldset>
  );
}

function CertificateField({ label, value, onChange, error, hint }: { label: string; value: string; onChange: (pem: string) => void; error: string | undefined; hint: string }) {
  return (
    <Field label={label} error={error} hint={hint}>
      <textarea rows={5} value={value} spellCheck={false} className="destinations-pem" placeholder="-----BEGIN CERTIFICATE-----" onChange={(e) => onChange(e.target.value)} />
    </Field>
  );
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}
