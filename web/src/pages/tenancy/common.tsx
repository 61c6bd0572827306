// Shared parts of the tenancy screens: resource types, list paging in the URL, badges, validation
// and placing the server's refusals next to the field they concern.
import { useEffect, useState, type ReactNode } from 'react';
import { useLocation, useNavigate, useSearchParams } from 'react-router';
import type { ApiError } from '../../api/client';
import type { Ok } from '../../api/types';
import { Field } from '../../ui/forms';
import type { Pagination } from '../../ui/pager';
import './tenancy.css';

export type Partner = Ok<'/api/v1/orgs/partners/{id}', 'get'>;
export type Organization = Ok<'/api/v1/orgs/organizations/{id}', 'get'>;
export type Site = Ok<'/api/v1/orgs/sites/{id}', 'get'>;

export const PARTNER_TYPES = ['msp', 'enterprise', 'internal'] as const;
export const PARTNER_PLANS = ['free', 'starter', 'community', 'pro', 'enterprise', 'unlimited'] as const;
export const PARTNER_STATUSES = ['pending', 'active', 'suspended', 'churned'] as const;
export const ORG_TYPES = ['customer', 'internal'] as const;
export const ORG_STATUSES = ['active', 'suspended', 'trial', 'churned'] as const;

/** Page size of every tenancy list. */
export const PAGE_SIZE = 25;

/** A page number kept in the URL (`?page=2`), so a list survives reloads and the back button. */
export function usePageParam(name = 'page'): [number, (page: number) => void] {
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number.parseInt(params.get(name) ?? '1', 10) || 1);
  const setPage = (next: number) => {
    setParams((current) => {
      const copy = new URLSearchParams(current);
      if (next <= 1) copy.delete(name);
      else copy.set(name, String(next));
      return copy;
    });
  };
  return [page, setPage];
}

/** A text filter kept in the URL; changing it goes back to page 1. */
export function useQueryParam(name: string, pageParam = 'page'): [string, (value: string) => void] {
  const [params, setParams] = useSearchParams();
  const value = params.get(name) ?? '';
  const setValue = (next: string) => {
    setParams((current) => {
      const copy = new URLSearchParams(current);
      if (next) copy.set(name, next);
      else copy.delete(name);
      copy.delete(pageParam);
      return copy;
    });
  };
  return [value, setValue];
}

/** The API's pagination (totals may be null with skipCount) as the Pager wants it. */
export function toPagination(p: { page: number; limit: number; total: number | null; totalPages: number | null }): Pagination {
  return { page: p.page, limit: p.limit, total: p.total ?? 0, totalPages: p.totalPages ?? p.page };
}

const BADGE: Record<string, string> = {
  active: 'badge-ok',
  pending: 'badge-warn',
  trial: 'badge-warn',
  suspended: 'badge-bad',
  churned: 'badge-muted',
};

export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge ${BADGE[status] ?? 'badge-muted'}`}>{status}</span>;
}

/** A notice passed with navigate(…, { state: { notice } }) after a create or delete. */
export function RouteNotice() {
  const location = useLocation();
  const navigate = useNavigate();
  const incoming = (location.state as { notice?: string } | null)?.notice;
  const [notice, setNotice] = useState(incoming);
  useEffect(() => {
    if (!incoming) return;
    setNotice(incoming);
    // Said once: a reload of the page does not say it again.
    void navigate({ pathname: location.pathname, search: location.search }, { replace: true, state: null });
  }, [incoming, location.pathname, location.search, navigate]);
  return notice ? <p className="notice" role="status">{notice}</p> : null;
}

/** The section's answer to a caller whose scope or role cannot use a screen. */
export function NotAvailable({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main id="main" className="page">
      <h1>{title}</h1>
      <p className="state state-empty" role="note">{children}</p>
    </main>
  );
}

// --- validation ----------------------------------------------------------------------------------

export const SLUG_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const MAX_CAP = 10_000_000;

export type Errors = Record<string, string>;

export function checkName(name: string, errors: Errors, what: string): void {
  if (!name.trim()) errors.name = `Enter the ${what}'s name.`;
  else if (name.trim().length > 255) errors.name = 'The name can have at most 255 characters.';
}

export function checkSlug(slug: string, errors: Errors): void {
  if (!slug) errors.slug = 'Enter a slug.';
  else if (slug.length > 100) errors.slug = 'The slug can have at most 100 characters.';
  else if (!SLUG_PATTERN.test(slug)) errors.slug = 'Use lowercase letters and digits, in words separated by single dashes (e.g. acme-it).';
}

export function checkEmail(email: string, errors: Errors, field: string): void {
  if (!email.trim()) return;
  if (email.trim().length > 255 || !EMAIL_PATTERN.test(email.trim())) errors[field] = 'Enter a valid e-mail address, e.g. billing@example.com.';
}

/** An optional cap (maxOrganizations, maxDevices): '' → null, else a whole number 0..10,000,000. */
export function parseCap(text: string, errors: Errors, field: string): number | null {
  const value = text.trim();
  if (!value) return null;
  if (!/^\d+$/.test(value) || Number(value) > MAX_CAP) {
    errors[field] = `Enter a whole number from 0 to ${MAX_CAP.toLocaleString('en')}, or leave it empty for no limit.`;
    return null;
  }
  return Number(value);
}

/**
 * A resource's name and slug: the slug follows the name (slugFromName) until it is edited by hand.
 * An existing resource keeps its slug when it is renamed.
 */
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
        <input value={naming.name} maxLength={255} required autoFocus={autoFocus} onChange={(e) => naming.changeName(e.target.value)} />
      </Field>
      <Field label="Slug" error={fieldError('slug')} hint={slugHint}>
        <input value={naming.slug} maxLength={100} required spellCheck={false} autoCapitalize="off" onChange={(e) => naming.changeSlug(e.target.value)} />
      </Field>
    </>
  );
}

/** A slug suggested from a name: lowercase words joined by dashes. */
export function slugFromName(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 100)
    .replace(/-+$/, '');
}

export function capText(value: number | null): string {
  return value === null ? '' : String(value);
}

// --- the server's refusals -----------------------------------------------------------------------

/**
 * The server's message about one body field: a validation error naming it (`body.slug`), or a
 * refusal whose code belongs to that field (a duplicate slug is 409 CONFLICT without a path).
 */
export function serverFieldError(error: ApiError | null, field: string, codes: string[] = []): string | undefined {
  if (!error) return undefined;
  return error.forField(field) ?? (codes.includes(error.code) ? error.message : undefined);
}

/** The refusal when no field of the form took it, to show next to the form's action. */
export function unplacedError(error: ApiError | null, fields: Record<string, string[]>): ApiError | null {
  if (!error) return null;
  for (const [field, codes] of Object.entries(fields)) if (serverFieldError(error, field, codes)) return null;
  return error;
}

/** Days (`<input type="date">`) and the API's timestamps. */
export function isoToDateInput(value: string | null): string {
  return value ? value.slice(0, 10) : '';
}

export function dateInputToIso(value: string): string | null {
  return value ? new Date(`${value}T00:00:00.000Z`).toISOString() : null;
}

export function formatDay(value: string | null): string {
  return value ? value.slice(0, 10) : '—';
}
