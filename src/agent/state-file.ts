// The agent's saved identity. The auth token is a credential shown once at enrollment, so the file
// is written with mode 0600, atomically (temporary file, fsync, rename): a crash mid-write must
// never leave a half-written identity that forces a re-enrollment.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Identity } from './service-client.js';

export const DEFAULT_STATE_PATH = './agent-state.json';

export interface SavedState extends Identity {
  /** The service the identity belongs to (origin + path prefix). */
  server: string;
  enrolledAt: string;
}

export class StateFileError extends Error {
  override name = 'StateFileError';
}

/** The saved state, or null when the file does not exist. */
export async function loadState(file: string): Promise<SavedState | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new StateFileError(`cannot read the state file ${file}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new StateFileError(`the state file ${file} is not valid JSON; delete it to enroll again`);
  }
  const fields = ['agentId', 'deviceId', 'authToken', 'orgId', 'siteId', 'server', 'enrolledAt'] as const;
  const state = parsed as Record<string, unknown>;
  const missing = fields.filter((field) => typeof state?.[field] !== 'string' || state[field] === '');
  if (typeof parsed !== 'object' || parsed === null || missing.length > 0) {
    throw new StateFileError(`the state file ${file} is not an agent identity (missing ${missing.join(', ')}); delete it to enroll again`);
  }
  return Object.fromEntries(fields.map((field) => [field, state[field]])) as unknown as SavedState;
}

export async function saveState(file: string, state: SavedState): Promise<void> {
  const dir = path.dirname(path.resolve(file));
  await mkdir(dir, { recursive: true });
  const temporary = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(temporary, 'wx', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(state, null, 2)}\n`, 'utf8');
    await handle.sync();
  } catch (err) {
    await handle.close();
    await rm(temporary, { force: true });
    throw err;
  }
  await handle.close();
  try {
    await rename(temporary, file);
  } catch (err) {
    await rm(temporary, { force: true });
    throw err;
  }
}
