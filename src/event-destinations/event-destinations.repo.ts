// SQL for event destinations, their cursors and their delivery log (migration 0013). Sealed
// secrets are selected only by the sender's and the rotation's statements.
import type { Queryable } from '../db/database.js';
import { queryPage } from '../db/pages.js';

export type DestinationKind = 'webhook' | 'syslog';

export interface DestinationRow {
  id: string;
  org_id: string | null;
  partner_id: string | null;
  name: string;
  kind: DestinationKind;
  url: string;
  filter_actions: string[];
  filter_results: string[];
  ca_certificate: string | null;
  enabled: boolean;
  failing: boolean;
  last_success_at: Date | null;
  last_failure_at: Date | null;
  last_error: string | null;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface DestinationSecrets {
  secret_sealed: string | null;
  previous_secret_sealed: string | null;
  previous_secret_until: Date | null;
}

const COLUMNS = `d.id, d.org_id, d.partner_id, d.name, d.kind, d.url, d.filter_actions, d.filter_results, d.ca_certificate, d.enabled,
  d.failing, d.last_success_at, d.last_failure_at, d.last_error, d.created_by, d.created_at, d.updated_at`;

/**
 * The chains a destination covers that exist now ($1 its organization, $2 its partner, both null:
 * every organization and the platform chain). Creation and the sender both read it.
 */
export const COVERED_CHAINS = `select o.id as chain_id, o.id as org_id from organizations o
   where o.deleted_at is null and (($1::uuid is not null and o.id = $1) or ($2::uuid is not null and o.partner_id = $2) or ($1::uuid is null and $2::uuid is null))
  union all
  select '00000000-0000-0000-0000-000000000000'::uuid, null where $1::uuid is null and $2::uuid is null`;

export interface NewDestination {
  orgId: string | null;
  partnerId: string | null;
  name: string;
  kind: DestinationKind;
  url: string;
  actions: string[];
  results: string[];
  caCertificate: string | null;
  enabled: boolean;
  secretSealed: string | null;
  createdBy: string | null;
}

/**
 * Inserts the destination and its cursors at each covered chain's head, so it receives what is
 * sealed from now on (API.md §9); chains that appear later start at 0. The owner's row is locked
 * first, so concurrent creates count one another against `cap`. 'owner missing' when the
 * organization or partner is gone (or out of the scope's sight), 'limit' when the cap is reached.
 */
export async function insertDestination(tx: Queryable, d: NewDestination, cap: number): Promise<DestinationRow | 'owner missing' | 'limit'> {
  if (d.orgId || d.partnerId) {
    const { rows: owner } = await tx.query(
      d.orgId ? `select 1 from organizations where id = $1 and deleted_at is null for no key update`
        : `select 1 from partners where id = $1 and deleted_at is null for no key update`,
      [d.orgId ?? d.partnerId],
    );
    if (owner.length === 0) return 'owner missing';
  }
  const { rows } = await tx.query<DestinationRow>(
    `with owned as (
       select count(*) as n from event_destinations
        where ($1::uuid is not null and org_id = $1) or ($2::uuid is not null and org_id is null and partner_id = $2)
           or ($1::uuid is null and $2::uuid is null and org_id is null and partner_id is null)
     )
     insert into event_destinations as d (org_id, partner_id, name, kind, url, filter_actions, filter_results, ca_certificate, enabled, secret_sealed, created_by)
     select $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 from owned where owned.n < $12
     returning ${COLUMNS}`,
    [d.orgId, d.partnerId, d.name, d.kind, d.url, d.actions, d.results, d.caCertificate, d.enabled, d.secretSealed, d.createdBy, cap],
  );
  // A statement of its own: the cursors' policy must see the destination row.
  if (rows[0]) {
    await tx.query(
      `insert into event_destination_cursors (destination_id, chain_id, org_id, last_seq)
       select $3, c.chain_id, c.org_id, coalesce(h.last_seq, 0) from (${COVERED_CHAINS}) c left join audit_chains h on h.chain_id = c.chain_id`,
      [d.orgId, d.partnerId, rows[0].id],
    );
  }
  return rows[0] ?? 'limit';
}

export async function findDestination(tx: Queryable, id: string, lock = false): Promise<DestinationRow | null> {
  const { rows } = await tx.query<DestinationRow>(`select ${COLUMNS} from event_destinations d where d.id = $1${lock ? ' for update' : ''}`, [id]);
  return rows[0] ?? null;
}

export async function listDestinations(
  tx: Queryable,
  filter: { orgIds: readonly string[] | null; orgId?: string; partnerId?: string; includePartnerWide: string | null; includePlatform: boolean },
  limit: number,
  offset: number,
  withTotal: boolean,
): Promise<{ rows: DestinationRow[]; total: number | null }> {
  const params: unknown[] = [];
  const add = (v: unknown) => `$${params.push(v)}`;
  const where: string[] = [];
  if (filter.orgId) where.push(`d.org_id = ${add(filter.orgId)}`);
  else if (filter.partnerId) where.push(`d.org_id is null and d.partner_id = ${add(filter.partnerId)}`);
  else {
    const reach: string[] = [];
    reach.push(filter.orgIds ? `d.org_id = any(${add(filter.orgIds)}::uuid[])` : 'd.org_id is not null');
    if (filter.includePartnerWide) reach.push(`d.partner_id = ${add(filter.includePartnerWide)}`);
    else if (filter.orgIds === null) reach.push('d.partner_id is not null');
    if (filter.includePlatform) reach.push('(d.org_id is null and d.partner_id is null)');
    where.push(`(${reach.join(' or ')})`);
  }
  const from = `from event_destinations d where ${where.join(' and ')}`;
  return queryPage<DestinationRow>(tx, {
    rows: `select ${COLUMNS} ${from} order by d.created_at desc, d.id desc limit ${add(limit)} offset ${add(offset)}`,
    count: withTotal ? `select count(*)::int ${from}` : null,
    params,
  });
}

export interface DestinationChange {
  name?: string;
  url?: string;
  actions?: string[];
  results?: string[];
  caCertificate?: string | null;
  enabled?: boolean;
}

/**
 * Applies the change. A destination re-enabled (it was disabled) or pointed at another address
 * starts afresh: not failing, every chain's retries due now. Saving it unchanged, `enabled: true`
 * included, leaves a failing destination failing (API.md §9: only a success or disabling ends it).
 */
export async function updateDestination(tx: Queryable, id: string, c: DestinationChange): Promise<DestinationRow> {
  const { rows: [row] } = await tx.query<DestinationRow & { restarted: boolean }>(
    `update event_destinations d set
        name = coalesce($2, d.name), url = coalesce($3, d.url), filter_actions = coalesce($4, d.filter_actions),
        filter_results = coalesce($5, d.filter_results), ca_certificate = case when $6 then $7 else d.ca_certificate end,
        enabled = coalesce($8, d.enabled), failing = case when r.restarted then false else d.failing end, updated_at = now()
       from (select ($3::text is not null and $3::text is distinct from o.url) or (coalesce($8::boolean, false) and not o.enabled) as restarted
               from event_destinations o where o.id = $1 for update) r
      where d.id = $1 returning ${COLUMNS}, r.restarted`,
    [id, c.name ?? null, c.url ?? null, c.actions ?? null, c.results ?? null, c.caCertificate !== undefined, c.caCertificate ?? null, c.enabled ?? null],
  );
  const { restarted, ...after } = row!;
  if (restarted) {
    await tx.query(`update event_destination_cursors set attempts = 0, next_attempt_at = null, failing_since = null where destination_id = $1`, [id]);
  }
  return after;
}

export async function deleteDestination(tx: Queryable, id: string): Promise<void> {
  await tx.query(`delete from event_destinations where id = $1`, [id]);
}

export async function readSecrets(tx: Queryable, id: string): Promise<DestinationSecrets | null> {
  const { rows } = await tx.query<DestinationSecrets>(
    `select secret_sealed, previous_secret_sealed, previous_secret_until from event_destinations where id = $1`,
    [id],
  );
  return rows[0] ?? null;
}

export async function rotateSecret(tx: Queryable, id: string, sealed: string, previousUntil: Date): Promise<DestinationRow> {
  const { rows } = await tx.query<DestinationRow>(
    `update event_destinations d set previous_secret_sealed = d.secret_sealed, previous_secret_until = $3, secret_sealed = $2, updated_at = now()
      where d.id = $1 returning ${COLUMNS}`,
    [id, sealed, previousUntil],
  );
  return rows[0]!;
}

/** Replay: the chain's cursor moves back to fromSeq - 1 (never forward: nothing is skipped), retries due now. */
export async function rewindCursor(tx: Queryable, destinationId: string, chainId: string, orgId: string | null, fromSeq: number): Promise<void> {
  await tx.query(
    `insert into event_destination_cursors (destination_id, chain_id, org_id, last_seq) values ($1, $2, $3, $4)
     on conflict (destination_id, chain_id) do update
        set last_seq = least(event_destination_cursors.last_seq, excluded.last_seq), attempts = 0, next_attempt_at = null,
            generation = event_destination_cursors.generation + 1`,
    [destinationId, chainId, orgId, fromSeq - 1],
  );
}

export interface DeliveryRow {
  id: string;
  entry_id: string | null;
  org_id: string | null;
  seq: number | null;
  action: string;
  attempt: number;
  outcome: 'delivered' | 'failed';
  response_status: number | null;
  error: string | null;
  duration_ms: number;
  attempted_at: Date;
}

export async function listDeliveries(tx: Queryable, destinationId: string, since: Date, limit: number, offset: number, withTotal: boolean) {
  const from = `from event_deliveries e where e.destination_id = $1 and e.attempted_at >= $2`;
  return queryPage<DeliveryRow>(tx, {
    rows: `select e.id, e.entry_id, e.org_id, e.seq, e.action, e.attempt, e.outcome, e.response_status, e.error, e.duration_ms, e.attempted_at
             ${from} order by e.attempted_at desc, e.seq desc nulls last, e.id desc limit $3 offset $4`,
    count: withTotal ? `select count(*)::int ${from}` : null,
    params: [destinationId, since, limit, offset],
  });
}
