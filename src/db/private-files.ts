// DATA_DIR holds the embedded database (its WAL carries password hashes), generated secrets, the
// audit signing key and archives: only the service's own user may read or write any of it.
// PGlite writes its files mode 0666 whatever the umask, so the tree is tightened at start-up and
// then every minute (new WAL segments), on top of the 0700 folder that already shuts others out.
import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';

const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

/** Creates the folder (and parents) owner-only, and makes an existing one owner-only. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  chmodSync(dir, DIR_MODE);
}

/** Folders 0700 and files 0600 below `dir`; links are left alone (never followed). */
export function makePrivate(dir: string): void {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return; // gone or unreadable: nothing of ours to tighten
  }
  for (const name of entries) {
    const full = path.join(dir, name);
    let stat;
    try {
      stat = lstatSync(full);
    } catch {
      continue; // removed while walking (a WAL segment recycled)
    }
    if (stat.isSymbolicLink()) continue;
    if (stat.isDirectory()) {
      if ((stat.mode & 0o777) !== DIR_MODE) chmodSync(full, DIR_MODE);
      makePrivate(full);
    } else if ((stat.mode & 0o777) !== FILE_MODE) {
      try {
        chmodSync(full, FILE_MODE);
      } catch {
        // removed between stat and chmod
      }
    }
  }
}

/** Tightens `dir` now and every `intervalMs` until stopped (the timer never holds the process open). */
export function keepPrivate(dir: string, intervalMs = 60_000): { stop(): void } {
  ensurePrivateDir(dir);
  makePrivate(dir);
  const timer = setInterval(() => makePrivate(dir), intervalMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      makePrivate(dir);
    },
  };
}
