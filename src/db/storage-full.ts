// A full disk. PostgreSQL reports it as SQLSTATE 53100 (disk_full), file writes of our own as
// ENOSPC; either way a write cannot be saved, which clients get as 503 (errors.ts storageFull).
//
// The embedded database needs more than that. Measured with PGlite 0.5.16 on a full tmpfs: a data
// file that cannot grow is an ERROR 53100 and PGlite carries on, but a commit whose WAL needs a new
// 16 MiB segment is a PANIC, after which PGlite's protocol loop spins forever, synchronously
// (electric-sql/pglite#1058): the whole process hangs, /healthz included, until it is killed. So
// below a reserve of free space the embedded database only runs read-only transactions, which write
// no WAL: writes are refused with 503 before PostgreSQL can panic, reads go on, and writes resume
// by themselves once there is space again.
import { statfs } from 'node:fs/promises';

/** Free space under which the embedded database turns read-only: four WAL segments. */
export const STORAGE_RESERVE_BYTES = 64 * 1024 * 1024;
const RECHECK_MS = 1000;

export function isStorageFull(err: unknown): boolean {
  const e = err as { code?: unknown; errno?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  return e.code === '53100' || e.code === 'ENOSPC' || (typeof e.message === 'string' && /No space left on device/.test(e.message));
}

/** SQLSTATE of a write in a read-only transaction: what a write meets while the guard holds. */
export const READ_ONLY_SQL_TRANSACTION = '25006';

export interface StorageGuard {
  /** True while free space under the directory is below the reserve (looked at once a second at most). */
  low(): Promise<boolean>;
  /** A write just failed for lack of space: look again before the next transaction. */
  recheck(): void;
}

export function createStorageGuard(dir: string, reserveBytes = STORAGE_RESERVE_BYTES): StorageGuard {
  let isLow = false;
  let checkedAt = -Infinity;
  let checking: Promise<void> | null = null;
  const check = async () => {
    try {
      const fs = await statfs(dir);
      isLow = fs.bavail * fs.bsize < reserveBytes;
    } catch {
      isLow = false; // cannot tell: let PostgreSQL's own errors speak
    } finally {
      checkedAt = performance.now();
      checking = null;
    }
  };
  return {
    async low() {
      if (performance.now() - checkedAt >= RECHECK_MS) await (checking ??= check());
      return isLow;
    },
    recheck() {
      checkedAt = -Infinity;
    },
  };
}
