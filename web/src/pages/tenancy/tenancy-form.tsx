// The create-or-edit form every tenancy resource has (partner, organization, site). Its fields are
// checked before anything is sent; a create sends the values given (empty ones left out), an edit only
// what changed, and an edit that changes nothing says so instead of sending. The server's refusals
// land next to their field, or under the form when no field takes them.
import { useState, type ReactNode } from 'react';
import type { ApiError } from '../../api/client';
import { ErrorMessage } from '../../ui/states';
import { useAction } from '../../ui/use-load';
import { serverFieldError, unplacedError, type Errors } from './field-checks';

export function useTenancyForm<B extends Record<string, unknown>, R>({ before, fields, send, onDone }: {
  /** The resource's values as saved, to send only the changed ones; undefined when creating. */
  before: B | undefined;
  /** Every field of the form, with the error codes that belong to it (409 CONFLICT: the slug). */
  fields: Record<string, string[]>;
  send: (body: Partial<B>) => Promise<R>;
  onDone: (saved: R) => void;
}) {
  const [errors, setErrors] = useState<Errors>({});
  const [nothing, setNothing] = useState(false);
  const save = useAction(async (body: Partial<B>) => onDone(await send(body)));
  return {
    errors,
    nothing,
    pending: save.pending,
    unplaced: unplacedError(save.error, fields),
    fieldError: (field: string) => errors[field] ?? serverFieldError(save.error, field, fields[field]),
    /** Sends `values` when `found` is empty; `createOnly` goes with a create only (the owner's id). */
    submit(found: Errors, values: B, createOnly: Record<string, unknown> = {}) {
      setErrors(found);
      setNothing(false);
      save.clearError();
      if (Object.keys(found).length > 0) return;
      // JSON compares the address object by value, and the plain values as `!==` would.
      const keep = ([key, value]: [string, unknown]) => (before ? JSON.stringify(value) !== JSON.stringify(before[key]) : value !== null);
      const body = Object.fromEntries(Object.entries(values).filter(keep)) as Partial<B>;
      if (before && Object.keys(body).length === 0) return setNothing(true);
      void save.run(before ? body : { ...body, ...createOnly });
    },
  };
}

/** The frame of a tenancy form; `noun` names the resource ("partner"), `existing` the one edited. */
export function TenancyForm({ noun, existing, form, onSubmit, onCancel, children }: {
  noun: string;
  existing: { name: string } | undefined;
  form: { nothing: boolean; pending: boolean; unplaced: ApiError | null };
  onSubmit: () => void;
  onCancel: () => void;
  children: ReactNode;
}) {
  return (
    <form
      className="panel tenancy-form"
      onSubmit={(e) => { e.preventDefault(); onSubmit(); }}
      noValidate
      aria-label={existing ? `Edit ${noun}` : `Create ${noun}`}
    >
      <h2>{existing ? `Edit ${existing.name}` : `New ${noun}`}</h2>
      {children}
      {form.nothing && <p className="hint" role="status">Nothing to save: no field was changed.</p>}
      <ErrorMessage error={form.unplaced} />
      <div className="actions">
        <button type="submit" className="primary" disabled={form.pending}>
          {form.pending ? 'Saving…' : existing ? `Save ${noun}` : `Create ${noun}`}
        </button>
        <button type="button" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  );
}
