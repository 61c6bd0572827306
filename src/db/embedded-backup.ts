// The online backup of the embedded database (README, "Backing up the embedded database"). PGlite
// holds DATA_DIR/pglite for the life of the process and no second process may open it, so the
// running service makes the copy itself, on SIGUSR2. The copy is PGlite's own dumpDataDir(): a tar
// of its data directory, the format its loadDataDir option takes and plain `tar -x` restores. It is
// taken between two transactions (database.ts, embeddedDatabaseDump): every transaction committed
// before it is in it, none in progress is, so a change and its audit row are in it together or not
// at all. Opened on the copy, PostgreSQL replays the WAL it carries, as after a power cut.
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { open, readdir, rename, stat, statfs, unlink } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { createGzip } from 'node:zlib';
import { embeddedDatabaseDump, pgliteDirFor } from './database.js';
import { ensurePrivateDir } from './private-files.js';
import { STORAGE_RESERVE_BYTES } from './storage-full.js';

/** The subset of pino the backup logs through. */
export interface BackupLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
  /** pino's: writes out the lines it buffers, then calls back (the service buffers up to 4 KB). */
  flush?(callback?: (err?: Error) => void): void;
}

/**
 * Whoever sent the signal sees the answer now, not after the next 4 KB of request logs. pino skips
 * a flush while a write is under way (and keeps what came after it), so flush again once that ends.
 */
function flushNow(log: BackupLog): void {
  log.flush?.(() => log.flush?.());
}

export interface EmbeddedBackup {
  file: string;
  bytes: number;
  /** The whole backup, from the signal to the renamed, synced file. */
  ms: number;
  /** The copy of the files: waiting for the running transaction, then no transaction runs. */
  dumpMs: number;
}

export const backupsDirFor = (dataDir: string) => path.join(dataDir, 'backups');

const TEMPORARY = /^\.embedded-.*\.tmp$/;

/** 2026-05-04T03:02:01.123Z → 20260504T030201.123Z: sorts by time, no ':' for scp to trip on. */
function fileStamp(at: Date): string {
  return at.toISOString().replace(/[-:]/g, '');
}

async function syncPath(file: string): Promise<void> {
  const handle = await open(file, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Writes DATA_DIR/backups/embedded-<UTC time>.tar.gz (0600; the folder 0700): gzipped to a hidden
 * temporary name, synced, renamed, and the folder synced, so the name only ever shows a complete
 * file. The tarball is built in memory (about the size of DATA_DIR/pglite), compressed after the
 * database is free again. The caller runs one at a time (createEmbeddedBackups).
 */
export async function writeEmbeddedBackup(options: { dataDir: string; dump: () => Promise<Blob>; now?: () => Date; reserveBytes?: number }): Promise<EmbeddedBackup> {
  const started = performance.now();
  const dir = backupsDirFor(options.dataDir);
  ensurePrivateDir(dir);
  // Leftovers of a backup the process did not live to finish: nothing else writes here.
  for (const name of await readdir(dir)) {
    if (TEMPORARY.test(name)) await unlink(path.join(dir, name)).catch(() => {});
  }
  const stamp = fileStamp((options.now ?? (() => new Date()))());
  const file = path.join(dir, `embedded-${stamp}.tar.gz`);
  const temporary = path.join(dir, `.embedded-${stamp}.${randomBytes(4).toString('hex')}.tmp`);
  const tarball = await options.dump();
  const dumpMs = performance.now() - started;
  // The copy shares the disk with the database it copies: it may not eat into the reserve the
  // embedded database keeps so that it never runs out of WAL space (storage-full.ts). Gzip writes
  // at most about the tarball's size, so that much must be free above the reserve.
  const reserve = options.reserveBytes ?? STORAGE_RESERVE_BYTES;
  const fs = await statfs(dir);
  const free = fs.bavail * fs.bsize;
  if (free < tarball.size + reserve) {
    throw new Error(`not enough free space for a backup under ${dir}: it may need ${tarball.size} bytes and the embedded database keeps ${reserve} bytes free, but ${free} are free`);
  }
  try {
    await pipeline(
      Readable.fromWeb(tarball.stream() as NodeReadableStream<Uint8Array>),
      createGzip(),
      createWriteStream(temporary, { flags: 'wx', mode: 0o600 }),
    );
    await syncPath(temporary);
    await rename(temporary, file);
  } catch (err) {
    await unlink(temporary).catch(() => {});
    throw err;
  }
  await syncPath(dir);
  const { size } = await stat(file);
  return { file, bytes: size, ms: performance.now() - started, dumpMs };
}

/**
 * One backup at a time: `run` starts one, or logs and ignores the request while one runs. It never
 * rejects: a failed backup is logged (and its temporary file removed), and the service carries on.
 */
export function createEmbeddedBackups(options: { dataDir: string; dump: () => Promise<Blob>; log: BackupLog; now?: () => Date }) {
  let running = false;
  return {
    async run(): Promise<EmbeddedBackup | null> {
      const { log } = options;
      if (running) {
        log.warn({}, 'embedded database backup requested while one is running: ignored');
        flushNow(log);
        return null;
      }
      running = true;
      log.info({}, 'embedded database backup started');
      flushNow(log);
      try {
        const done = await writeEmbeddedBackup(options);
        log.info(
          { file: done.file, bytes: done.bytes, ms: Math.round(done.ms), dumpMs: Math.round(done.dumpMs) },
          `embedded database backup written: ${done.file} (${done.bytes} bytes, ${Math.round(done.ms)} ms)`,
        );
        return done;
      } catch (err) {
        log.error({ err }, `embedded database backup failed: ${(err as Error).message}`);
        return null;
      } finally {
        running = false;
        flushNow(log);
      }
    },
  };
}

/** What SIGUSR2 does: a backup of the embedded database, or on PostgreSQL a pointer to pg_dump. */
export function backupOnSignal(options: { dataDir: string; embedded: boolean; log: BackupLog }): () => void {
  const { log } = options;
  if (!options.embedded) {
    return () => {
      log.warn({}, 'SIGUSR2 asks for a backup of the embedded database, but the service runs on PostgreSQL (DATABASE_URL): back that up with pg_dump; nothing done');
      flushNow(log);
    };
  }
  const pgliteDir = pgliteDirFor(options.dataDir);
  const backups = createEmbeddedBackups({
    dataDir: options.dataDir,
    log,
    dump: () => {
      const dump = embeddedDatabaseDump(pgliteDir);
      return dump ? dump() : Promise.reject(new Error(`no embedded database is open at ${pgliteDir}`));
    },
  });
  return () => void backups.run();
}
