// The tenant hierarchy's two existence checks every module needs (keys, enrollment, devices, sites,
// retention), run in the caller's transaction so a request keeps to one pooled connection (DESIGN.md §3).
import type { Queryable } from './database.js';

/**
 * SQL: the row's organization (`column`) is live. A deleted organization is excluded from every
 * query (SPEC "Deletion"), and so are the rows that belong to it (devices, keys).
 */
export const liveOrgOf = (column: string) => `exists (select 1 from organizations o where o.id = ${column} and o.deleted_at is null)`;

/** The organization exists and is not soft-deleted (as far as the transaction's scope can see). */
export async function organizationIsLive(tx: Queryable, orgId: string): Promise<boolean> {
  const { rows } = await tx.query(`select 1 from organizations where id = $1 and deleted_at is null`, [orgId]);
  return rows.length > 0;
}

/** The organization exists, deleted or not (what a foreign key to it needs). */
export async function organizationExists(tx: Queryable, orgId: string): Promise<boolean> {
  const { rows } = await tx.query(`select 1 from organizations where id = $1`, [orgId]);
  return rows.length > 0;
}

/** The site exists and belongs to that organization. */
export async function siteInOrganization(tx: Queryable, siteId: string, orgId: string): Promise<boolean> {
  const { rows } = await tx.query(`select 1 from sites where id = $1 and org_id = $2`, [siteId, orgId]);
  return rows.length > 0;
}
