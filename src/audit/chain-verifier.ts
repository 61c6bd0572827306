// Verifies a range of one chain by streaming it in seq order, a bounded batch at a time, fetching
// the next batch while the current one is hashed: memory stays flat whatever the chain's length.
// Runs on the main thread, or in worker threads that each take one range (verify-worker.ts).
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
  brokenAt: { seq: number; id: string | null; reason: BreakReason | 'missing_rows' } | null;
}

export interface RangeJob {
  chainId: string;
  fromSeq: number;
  /** Last seq to check; null: to the end of the chain. */
  toSeq: number | null;
  /** The link before fromSeq: given, or 'stored' to read the row at fromSeq - 1. */
  previous: Link | null | 'stored';
}

export async function verifyRange(db: Database, scope: TenantScope, job: RangeJob): Promise<RangeResult> {
  const read = <T>(fn: (tx: Transaction) => Promise<T>) => withTenant(db, scope, fn);
  let previous: Link | null = job.previous === 'stored' ? await read((tx) => repo.sealedRowAt(tx, job.chainId, job.fromSeq - 1)) : job.previous;
  // org_id is not read: chain_id is derived from it, so a row whose org_id changed is not in this chain.
  const orgId = job.chainId === repo.PLATFORM_CHAIN_ID ? null : job.chainId;
  const fetchAfter = (after: number) => read((tx) => repo.chainLinksAfter(tx, job.chainId, after, job.toSeq, BATCH));
  let checked = 0;
  let firstSeq: number | null = null;
  let next: Promise<repo.ChainLinkRow[]> | null = fetchAfter(job.fromSeq - 1);
  while (next) {
    const rows: repo.ChainLinkRow[] = await next;
    next = rows.length === BATCH ? fetchAfter(rows[rows.length - 1]![0]) : null;
    for (const row of rows) {
      const [seq, timestamp, actorType, actorId, actorEmail, action, resourceType, resourceId, resourceName, details, ipAddress, userAgent, result, errorMessage, prevChecksum, checksum] = row;
      const reason = checkLink(previous, {
        orgId, seq, timestamp, actorType, actorId, actorEmail, action, resourceType, resourceId, resourceName, details, ipAddress, userAgent,
        result, errorMessage, prevChecksum, checksum,
      });
      if (reason) {
        await next?.catch(() => {});
        const id = await read((tx) => repo.rowIdAt(tx, job.chainId, seq));
        return { checked, firstSeq, last: previous, brokenAt: { seq, id, reason } };
      }
      firstSeq ??= seq;
      previous = { seq, checksum };
      checked++;
    }
  }
  return { checked, firstSeq, last: checked > 0 ? previous : null, brokenAt: null };
}
