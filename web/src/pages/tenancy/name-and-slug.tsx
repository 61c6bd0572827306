// The name and slug a partner and an organization both have: the slug follows the name until it is
// edited by hand, and an existing resource keeps its slug when it is renamed.
import { useState } from 'react';
import { Field } from '../../ui/forms';
import { checkName, checkSlug, type Errors } from './field-checks';

export function useNameAndSlug(existing: { name: string; slug: string } | undefined) {
  const [name, setName] = useState(existing?.name ?? '');
  const [slug, setSlug] = useState(existing?.slug ?? '');
  const [slugTouched, setSlugTouched] = useState(Boolean(existing));
  return {
    name,
    slug,
    changeName(value: string) {
      setName(value);
      if (!slugTouched) setSlug(slugFromName(value));
    },
    changeSlug(value: string) {
      setSlug(value);
      setSlugTouched(true);
    },
    /** Adds the two fields' problems to `errors`; `what` names the resource in the message. */
    check(errors: Errors, what: string) {
      checkName(name, errors, what);
      checkSlug(slug, errors);
    },
    /** The two fields as the API takes them. */
    values: () => ({ name: name.trim(), slug }),
  };
}

/** The Name and Slug fields of a partner or organization form. */
export function NameAndSlugFields({ naming, fieldError, slugHint, autoFocus }: {
  naming: ReturnType<typeof useNameAndSlug>;
  fieldError: (field: string) => string | undefined;
  slugHint: string;
  autoFocus?: boolean;
}) {
  return (
    <>
      <Field label="Name" error={fieldError('name')}>
        <input value={naming.name} required autoFocus={autoFocus} onChange={(e) => naming.changeName(e.target.value)} />
      </Field>
      <Field label="Slug" error={fieldError('slug')} hint={slugHint}>
        <input value={naming.slug} required spellCheck={false} autoCapitalize="off" onChange={(e) => naming.changeSlug(e.target.value)} />
      </Field>
    </>
  );
}

/** A slug suggested from a name: lowercase words joined by dashes. */
function slugFromName(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 100)
    .replace(/-+$/, '');
}
