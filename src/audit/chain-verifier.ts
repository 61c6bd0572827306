// Verifies a range of one chain by streaming it in seq order, a bounded batch at a time, fetching
// the next batch while the current one is hashed: memory stays flat whatever the chain's length.
// Runs on the main thread, or in worker threads that each take one range (verify-worker.ts).
import type { Database } from '../db/database.js';
import { withTenant, type TenantScope } from '../db/tenant-scope.js';
import * as repo from './audit.repo.js';
import { checkLink, type BreakReason } from './hash-chain.js';
import { toChainFields } from './sealer.js';

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
  let previous: Link | null =
    job.previous === 'stored' ? await withTenant(db, scope, (tx) => repo.sealedRowAt(tx, job.chainId, job.fromSeq - 1)) : job.previous;
  const fetchAfter = (after: number) => withTenant(db, scope, (tx) => repo.sealedRowsAfter(tx, job.chainId, after, job.toSeq, BATCH));
  let checked = 0;
  let firstSeq: number | null = null;
  let next: Promise<repo.ChainRow[]> | null = fetchAfter(job.fromSeq - 1);
  while (next) {
    const rows: repo.ChainRow[] = await next;
    next = rows.length === BATCH ? fetchAfter(rows[rows.length - 1]!.seq!) : null;
    for (const row of rows) {
      const reason = checkLink(previous, { ...toChainFields(row), seq: row.seq!, prevChecksum: row.prev_checksum, checksum: row.checksum! });
      if (reason) {
        await next?.catch(() => {});
        return { checked, firstSeq, last: previous, brokenAt: { seq: row.seq!, id: row.id, reason } };
      }
      firstSeq ??= row.seq!;
      previous = { seq: row.seq!, checksum: row.checksum! };
      checked++;
    }
  }
  return { checked, firstSeq, last: checked > 0 ? previous : null, brokenAt: null };
}
