// Partner rules shared with other modules.
import { randomBytes } from 'node:crypto';
import type { Queryable } from '../db/database.js';
import * as partners from './partners.repo.js';

/** A URL-safe slug (API.md §4 pattern) from a display name. */
export function slugFromName(name: string): string {
  const base = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 90)
    .replace(/-+$/g, '');
  return base || 'partner';
}

/** Creates a pending partner for self-signup, suffixing the slug when the name's slug is taken. */
export async function createPendingPartner(tx: Queryable, name: string): Promise<partners.PartnerSummary> {
  let slug = slugFromName(name);
  if (await partners.liveSlugExists(tx, slug)) slug = `${slug}-${randomBytes(3).toString('hex')}`;
  return partners.insertPartner(tx, { name, slug, status: 'pending' });
}
