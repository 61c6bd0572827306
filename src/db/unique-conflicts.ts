// The one place a unique violation (SQLSTATE 23505) becomes a 409: the index names the duplicate,
// so the services need no check-then-insert of their own, and a race between two requests gets the
// same answer as a plain duplicate. pg and PGlite both name the violated index in `constraint`.
import { AppError } from '../errors.js';

// Unique indexes from migrations/*.sql that a client's values can collide with.
const CONFLICT_BY_INDEX = new Map<unknown, string>([
  ['partners_live_slug', 'A partner with this slug already exists'],
  ['organizations_live_slug', 'This partner already has an organization with this slug'],
  ['users_live_email', 'A user with this email already exists'],
  ['user_invitations_open_email', 'An open invitation for this email already exists'],
]);

/** The 409 for a PostgreSQL unique violation; null for any other error. */
export function conflictFor(err: unknown): AppError | null {
  const e = err as { code?: unknown; severity?: unknown; constraint?: unknown } | null;
  if (e?.code !== '23505' || !e.severity) return null;
  const detail = CONFLICT_BY_INDEX.get(e.constraint) ?? 'A resource with these values already exists';
  return new AppError('CONFLICT', detail, { cause: err });
}
