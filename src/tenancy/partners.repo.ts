// SQL for partners. (The /orgs/partners API arrives with the tenancy issue; sign-up needs the insert now.)
import type { Queryable } from '../db/database.js';

export type PartnerStatus = 'pending' | 'active' | 'suspended' | 'churned';

export interface PartnerSummary {
  id: string;
  name: string;
  slug: string;
  status: PartnerStatus;
}

export async function liveSlugExists(tx: Queryable, slug: string): Promise<boolean> {
  const { rows } = await tx.query(`select 1 from partners where slug = $1 and deleted_at is null`, [slug]);
  return rows.length > 0;
}

export async function insertPartner(tx: Queryable, p: { name: string; slug: string; status: PartnerStatus }): Promise<PartnerSummary> {
  const { rows } = await tx.query<PartnerSummary>(
    `insert into partners (name, slug, status) values ($1, $2, $3) returning id, name, slug, status`,
    [p.name, p.slug, p.status],
  );
  return rows[0]!;
}
