// Verifies a range of one chain by streaming it in seq order, a bounded batch at a time, fetching
// the next batch while the current one is hashed: memory stays flat whatever the chain's length.
// Runs in worker threads that each take one range (verify-worker.ts), or here with each batch
// hashed in a worker (PGlite, whose rows can only be read on the thread that holds the database).
import type { Database, Transaction } from '../db/database.js';
import { withTenant, type TenantScope } from '../db/tenant-scope.js';
import * as repo from './audit.repo.js';
import { checkLink, type BreakReason } from './hash-chain.js';

const BATCH = 5000;

export interface Link {
  seq: number;
  checksum: string;
}

export interface RangeResult {
  checked: number;
  firstSeq: number | null;
  last: Link | null;
  brokenAt: { seq: number; id: string | null; reason: BreakReason | 'missing_rows' | 'below_anchor' } | null;
}

export interface RangeJob {
  chainId: string;
  fromSeq: number;
  /** Last seq to check; null: to the end of the chain. */
  toSeq: number | null;
  /**
   * The link before fromSeq: given (the chain's retention anchor, the last row retention deleted),
   * or 'stored' to read the row at fromSeq - 1.
   */
  previous: Link | null | 'stored';
}

/** How a range is read and hashed; the defaults suit a worker thread reading from PostgreSQL. */
export interface VerifyOptions {
  /** Rows per read. */
  batch?: number;
  /** Hashes a batch elsewhere (a worker thread, off the event loop); by default, here. */
  check?: (orgId: string | null, previous: Link | null, rows: repo.ChainLinkRow[]) => Promise<BatchResult>;
}

export async function verifyRange(db: Database, scope: TenantScope, job: RangeJob, options: VerifyOptions = {}): Promise<RangeResult> {
  const read = <T>(fn: (tx: Transaction) => Promise<T>) => withTenant(db, scope, fn);
  if (job.previous !== null && job.previous !== 'stored') {
    // An anchor stands for rows that are gone: one still stored means the anchor was moved past it.
    const { seq: anchorSeq } = job.previous;
    const survivor = await read((tx) => repo.rowAtOrBelow(tx, job.chainId, anchorSeq));
    if (survivor) return { checked: 0, firstSeq: null, last: null, brokenAt: { seq: survivor.seq, id: survivor.id, reason: 'below_anchor' } };
  }
  let previous: Link | null = job.previous === 'stored' ? await read((tx) => repo.sealedRowAt(tx, job.chainId, job.fromSeq - 1)) : job.previous;
  // org_id is not read: chain_id is derived from it, so a row whose org_id changed is not in this chain.
  const orgId = job.chainId === repo.PLATFORM_CHAIN_ID ? null : job.chainId;
  const batch = options.batch ?? BATCH;
  const fetchAfter = (after: number) => read((tx) => repo.chainLinksAfter(tx, job.chainId, after, job.toSeq, batch));
  let checked = 0;
  let firstSeq: number | null = null;
  let next: Promise<repo.ChainLinkRow[]> | null = fetchAfter(job.fromSeq - 1);
  while (next) {
    const rows: repo.ChainLinkRow[] = await next;
    next = rows.length === batch ? fetchAfter(rows[rows.length - 1]![0]) : null;
    next?.catch(() => {}); // the read ahead must not go unhandled when the check fails
    const outcome = options.check ? await options.check(orgId, previous, rows) : checkBatch(orgId, previous, rows);
    checked += outcome.checked;
    firstSeq ??= outcome.firstSeq;
    previous = outcome.last;
    if (outcome.broken) {
      await next?.catch(() => {});
      const { seq, reason } = outcome.broken;
      const id = await read((tx) => repo.rowIdAt(tx, job.chainId, seq));
      return { checked, firstSeq, last: previous, brokenAt: { seq, id, reason } };
    }
  }
  return { checked, firstSeq, last: checked > 0 ? previous : null, brokenAt: null };
}

/** The row versions of seq spans (afterSeq, toSeq] of a chain, one transaction per span, summed. */
export async function countVersions(db: Database, scope: TenantScope, chainId: string, spans: [number, number][]): Promise<{ rows: number; xminSum: string }> {
  let rows = 0;
  let xminSum = 0n;
  for (const [afterSeq, toSeq] of spans) {
    const counted = await withTenant(db, scope, (tx) => repo.chainRowVersions(tx, chainId, afterSeq, toSeq));
    rows += counted.rows;
    xminSum += BigInt(counted.xminSum);
  }
  return { rows, xminSum: String(xminSum) };
}

/** One batch's outcome: how many rows hold, the last link that holds (`previous` if none), the first break. */
export interface BatchResult {
  checked: number;
  firstSeq: number | null;
  last: Link | null;
  broken: { seq: number; reason: BreakReason } | null;
}

/** Checks rows in seq order after `previous`, up to the first broken link. Pure, for any thread. */
export function checkBatch(orgId: string | null, previous: Link | null, rows: repo.ChainLinkRow[]): BatchResult {
  let checked = 0;
  let firstSeq: number | null = null;
  let last = previous;
  for (const row of rows) {
    const [seq, timestamp, actorType, actorId, actorEmail, action, resourceType, resourceId, resourceName, details, ipAddress, userAgent, result, errorMessage, prevChecksum, checksum] = row;
    const reason = checkLink(last, {
      orgId, seq, timestamp, actorType, actorId, actorEmail, action, resourceType, resourceId, resourceName, details, ipAddress, userAgent,
      result, errorMessage, prevChecksum, checksum,
    });
    if (reason) return { checked, firstSeq, last, broken: { seq, reason } };
    firstSeq ??= seq;
    last = { seq, checksum };
    checked++;
  }
  return { checked, firstSeq, last, broken: null };
}
