// The tenancy forms' checks, made as SPEC and the schemas state them before anything is sent, and
// the placing of the server's refusals next to the field they concern.
import type { ApiError } from '../../api/client';

const SLUG_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const MAX_CAP = 10_000_000;

/** A form's problems by field name (`name`, `address.city`). */
export type Errors = Record<string, string>;

export function checkName(name: string, errors: Errors, what: string): void {
  if (!name.trim()) errors.name = `Enter the ${what}'s name.`;
  else if (name.trim().length > 255) errors.name = `The name can have at most 255 characters (now ${name.trim().length}).`;
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

/** A cap as its field's text: empty for no limit. */
export function capText(value: number | null): string {
  return value === null ? '' : String(value);
}

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
